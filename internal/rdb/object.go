package rdb

import (
	"errors"

	"github.com/minikv/minikv/internal/store"
)

// Objects out of the store and into it: the value under a key as Redis
// serializes it (DUMP, and every key of a file), and a decoded Value
// built under a key (RESTORE, and every key a file loads).
//
// A small collection's listpack (or intset) is written as it is: MiniKV
// keeps them in Redis's byte format. A hash's, set's, sorted set's or
// one-node list's listpack, or a set's intset, that fits MiniKV's limits
// is stored as it came; anything else is built element by element
// through the kind's handle, which picks the encoding as a command would
// (a set as Redis 7.2 loads one, Set.PrepareLoad).

// Dump serializes the value under key as DUMP does: the object, sealed
// with the version and CRC. It reports false for a missing key.
func Dump(st *store.Store, key []byte) ([]byte, bool, error) {
	p, _, ok, err := appendObject(nil, st, key, false)
	if !ok || err != nil {
		return nil, ok, err
	}
	return Seal(p), true, nil
}

// appendObject appends the type byte and object of the value under key
// to b (with the key between them when withKey is set, as a file holds
// them), and returns the item it read (its deadline). The kind is read
// first, then the value through its handle; a key that changes kind in
// between is read again.
func appendObject(b []byte, st *store.Store, key []byte, withKey bool) ([]byte, store.Item, bool, error) {
	for {
		it, ok := st.Peek(key)
		if !ok {
			return b, it, false, nil
		}
		p, found, err := appendKind(b, st, key, it, withKey)
		if errors.Is(err, store.ErrWrongType) {
			continue // changed kind since Peek
		}
		if err != nil || !found {
			return b, it, false, err // !found: deleted since Peek
		}
		return p, it, true, nil
	}
}

// appendKind appends the object of the value of kind it.Kind under key
// (after the key when withKey is set).
func appendKind(b []byte, st *store.Store, key []byte, it store.Item, withKey bool) (p []byte, found bool, err error) {
	head := func(typ byte) []byte {
		h := append(b, typ)
		if withKey {
			_, k := store.SplitDBKey(key) // the key as its database names it
			h = AppendString(h, k)
		}
		return h
	}
	switch it.Kind {
	case store.KindString:
		return AppendString(head(typeString), it.Value), true, nil
	case store.KindHash:
		var h store.Hash
		err = st.ViewHash(key, &h, func() error {
			if found = h.Exists(); !found {
				return nil
			}
			if lp := h.HashListpack(); lp != nil {
				p = appendCompact(head, store.KindHash, store.EncodingListpack, lp)
				return nil
			}
			p = AppendLen(head(typeHash), uint64(h.Len()))
			h.Each(func(f, v []byte) bool {
				p = AppendString(AppendString(p, f), v)
				return true
			})
			return nil
		})
	case store.KindSet:
		var s store.Set
		err = st.ViewSet(key, &s, func() error {
			if found = s.Exists(); !found {
				return nil
			}
			if is := s.Intset(); is != nil {
				p = appendCompact(head, store.KindSet, store.EncodingIntset, is)
				return nil
			}
			if lp := s.Listpack(); lp != nil {
				p = appendCompact(head, store.KindSet, store.EncodingListpack, lp)
				return nil
			}
			p = AppendLen(head(typeSet), uint64(s.Len()))
			s.Each(func(m []byte) bool {
				p = AppendString(p, m)
				return true
			})
			return nil
		})
	case store.KindList:
		var l store.List
		err = st.ViewList(key, &l, func() error {
			if found = l.Exists(); found {
				p = appendList(head(typeListQuick2), &l)
			}
			return nil
		})
	case store.KindZSet:
		var z store.ZSet
		err = st.ViewZSet(key, &z, func() error {
			if found = z.Exists(); !found {
				return nil
			}
			if lp := z.Listpack(); lp != nil {
				p = appendCompact(head, store.KindZSet, store.EncodingListpack, lp)
				return nil
			}
			n := z.Len()
			p = AppendLen(head(typeZSet2), uint64(n))
			z.Range(0, n-1, true, func(m []byte, score float64) bool { // from the tail, as Redis writes it
				p = AppendDouble(AppendString(p, m), score)
				return true
			})
			return nil
		})
	case store.KindStream:
		var s store.Stream
		err = st.ViewStream(key, &s, func() error {
			if found = s.Exists(); found {
				p = appendStreamOf(head(streamType), s.Export(), streamType) // stream.go
			}
			return nil
		})
	default:
		return nil, false, errors.New("DUMP of a " + it.Kind.String() + " value is not supported")
	}
	return p, found, err
}

