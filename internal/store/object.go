package store

import "hash/maphash"

// Objects: collections too large to keep as one block of bytes. A record
// whose encoding is encBig holds, as its value, the 4-byte number of a
// slot in its shard's object table; the slot holds the structure (a big
// hash's table, ...) and the bytes charged for it. The record stays the
// item for everything else (index, deadline, CAS, eviction walk,
// compaction, which copies the number along), and the object lives and
// dies with it: removing or replacing the record frees the slot.
//
// The structures are built of a few large pointer-free slices, so a
// million-field hash is a handful of objects for the collector, and an
// object's size is the capacity of those slices: what it is charged
// is what it holds.

// object is a big collection's structure.
type object interface {
	// size is the bytes the structure holds.
	size() int64
	// len is the number of elements.
	len() int
	// appendFlat appends the flat encoding persistence writes (flat.go).
	appendFlat(b []byte) []byte
	// reclaim frees the mapped slices the structure replaced during the
	// call that just ended (bigmem.go).
	reclaim()
	// free frees all its mapped memory: it was dropped, and no handle
	// can reach it. The object must not be used afterwards.
	free()
}

// objSlot is one entry of a shard's object table.
type objSlot struct {
	obj     object
	charged int64 // bytes counted in sh.bytes and Store.used for obj
}

// costOf is what e is charged: its record and, when it is big, its object.
func (sh *shard) costOf(e *entry) int64 {
	c := e.cost()
	if e.isBig() {
		c += sh.objs[sh.objID(e)].charged
	}
	return c
}

// object returns the structure a big record names.
func (sh *shard) object(e *entry) object {
	return sh.objs[sh.objID(e)].obj
}

// newObjLocked puts o in a free slot, charged at charged bytes (which the
// caller has counted), and returns the slot's number.
func (sh *shard) newObjLocked(o object, charged int64) uint32 {
	var id uint32
	if n := len(sh.freeObjs); n > 0 {
		id = sh.freeObjs[n-1]
		sh.freeObjs = sh.freeObjs[:n-1]
	} else {
		id = uint32(len(sh.objs))
		sh.objs = append(sh.objs, objSlot{})
	}
	sh.objs[id] = objSlot{obj: o, charged: charged}
	return id
}

// freeObjLocked empties slot id and frees its object (unless it moved to
// another record: RENAME); its charge is the caller's to settle.
func (sh *shard) freeObjLocked(id uint32) {
	if o := sh.objs[id].obj; o != nil {
		sh.freeObjectLocked(o)
	}
	sh.objs[id] = objSlot{}
	sh.freeObjs = append(sh.freeObjs, id)
}

// detachObjLocked takes e's object out of its slot without freeing it,
// for a record that hands it to another (RENAME); the slot and its charge
// go when e is dropped.
func (sh *shard) detachObjLocked(e *entry) object {
	slot := &sh.objs[sh.objID(e)]
	o := slot.obj
	slot.obj = nil
	return o
}

// decodeFlat is decodeFlat for the Store: a list is compressed to its
// list-compress-depth.
func (s *Store) decodeFlat(seed maphash.Seed, k Kind, b []byte) (object, error) {
	o, err := decodeFlat(&s.mem, seed, k, b)
	if q, ok := o.(*quicklist); ok && err == nil {
		q.setDepth(s.lim.listCompressDepth.Load())
		q.reclaim() // the buffer it compressed through
	}
	return o, err
}

// decodeFlat rebuilds a big collection of kind k from the flat encoding
// persistence wrote (appendFlat), checking it: the bytes come from disk.
func decodeFlat(m *bigMem, seed maphash.Seed, k Kind, b []byte) (object, error) {
	switch k {
	case KindHash:
		t, err := tableFromFlat(m, seed, b)
		if err != nil {
			return nil, err
		}
		return &bigHash{t: t}, nil
	case KindSet:
		t, err := tableFromFlat(m, seed, b)
		if err != nil {
			return nil, err
		}
		return setFromFlat(t)
	case KindZSet:
		return zsetFromFlat(m, seed, b)
	case KindList:
		return quicklistFromFlat(b)
	case KindStream:
		return streamFromFlat(b)
	}
	return nil, errFlat
}
