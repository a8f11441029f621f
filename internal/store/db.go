package store

// Databases (Redis's SELECT 0..n) are folded into the key: the store
// itself knows nothing of them, so every operation, eviction, expiry,
// the memory accounting, the durable records and the change feed work on
// a database's keys unchanged. A key of database 0 is stored as it is,
// unless it begins with DBMark; every other key is stored behind two
// bytes, DBMark and the database number:
//
//	database 0, key "k"        ->  "k"             (what db 0 always paid)
//	database 0, key "\xffk"    ->  "\xff\x00\xffk" (escaped: rare)
//	database 3, key "k"        ->  "\xff\x03k"
//
// So the encoding is unambiguous, database 0 pays nothing for it but one
// byte test, and a database holds at most 256 numbers (0..255).
const DBMark = 0xFF

// MaxDBs is how many databases the encoding can name.
const MaxDBs = 256

// ScratchDB is the last number, never a served database: where the RESP
// port's SWAPDB parks a database's keys while it renames the other's,
// with the store held. Its changes are transient, and the replication
// stream leaves them out (the keys' final places are streamed).
const ScratchDB = MaxDBs - 1

// DBKey appends to dst the store's key for key in database db.
func DBKey(dst []byte, db int, key []byte) []byte {
	if db == 0 && (len(key) == 0 || key[0] != DBMark) {
		return append(dst, key...)
	}
	dst = append(dst, DBMark, byte(db))
	return append(dst, key...)
}

// DBKeyNeeded reports whether DBKey(nil, db, key) differs from key.
func DBKeyNeeded(db int, key []byte) bool {
	return db != 0 || len(key) > 0 && key[0] == DBMark
}

// SplitDBKey returns the database and the key a store's key k names.
// A key of the form DBMark with nothing after it is database 0's.
func SplitDBKey(k []byte) (db int, key []byte) {
	if len(k) < 2 || k[0] != DBMark {
		return 0, k
	}
	return int(k[1]), k[2:]
}

// InDB reports whether the store's key k is of database db.
func InDB(k []byte, db int) bool {
	if len(k) < 2 || k[0] != DBMark {
		return db == 0
	}
	return int(k[1]) == db
}

// DBCounts are the items of each database and how many of them have a
// deadline (Redis's DBSIZE and INFO keyspace lines).
type DBCounts struct {
	Items, Expires [MaxDBs]int64
}

// dbCounts are a shard's items of each database other than 0, and how
// many of them have a deadline (records with one: the segments' ttl).
type dbCounts struct{ keys, ttl [MaxDBs]int64 }

// countsLocked returns sh's counts of other databases, made at the first.
func (sh *shard) countsLocked() *dbCounts {
	if sh.others == nil {
		sh.others = new(dbCounts)
	}
	return sh.others
}

// otherDB is the database the store's key names, 0 for database 0.
func otherDB(key []byte) byte {
	if len(key) < 2 || key[0] != DBMark {
		return 0
	}
	return key[1]
}

// countDBLocked adds d to the count of key's database in sh, when that
// is not database 0 (whose count is the rest of the shard's).
func (sh *shard) countDBLocked(key []byte, d int64) {
	if db := otherDB(key); db != 0 {
		sh.countsLocked().keys[db] += d
		sh.othersN += d
	}
}

// countTTLLocked adds d to the count of records with a deadline of key's
// database in sh, when that is not database 0.
func (sh *shard) countTTLLocked(key []byte, d int64) {
	if db := otherDB(key); db != 0 {
		sh.countsLocked().ttl[db] += d
		sh.othersTTL += d
	}
}

// CountDB counts the live items of database db (Redis's DBSIZE). In
// memory mode it reads each shard's counts, and walks only a shard that
// may hold an item expired or flushed and not yet reclaimed (the sweeper
// leaves few): O(shards) rather than O(items). In durable mode it walks
// the disk, as CountDBs does.
func (s *Store) CountDB(db int) (int64, error) {
	if s.disk != nil {
		c, err := s.CountDBs()
		return c.Items[db], err
	}
	return s.countDBMem(db), nil
}

func (s *Store) countDBMem(db int) int64 {
	clk := s.clock()
	s.pollFlush(&clk)
	now, fence := clk.now(), s.fence.Load()
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.mayHoldDead(now, fence) {
			s.ScanItems(i, func(key []byte, _ Item) bool {
				if InDB(key, db) {
					n++
				}
				return true
			})
			continue
		}
		s.lock(sh)
		switch {
		case db == 0:
			n += int64(sh.len()) - sh.othersN
		case sh.others != nil:
			n += sh.others.keys[db]
		}
		s.unlock(sh)
	}
	return n
}

// CountDBs counts the live items of every database and those with a
// deadline (INFO keyspace). In memory mode it reads each shard's counts,
// walking only a shard that may hold an item expired or flushed and not
// yet reclaimed, as CountDB does; in durable mode it walks the disk, as
// Count does.
func (s *Store) CountDBs() (c DBCounts, err error) {
	if s.disk == nil {
		clk := s.clock()
		s.pollFlush(&clk)
		now, fence := clk.now(), s.fence.Load()
		for i := range s.shards {
			sh := &s.shards[i]
			if sh.mayHoldDead(now, fence) {
				s.ScanItems(i, func(key []byte, it Item) bool {
					db, _ := SplitDBKey(key)
					c.Items[db]++
					if it.Deadline != 0 {
						c.Expires[db]++
					}
					return true
				})
				continue
			}
			s.lock(sh)
			var ttl int64
			for j := range sh.segs {
				ttl += int64(sh.segs[j].ttl)
			}
			c.Items[0] += int64(sh.len()) - sh.othersN
			c.Expires[0] += ttl - sh.othersTTL
			if o := sh.others; o != nil {
				for db := 1; db < MaxDBs; db++ {
					c.Items[db] += o.keys[db]
					c.Expires[db] += o.ttl[db]
				}
			}
			s.unlock(sh)
		}
		return c, nil
	}
	if s.disk != nil {
		clk := s.clock()
		s.pollFlush(&clk)
		err = s.diskScan(nil, func(key, rec []byte, deadline int64) bool {
			if s.liveRecord(rec, deadline, &clk) {
				db, _ := SplitDBKey(key)
				c.Items[db]++
				if deadline != 0 {
					c.Expires[db]++
				}
			}
			return true
		})
		return c, err
	}
	for i := range s.shards {
		s.ScanItems(i, func(key []byte, it Item) bool {
			db, _ := SplitDBKey(key)
			c.Items[db]++
			if it.Deadline != 0 {
				c.Expires[db]++
			}
			return true
		})
	}
	return c, nil
}

// DBKeys calls fn with the key (as the database names it, without the
// database's prefix) of every live item of database db, under the rules
// of Keys.
func (s *Store) DBKeys(db int, fn func(key []byte)) error {
	return s.Keys(func(k []byte) {
		if InDB(k, db) {
			_, key := SplitDBKey(k)
			fn(key)
		}
	})
}
