package store

import "fmt"

// The store's deep consistency check. verify walks every shard; tests call
// it at rest (checkInvariants). Built with -tags invariants, the store also
// runs verifyShardLocked on the shard an operation touched, before it
// releases the shard's lock (a large shard on a sample of operations), and
// panics on the first broken invariant (invariants_on.go); without the tag
// the hook is an empty function that the compiler removes
// (invariants_off.go), and nothing here is linked into the binary.

// verify checks the accounting, the segments and the index of every shard
// (verifyShardLocked), then that the global byte counter and Stats agree
// with the sum over the shards and that the total is within the limit. It
// locks one shard at a time, so it is exact only when no write runs
// concurrently.
func (s *Store) verify() error {
	var total, items int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		bytes, n, err := s.verifyShardLocked(i, sh)
		sh.mu.Unlock()
		if err != nil {
			return err
		}
		total += bytes
		items += int64(n)
	}
	if got := s.used.Load(); got != total {
		return fmt.Errorf("global byte counter = %d, sum over items = %d", got, total)
	}
	if total > s.limit.Load() && !s.noEvict.Load() {
		// (With NoEvict a collection write that crossed the limit stays;
		// the next writes are refused while Full.)
		return fmt.Errorf("bytes %d above the limit %d", total, s.limit.Load())
	}
	st := s.Stats()
	if st.Bytes != total || st.Items != items {
		return fmt.Errorf("Stats() = {Items:%d Bytes:%d}, want {Items:%d Bytes:%d}", st.Items, st.Bytes, items, total)
	}
	return s.verifyMapped()
}

// verifyMapped checks that the mapped memory (bigmem.go) is exactly what
// the stored objects hold: none leaked, and none left retired at rest.
func (s *Store) verifyMapped() error {
	if s.mem.a == nil {
		return nil
	}
	var live, slots int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, slot := range sh.objs {
			if slot.obj == nil {
				continue
			}
			l, r := objMapped(slot.obj)
			if z, ok := slot.obj.(*bigZSet); ok {
				for _, ch := range z.chunks {
					if ch.slot {
						slots++
					}
				}
				r += int64(len(z.retired)) * zChunkMax
			}
			if r != 0 {
				sh.mu.Unlock()
				return fmt.Errorf("shard %d: an object keeps %d retired mapped bytes at rest", i, r)
			}
			live += l
		}
		if len(sh.reclaim)+len(sh.doomed) != 0 || sh.txDepth != 0 {
			sh.mu.Unlock()
			return fmt.Errorf("shard %d: %d objects wait for a Tx that ended", i, len(sh.reclaim)+len(sh.doomed))
		}
		sh.mu.Unlock()
	}
	// The chunk slab's blocks: every slot is a sorted set's chunk or free.
	if sl := s.mem.slab; sl != nil {
		sl.mu.Lock()
		blocks, free := sl.blocks, int64(len(sl.free))
		sl.mu.Unlock()
		if perBlock := int64(chunkBlock / zChunkMax); slots+free != blocks*perBlock {
			return fmt.Errorf("chunk slab: %d slots in sorted sets and %d free, want %d (%d blocks)", slots, free, blocks*perBlock, blocks)
		}
		live += blocks * chunkBlock
	}
	if got := s.mem.a.Mapped(); got != live {
		return fmt.Errorf("mapped bytes = %d, objects hold %d", got, live)
	}
	return nil
}

// objMapped is the mapped bytes o holds, and those it has retired.
func objMapped(o object) (live, retired int64) {
	switch o := o.(type) {
	case *bigHash:
		return o.t.mapped()
	case *bigSet:
		return o.t.mapped()
	case *bigZSet:
		return o.t.mapped()
	}
	return 0, 0
}

