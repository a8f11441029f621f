package store

import "math/rand/v2"

// Hash is a hash value, as the function given to Store.UpdateHash or
// ViewHash sees it with the key's shard locked. Slices it returns alias
// the store's memory or the handle's and are valid until the next call on
// the handle and never after the function returns; copy what must last.
//
// A small hash is a listpack of field, value, field, value, ... in
// insertion order, as Redis keeps it; one with more than HashEntries
// fields, or a field or value longer than HashValue bytes, is a table
// (table.go).
type Hash struct{ c coll }

// bigHash is a big hash's object.
type bigHash struct{ t *table }

func (b *bigHash) size() int64                { return b.t.size() }
func (b *bigHash) len() int                   { return b.t.n }
func (b *bigHash) appendFlat(d []byte) []byte { return b.t.appendFlat(d) }
func (b *bigHash) reclaim()                   { b.t.reclaim() }
func (b *bigHash) free()                      { b.t.free() }

// UpdateHash runs fn with the hash under key for reading and writing; see
// collection for the rules (ErrWrongType, empty means absent, the new CAS
// and deadline).
func (s *Store) UpdateHash(key []byte, h *Hash, fn func() error) error {
	return s.collection(key, KindHash, true, &h.c, fn)
}

// ViewHash runs fn with the hash under key for reading only; it records a
// read of the key.
func (s *Store) ViewHash(key []byte, h *Hash, fn func() error) error {
	return s.collection(key, KindHash, false, &h.c, fn)
}

// Exists reports whether the key held a hash when the call began.
func (h *Hash) Exists() bool { return h.c.found }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.c.obj != nil {
		return h.c.obj.len()
	}
	return h.c.length() / 2 // field, value, ...
}

func (h *Hash) table() *table {
	if h.c.obj == nil {
		return nil
	}
	return h.c.obj.(*bigHash).t
}

// lpFind returns the offset of field's entry in the listpack, or -1.
func lpFindField(lp []byte, field []byte) int {
	if lp == nil {
		return -1
	}
	for p := lpFirst(lp); p >= 0; {
		if lpGet(lp, p).equal(field) {
			return p
		}
		p = lpNext(lp, p) // the value
		p = lpNext(lp, p)
	}
	return -1
}

// Get returns field's value, valid until the next call on h.
func (h *Hash) Get(field []byte) ([]byte, bool) {
	return h.Value(field, h.c.num[:0])
}

// Value returns field's value: one stored as an integer is appended to
// dst in its string form, any other aliases the hash's memory, never h,
// so a reply can be written from it without moving the handle to the
// heap (HGET allocates nothing).
func (h *Hash) Value(field, dst []byte) ([]byte, bool) {
	if t := h.table(); t != nil {
		return t.get(field)
	}
	p := lpFindField(h.c.lp, field)
	if p < 0 {
		return nil, false
	}
	en := lpGet(h.c.lp, lpNext(h.c.lp, p))
	if en.Str != nil {
		return en.Str, true
	}
	return en.appendTo(dst), true
}

// Set stores field's value and reports whether the field is new.
func (h *Hash) Set(field, value []byte) bool {
	u := h.c.unrecorded
	isNew := h.set(field, value)
	h.c.unrecorded = u
	h.c.record("HSET", field, value)
	return isNew
}

func (h *Hash) set(field, value []byte) bool {
	c := &h.c
	if !c.write {
		panic("store: Hash.Set in ViewHash")
	}
	if t := h.table(); t != nil {
		c.dirty, c.unrecorded = true, true
		return t.set(field, value)
	}
	s := c.s
	vmax := s.lim.hashValue.Load()
	p := lpFindField(c.lp, field)
	if int64(len(field)) > vmax || int64(len(value)) > vmax || p < 0 && int64(h.Len()+1) > s.lim.hashEntries.Load() {
		h.toTable().set(field, value)
		return p < 0
	}
	c.own()
	if p >= 0 {
		c.lp = lpReplace(c.lp, lpNext(c.lp, p), value)
	} else {
		c.lp = lpAppend(lpAppend(c.lp, field), value)
	}
	c.keep()
	return p < 0
}

