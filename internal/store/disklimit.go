package store

import (
	"encoding/binary"
	"time"
)

// The disk limit (Config.DiskLimit) bounds what durable mode keeps on disk.
//
// A loop reads the Disk's size every diskCheckInterval. Over the limit, it
// trims the disk down to diskLowWater of it, in two steps:
//
//  1. Compact: overwritten versions, expired records and flushed ones go
//     first, since they cost no live item.
//  2. If that is not enough, the least recently written items go. CAS
//     tokens are handed out in write order, so an item's token is its write
//     time: one walk over the disk sums the bytes of live records by token
//     range, the fence is raised to the token below which enough bytes lie
//     (hiding those items in memory and on disk at once, as a flush of
//     everything written up to then would), and a second compaction drops
//     them for good. Each one counts as a disk eviction (deadRecord).
//
// The limit is a bound, not a size the disk stays at: between two checks
// writes go on, and a compaction needs room for its output until its
// inputs are deleted.

const (
	diskCheckInterval = time.Second
	diskLowWater      = 0.9 // trims stop at this share of the limit
	trimBuckets       = 4096
)

// diskLoop checks the disk limit until Close.
func (s *Store) diskLoop() {
	defer s.wg.Done()
	t := time.NewTicker(diskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if s.disk.Usage().Bytes > s.ds.limit {
				_ = s.TrimDisk() // an error is the Disk's, seen by the next Sync
			}
		}
	}
}

// TrimDisk brings the disk under the low-water mark of the limit as the
// loop does when the disk goes over it (see above). Without a Disk or a
// limit it does nothing.
func (s *Store) TrimDisk() error {
	if s.disk == nil || s.ds.limit <= 0 {
		return nil
	}
	s.ds.trims.Add(1)
	if err := s.disk.Compact(); err != nil {
		return err
	}
	low := int64(float64(s.ds.limit) * diskLowWater)
	used := s.disk.Usage().Bytes
	if used <= low {
		return nil
	}
	fence, err := s.trimFence(used, low)
	if err != nil || fence == 0 {
		return err
	}
	s.flushMu.Lock()
	if fence > s.fence.Load() {
		s.fence.Store(fence)
		s.saveState()
	}
	s.flushMu.Unlock()
	return s.disk.Compact()
}

// trimFence walks the disk and returns the token at or below which the
// oldest live records hold the bytes that must go for the disk to shrink
// from used to low, or 0 when nothing is live.
func (s *Store) trimFence(used, low int64) (uint64, error) {
	lo, hi := s.fence.Load()+1, s.cas.Load()
	if hi < lo {
		return 0, nil
	}
	width := (hi-lo)/trimBuckets + 1
	var buckets [trimBuckets]int64
	var live int64
	clk := s.clock()
	err := s.diskScan(nil, func(key, rec []byte, deadline int64) bool {
		if len(rec) < diskHeader {
			return true
		}
		c := binary.LittleEndian.Uint64(rec[5:])
		if c < lo || deadline != 0 && deadline <= clk.now() {
			return true
		}
		n := int64(len(key) + len(rec))
		live += n
		buckets[min((c-lo)/width, trimBuckets-1)] += n
		return true
	})
	if err != nil || live == 0 {
		return 0, err
	}
	// What is on disk beyond the records (keys' internal parts, block and
	// index overhead) shrinks with them.
	need := float64(used-low) * float64(live) / float64(used)
	var sum int64
	for i, b := range buckets {
		sum += b
		if float64(sum) >= need {
			return min(lo+uint64(i+1)*width-1, hi), nil
		}
	}
	return hi, nil
}