// verifyShardLocked checks shard i, which the caller holds locked: each
// live record is found through the index under its own tag and each slot
// names a live record; segment byte counts, deadline counts and summaries
// agree with a walk over the records; the segment list holds every
// segment once; the index keeps the Robin Hood order; the shard's byte
// count is the exact sum over its items; nextExpiry is at most the
// earliest deadline. It returns the shard's bytes and live items.
func (s *Store) verifyShardLocked(i int, sh *shard) (int64, int, error) {
	var bytes int64
	live := 0
	others := map[byte]int64{} // items per database other than 0
	othersTTL := map[byte]int64{}
	minDeadline := int64(1<<63 - 1)
	inList := make([]bool, len(sh.segs))
	prev := noSeg
	for seg := sh.oldest; seg != noSeg; seg = sh.segs[seg].next {
		if inList[seg] || sh.segs[seg].prev != prev {
			return 0, 0, fmt.Errorf("shard %d: segment list broken at %d", i, seg)
		}
		inList[seg] = true
		prev = seg
	}
	if sh.newest != prev {
		return 0, 0, fmt.Errorf("shard %d: newest = %d, list ends at %d", i, sh.newest, prev)
	}
	var segBytes, dead int64
	var e, f entry
	for j := range sh.segs {
		seg := uint32(j)
		sg := &sh.segs[j]
		if sg.buf == nil {
			if inList[seg] {
				return 0, 0, fmt.Errorf("shard %d: free segment %d in the list", i, j)
			}
			continue
		}
		if !inList[seg] {
			return 0, 0, fmt.Errorf("shard %d: segment %d not in the list", i, j)
		}
		var segLive, ttl uint32
		off := uint32(0)
		for off < sg.used {
			decodeHeader(sg, off, &e)
			e.seg = seg
			off += e.size()
			if e.info&infoDead != 0 {
				continue
			}
			k := sh.key(&e)
			h := s.hash(k)
			if s.shardFor(h) != sh {
				return 0, 0, fmt.Errorf("shard %d: record %q belongs to another shard", i, k)
			}
			if !sh.findLocked(h, k, &f) || f.seg != e.seg || f.off != e.off {
				return 0, 0, fmt.Errorf("shard %d: live record %q at %d/%d not found through the index (found %d/%d)", i, k, e.seg, e.off, f.seg, f.off)
			}
			live++
			if len(k) >= 2 && k[0] == DBMark && k[1] != 0 {
				others[k[1]]++
				if e.deadline != 0 {
					othersTTL[k[1]]++
				}
			}
			segLive += e.size()
			bytes += sh.costOf(&e)
			if e.deadline != 0 {
				ttl++
				minDeadline = min(minDeadline, e.deadline)
				if sg.minDeadline > e.deadline {
					return 0, 0, fmt.Errorf("shard %d: segment %d minDeadline %d above %q's %d", i, j, sg.minDeadline, k, e.deadline)
				}
			}
			if sg.minCAS > e.cas {
				return 0, 0, fmt.Errorf("shard %d: segment %d minCAS %d above %q's %d", i, j, sg.minCAS, k, e.cas)
			}
		}
		if off != sg.used {
			return 0, 0, fmt.Errorf("shard %d: segment %d records end at %d, used %d", i, j, off, sg.used)
		}
		if sg.live != segLive || sg.ttl != ttl {
			return 0, 0, fmt.Errorf("shard %d: segment %d live, ttl = %d, %d; records say %d, %d", i, j, sg.live, sg.ttl, segLive, ttl)
		}
		if sg.big && sg.used != uint32(len(sg.buf)) {
			return 0, 0, fmt.Errorf("shard %d: big segment %d uses %d of %d bytes", i, j, sg.used, len(sg.buf))
		}
		segBytes += int64(len(sg.buf))
		if seg == sh.active {
			dead += int64(sg.used) - int64(sg.live)
		} else {
			dead += int64(len(sg.buf)) - int64(sg.live)
		}
	}
	var othersN int64
	var othersTTLN int64
	for db, n := range others {
		othersN += n
		othersTTLN += othersTTL[db]
		if sh.others == nil || sh.others.keys[db] != n || sh.others.ttl[db] != othersTTL[db] {
			return 0, 0, fmt.Errorf("shard %d: database %d holds %d items, %d with a deadline; counted otherwise", i, db, n, othersTTL[db])
		}
	}
	if othersN != sh.othersN || othersTTLN != sh.othersTTL {
		return 0, 0, fmt.Errorf("shard %d: items of databases other than 0: %d, %d with a deadline; counted %d, %d", i, othersN, othersTTLN, sh.othersN, sh.othersTTL)
	}
	if segBytes != sh.segBytes || dead != sh.dead {
		return 0, 0, fmt.Errorf("shard %d: segBytes, dead = %d, %d; want %d, %d", i, sh.segBytes, sh.dead, segBytes, dead)
	}
	ix := &sh.index
	inIndex := 0
	for j, v := range ix.slots {
		if v == 0 {
			continue
		}
		inIndex++
		seg, off := slotSeg(v), slotOff(v)
		if int(seg) >= len(sh.segs) || off >= sh.segs[seg].used {
			return 0, 0, fmt.Errorf("shard %d: slot %d points at %d/%d, outside the segments", i, j, seg, off)
		}
		decodeHeader(&sh.segs[seg], off, &e)
		e.seg = seg
		if e.info&infoDead != 0 {
			return 0, 0, fmt.Errorf("shard %d: slot %d points at a dead record", i, j)
		}
		if tag := tagOf(s.hash(sh.key(&e))); slotTag(v) != tag {
			return 0, 0, fmt.Errorf("shard %d: %q under tag %x, want %x", i, sh.key(&e), slotTag(v), tag)
		}
		p := j - 1
		if p < 0 {
			p = len(ix.slots) - 1
		}
		if d := ix.dist(j, v); d > 0 && (ix.slots[p] == 0 || ix.dist(p, ix.slots[p])+1 < d) {
			return 0, 0, fmt.Errorf("shard %d: slot %d is %d from home, out of Robin Hood order", i, j, d)
		}
	}
	if inIndex != sh.len() || inIndex != live {
		return 0, 0, fmt.Errorf("shard %d: index holds %d slots, counts %d, %d live records", i, inIndex, sh.len(), live)
	}
	if bytes != sh.bytes {
		return 0, 0, fmt.Errorf("shard %d: bytes = %d, sum over items = %d", i, sh.bytes, bytes)
	}
	if got := sh.nextExpiry.Load(); got > minDeadline {
		return 0, 0, fmt.Errorf("shard %d: nextExpiry = %d, above the earliest deadline %d", i, got, minDeadline)
	}
	return bytes, live, nil
}