// toTable turns the listpack into a table.
func (h *Hash) toTable() *table {
	c := &h.c
	n := h.Len()
	t := newTable(&c.s.mem, c.sh.seed, n+1)
	if c.lp != nil {
		for p := lpFirst(c.lp); p >= 0; {
			f := lpGet(c.lp, p).appendTo(c.fnum[:0])
			p = lpNext(c.lp, p)
			t.set(f, c.element(lpGet(c.lp, p)))
			p = lpNext(c.lp, p)
		}
	}
	c.obj, c.enc, c.lp, c.dirty, c.unrecorded = &bigHash{t: t}, encBig, nil, true, true
	return t
}

// Delete removes field and reports whether it was there.
func (h *Hash) Delete(field []byte) bool {
	u := h.c.unrecorded
	if !h.del(field) {
		return false
	}
	h.c.unrecorded = u
	h.c.record("HDEL", field)
	return true
}

func (h *Hash) del(field []byte) bool {
	c := &h.c
	if t := h.table(); t != nil {
		if t.del(field) {
			c.dirty, c.unrecorded = true, true
			return true
		}
		return false
	}
	p := lpFindField(c.lp, field)
	if p < 0 {
		return false
	}
	c.own() // a copy at the same offsets
	c.lp = lpDelete(c.lp, lpNext(c.lp, p))
	c.lp = lpDelete(c.lp, p)
	return true
}

// Each calls fn for every field and value until fn returns false: in
// insertion order for a small hash, in table order for a big one. fn must
// not change the hash.
func (h *Hash) Each(fn func(field, value []byte) bool) {
	if t := h.table(); t != nil {
		t.each(fn)
		return
	}
	lp := h.c.lp
	if lp == nil {
		return
	}
	for p := lpFirst(lp); p >= 0; {
		f := lpGet(lp, p).appendTo(h.c.fnum[:0])
		p = lpNext(lp, p)
		if !fn(f, h.c.element(lpGet(lp, p))) {
			return
		}
		p = lpNext(lp, p)
	}
}

// Scan calls fn for a batch of about count fields from cursor on and
// returns the cursor of the next batch, 0 at the end (HSCAN). A small
// hash is given whole in one batch, as Redis does.
func (h *Hash) Scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if t := h.table(); t != nil {
		return t.scan(cursor, count, fn)
	}
	h.Each(func(f, v []byte) bool { fn(f, v); return true })
	return 0
}

// Random returns a field and its value chosen uniformly at random; the
// hash must not be empty.
func (h *Hash) Random() (field, value []byte) {
	if t := h.table(); t != nil {
		for {
			if f, v, ok := t.at(rand.IntN(len(t.slots))); ok {
				return f, v
			}
		}
	}
	return h.At(rand.IntN(h.Len()))
}

// At returns the i-th field of a small hash in insertion order, or of a
// big one in table order; i must be below Len. It walks to it.
func (h *Hash) At(i int) (field, value []byte) {
	if t := h.table(); t != nil {
		h.Each(func(f, v []byte) bool {
			if i == 0 {
				field, value = f, v
				return false
			}
			i--
			return true
		})
		return field, value
	}
	lp := h.c.lp
	p := lpFirst(lp)
	for ; i > 0; i-- {
		p = lpNext(lp, lpNext(lp, p))
	}
	field = lpGet(lp, p).appendTo(nil)
	return field, h.c.element(lpGet(lp, lpNext(lp, p)))
}

// Encoding is the encoding's name in OBJECT ENCODING: listpack or
// hashtable, as Redis names them.
func (h *Hash) Encoding() string {
	if h.c.obj != nil {
		return "hashtable"
	}
	return "listpack"
}
