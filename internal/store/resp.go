package store

// Expires is the number of items that have a deadline (live or not yet
// reclaimed), for the Redis port's INFO keyspace line
// (db0:keys=N,expires=M). It locks one shard at a time.
func (s *Store) Expires() int64 {
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		s.lock(sh)
		for i := range sh.segs {
			n += int64(sh.segs[i].ttl)
		}
		s.unlock(sh)
	}
	return n
}
