package store

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sync"
)

// Walks over the keyspace in durable mode.
//
// Every item is on disk (memory holds copies), so SCAN, KEYS, DBSIZE and
// RANDOMKEY read the disk, which keeps keys in order. A SCAN cursor must be
// a number, and a key does not fit in one, so the Store keeps the last key
// of recent walks in a small table and the cursor names its slot:
//
//	| 16 bits: tag of the table slot (never 0) | 48 bits: the key's first 6 bytes |
//
// A step resumes just after the key in the slot. When the slot was reused
// by later walks (more than cursorSlots walks at once) or the server
// restarted, the step resumes at the key's first 6 bytes instead: some
// keys come back twice, which SCAN allows, and none is skipped; such a
// step goes on past the keys of that prefix, so the walk still advances.

const (
	cursorSlots  = 1024
	maxCursorKey = 1024 // longer keys are not kept: their walks resume at the prefix
	cursorPrefix = 6
)

type scanCursors struct {
	mu   sync.Mutex
	tag  uint16 // the last tag handed out
	keys [cursorSlots]struct {
		tag uint16
		key []byte
	}
}

func cursorPrefixOf(key []byte) uint64 {
	var p [8]byte
	copy(p[8-cursorPrefix:], key)
	return binary.BigEndian.Uint64(p[:])
}

// save records key as where the walk stands and returns its cursor.
func (c *scanCursors) save(key []byte) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tag++
	if c.tag == 0 {
		c.tag = 1
	}
	slot := &c.keys[int(c.tag)%cursorSlots]
	slot.tag = c.tag
	slot.key = nil
	if len(key) <= maxCursorKey {
		slot.key = append(slot.key, key...)
	}
	return uint64(c.tag)<<48 | cursorPrefixOf(key)
}

// resume returns where the walk of cursor goes on: from that key on, and
// after is the key itself when it must be skipped (the slot still holds
// it), or nil.
func (c *scanCursors) resume(cursor uint64) (from, after []byte) {
	if cursor == 0 {
		return nil, nil
	}
	tag, prefix := uint16(cursor>>48), cursor&(1<<48-1)
	c.mu.Lock()
	slot := &c.keys[int(tag)%cursorSlots]
	if tag != 0 && slot.tag == tag && slot.key != nil && cursorPrefixOf(slot.key) == prefix {
		key := append([]byte(nil), slot.key...)
		c.mu.Unlock()
		return key, key
	}
	c.mu.Unlock()
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], prefix)
	// Trailing zero bytes may be padding: seeking without them starts at
	// or before every key with this prefix.
	return bytes.TrimRight(p[8-cursorPrefix:], "\x00"), nil
}

// liveRecord reports whether a record the Disk returned holds a live item.
func (s *Store) liveRecord(rec []byte, deadline int64, clk *clock) bool {
	return len(rec) >= diskHeader && binary.LittleEndian.Uint64(rec[5:]) > s.fence.Load() &&
		(deadline == 0 || deadline > clk.now())
}

// scanDisk is ScanKeys in durable mode.
func (s *Store) scanDisk(cursor uint64, count int, fn func(key []byte)) (uint64, error) {
	clk := s.clock()
	s.pollFlush(&clk)
	from, after := s.cursors.resume(cursor)
	// A step resumed at a prefix must end past it, or a walk whose slots
	// keep being lost would never get beyond the keys of one prefix.
	fallback, prefix := cursor != 0 && after == nil, cursor&(1<<48-1)
	n, more := 0, false
	var last []byte
	err := s.diskScan(from, func(key, rec []byte, deadline int64) bool {
		if after != nil && bytes.Equal(key, after) {
			return true
		}
		if n >= count && (!fallback || cursorPrefixOf(last) > prefix) {
			more = true
			return false
		}
		if s.liveRecord(rec, deadline, &clk) {
			fn(key)
			n++
			last = append(last[:0], key...)
		}
		return true
	})
	if err != nil || !more || n == 0 {
		return 0, err
	}
	return s.cursors.save(last), nil
}

// randomDiskKey returns a live key read from the disk at a random point
// (wrapping to the start), or false when the disk holds none.
func (s *Store) randomDiskKey() ([]byte, bool) {
	clk := s.clock()
	var found []byte
	pick := func(key, rec []byte, deadline int64) bool {
		if s.liveRecord(rec, deadline, &clk) {
			found = append([]byte{}, key...)
			return false
		}
		return true
	}
	// Keys are mostly printable: start at a random printable byte pair.
	from := []byte{byte(0x21 + rand.IntN(94)), byte(0x21 + rand.IntN(94))}
	if err := s.diskScan(from, pick); err != nil {
		s.readFailed(err)
		return nil, false
	}
	if found == nil {
		if err := s.diskScan(nil, pick); err != nil {
			s.readFailed(err)
			return nil, false
		}
	}
	return found, found != nil
}
