package store

import (
	"bytes"
	"time"
)

// Warm-up (durable mode). A durable store starts with nothing in memory
// and answers at once: every read that misses goes to the disk and puts
// the item back (loadLocked). That makes the first seconds after a
// restart slow where Redis, which loads its whole AOF before its first
// reply, is fast once it answers. So a durable store also loads what the
// disk holds back into memory in the background, in key order, until the
// items take warmFill of the memory limit (all of them without a limit),
// while it serves. It evicts nothing (it stops short of the limit) and
// stops at Close.
//
// It reads the disk in batches (Scan) and puts each item back under its
// shard's lock, unless memory holds the key already (a write since the
// start wins). A record the batch read may be older than the disk's by
// then only if the key was written after the batch was read and then
// left memory (deleted, evicted, expired), and every such removal
// counts in its shard's removals: when its shard counted one since the
// batch was read, the key is read again from the disk, as a read that
// missed would read it; a flush is the fence, checked as for any load.
//
// The disk keeps no record of how hot a key was, only the order of writes
// (CAS tokens): the loading order is the keys', not their heat.

const (
	warmFill       = 0.9     // share of the memory limit the warm-up fills
	warmBatch      = 1024    // most keys read per Scan
	warmBatchBytes = 4 << 20 // most record bytes read per Scan
)

// warmRecord is one record of a batch.
type warmRecord struct {
	key, rec       []byte
	keyLen, recLen int
	deadline       int64
}

// warmUp is the background loading; it runs once, from New.
func (s *Store) warmUp() {
	defer s.wg.Done()
	start := time.Now()
	defer func() { s.warmTime.Store(int64(time.Since(start))) }()
	budget := int64(float64(s.limit.Load()) * warmFill)
	if s.limit.Load() == noLimit {
		budget = noLimit
	}
	removals := make([]uint64, len(s.shards))
	var from []byte
	batch := make([]warmRecord, 0, warmBatch)
	var buf, next []byte // the batch's keys and records, one after the other; from's copy
	for {
		for i := range s.shards { // before the Scan: see warmKey
			sh := &s.shards[i]
			s.lock(sh)
			removals[i] = sh.removals
			s.unlock(sh)
		}
		batch, buf = batch[:0], buf[:0]
		full, size := false, 0
		err := s.disk.Scan(from, func(key, rec []byte, deadline int64) bool {
			if len(batch) == warmBatch || size >= warmBatchBytes {
				full = true
				return false
			}
			if from != nil && bytes.Equal(key, from) {
				return true // where the last batch ended: loaded already
			}
			if s.used.Load()+int64(len(key)+len(rec))+ItemOverhead > budget {
				return false
			}
			size += len(key) + len(rec)
			batch = append(batch, warmRecord{keyLen: len(key), recLen: len(rec), deadline: deadline})
			buf = append(append(buf, key...), rec...)
			return true
		})
		if err != nil {
			return // a read error shows on the reads that meet it
		}
		off := 0
		for i := range batch { // buf is final now: slice it
			r := &batch[i]
			r.key = buf[off : off+r.keyLen : off+r.keyLen]
			r.rec = buf[off+r.keyLen : off+r.keyLen+r.recLen : off+r.keyLen+r.recLen]
			off += r.keyLen + r.recLen
		}
		for i := range batch {
			select {
			case <-s.quit:
				return
			default:
			}
			if s.used.Load() >= budget {
				return
			}
			s.warmKey(&batch[i], removals)
		}
		if !full {
			return
		}
		next = append(next[:0], batch[len(batch)-1].key...) // buf is reused
		from, next = next, from
	}
}

// warmKey puts r's item back into memory unless memory holds its key
// already; removals are the shards' counts from before r was read.
func (s *Store) warmKey(r *warmRecord, removals []uint64) {
	clk := s.clock()
	s.pollFlush(&clk)
	h := s.hash(r.key)
	sh := s.shardFor(h)
	s.lock(sh)
	var e entry
	if !sh.findLocked(h, r.key, &e) {
		var ok bool
		if sh.removals == removals[h&s.mask] && len(r.rec) >= diskHeader {
			ok = s.installLocked(sh, h, r.key, r.rec, r.deadline, &clk, &e, true)
		} else {
			ok = s.loadFromDiskLocked(sh, h, r.key, &clk, &e, true)
		}
		if ok {
			s.warmed.Add(1)
		}
	}
	s.assertShardLocked(sh, "warm-up")
	s.unlock(sh)
}