// appendCompact appends the object of a small collection of kind whose
// whole value is lp, a listpack or (EncodingIntset) an intset, after
// head(its type byte): what appendKind writes for it, from the bytes
// alone, so that a snapshot can copy them under the store's lock and
// encode them after (takeSnapshot). A set's listpack is Redis 7.2's
// RDB_TYPE_SET_LISTPACK (RDB version 11).
func appendCompact(head func(typ byte) []byte, kind store.Kind, enc store.Encoding, lp []byte) []byte {
	switch {
	case kind == store.KindHash:
		return AppendString(head(typeHashListpack), lp)
	case kind == store.KindZSet:
		return AppendString(head(typeZSetListpack), lp)
	case kind == store.KindList:
		p := AppendLen(head(typeListQuick2), 1)
		return AppendString(AppendLen(p, quicklistPacked), lp)
	case enc == store.EncodingIntset:
		return AppendString(head(typeSetIntset), lp)
	default:
		return AppendString(head(typeSetListpack), lp)
	}
}

// quicklistNodeBytes is the size of the listpacks a big list is cut
// into: list-max-listpack-size -2, Redis's default (8 KiB).
const quicklistNodeBytes = 8192

// appendList writes a list's RDB_TYPE_LIST_QUICKLIST_2 object after p,
// its head: a small list's listpack as one packed node, a big one cut
// into packed nodes of at most 8 KiB (an element larger than that alone
// in its node).
func appendList(p []byte, l *store.List) []byte {
	if lp := l.Listpack(); lp != nil {
		return appendCompact(func(byte) []byte { return p }, store.KindList, store.EncodingListpack, lp)
	}
	var nodes [][]byte
	var cur []byte
	l.Each(0, false, func(_ int, v []byte) bool {
		if cur != nil && store.ListpackBytes(cur)+len(v)+11 > quicklistNodeBytes {
			nodes = append(nodes, cur)
			cur = nil
		}
		if cur == nil {
			cur = store.ListpackNew()
		}
		cur = store.ListpackAppend(cur, v)
		return true
	})
	if cur != nil {
		nodes = append(nodes, cur)
	}
	p = AppendLen(p, uint64(len(nodes)))
	for _, lp := range nodes {
		p = AppendLen(p, quicklistPacked)
		p = AppendString(p, lp)
	}
	return p
}

// Build stores v under key, which holds nothing, in tx (RESTORE, and a
// file's keys as they load). The caller sets the deadline afterwards
// (tx.SetRestored).
func (v *Value) Build(tx *store.Tx, key []byte) error {
	if v.isChecked {
		tx.RestoreChecked(key, v.checked)
		return nil
	}
	switch v.Kind {
	case store.KindString:
		return tx.PutString(key, v.Str)
	case store.KindHash:
		if v.lp != nil && tx.RestoreListpack(key, store.KindHash, v.lp) {
			return nil
		}
		var h store.Hash
		if err := tx.Hash(key, &h, true); err != nil {
			return err
		}
		for i := 0; i < len(v.elems); i += 2 {
			h.Set(v.elems[i], v.elems[i+1])
		}
		tx.DoneHash(&h)
		return nil
	case store.KindSet:
		if v.lp != nil && tx.RestoreListpack(key, store.KindSet, v.lp) || v.is != nil && tx.RestoreIntset(key, v.is) {
			return nil
		}
		var s store.Set
		if err := tx.Set(key, &s, true); err != nil {
			return err
		}
		s.PrepareLoad(v.elems[0], len(v.elems), v.typ == typeSetListpack)
		for _, m := range v.elems {
			s.Add(m)
		}
		tx.DoneSet(&s)
		return nil
	case store.KindList:
		if v.lp != nil && tx.RestoreListpack(key, store.KindList, v.lp) {
			return nil
		}
		var l store.List
		if err := tx.List(key, &l, true); err != nil {
			return err
		}
		for _, e := range v.elems {
			l.Push(false, e)
		}
		tx.DoneList(&l)
		return nil
	case store.KindZSet:
		if v.lp != nil && tx.RestoreListpack(key, store.KindZSet, v.lp) {
			return nil
		}
		var z store.ZSet
		if err := tx.ZSet(key, &z, true); err != nil {
			return err
		}
		for i, m := range v.elems {
			z.Set(m, v.scores[i])
		}
		tx.DoneZSet(&z)
		return nil
	case store.KindStream:
		return tx.RestoreStream(key, v.Stream)
	default:
		// DecodeValue makes only the six kinds above.
		return errors.New("rdb: a " + v.Kind.String() + " value cannot be built")
	}
}
