package durable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// Patches: a large record changed in a small part (an XADD to a long
// stream) is written as the change of the key's last full record, its
// base (store.Patch), not whole again. The engine holds the base under
// 'k'+key as always and the key's one patch, relative to that base,
// under 'p'+key:
//
//	head | tail | baseHead | u32 len(head) | u32 len(baseHead)
//	     | u64 keepOff | u64 keepLen | u64 baseLen | u8 patchVersion
//
// so the record the store reads back is head, base[keepOff:][:keepLen],
// tail. A big hash's, set's or sorted set's patch may be a delta instead (store.Patch's
// Delta, patchDelta):
//
//	head | delta | baseHead | u32 len(head) | u32 len(baseHead)
//	     | u64 len(delta) | u64 0 | u64 baseLen | u8 patchDelta
//
// and the record is what store.MergeDelta makes of the base, head and
// delta. A full Write of a key that may have a patch queues the patch's
// delete in the same critical section, so the same batch carries both
// and no crash can pair a base with a patch written for another. The
// patch begins with its head, which begins as the full record would:
// the store's rule for compactions (Forget), which reads a record's
// first bytes, reads a patch as the record it stands for.
//
// patched holds every key that may have a patch: the keys patched since
// Open and those with a patch on disk at Open. It never drops a key
// before the next Open (a full write's batch may fail, leaving the old
// base and patch on disk for a read to combine), so a read of one of
// these keys costs a second lookup, and a read of any other key none.
// The store patches only large records, so the set stays small.

const (
	prefixPatch  = 'p'
	patchTrailer = 4 + 4 + 8 + 8 + 8 + 1
	patchVersion = 1 // head, a run of the base, tail
	patchDelta   = 2 // head and a delta of the base's entries
)

// errBadPatch is a read's error for a patch that does not fit its base.
var errBadPatch = errors.New("durable: a patch does not fit its base record")

// patchSet is the keys that may have a patch, with the first bytes of
// each one's newest record (base or patch), which compactions ask the
// store's rule about in place of the base's own.
type patchSet struct {
	mu   sync.RWMutex
	keys map[string]patchHead
}

// patchHead is a record's first bytes: more than the store's rule reads
// (its header). Held by value, so a reader's copy never changes.
type patchHead struct {
	b [32]byte
	n uint8
}

func (p *patchSet) has(key []byte) bool {
	p.mu.RLock()
	_, ok := p.keys[string(key)]
	p.mu.RUnlock()
	return ok
}

// latest returns the newest record's first bytes for key, if patched.
func (p *patchSet) latest(key []byte) (patchHead, bool) {
	p.mu.RLock()
	h, ok := p.keys[string(key)]
	p.mu.RUnlock()
	return h, ok
}

// note records head as key's newest record's first bytes, adding key
// when add.
func (p *patchSet) note(key, head []byte, add bool) {
	p.mu.Lock()
	if _, ok := p.keys[string(key)]; ok || add {
		if p.keys == nil {
			p.keys = make(map[string]patchHead)
		}
		var h patchHead
		h.n = uint8(copy(h.b[:], head))
		p.keys[string(key)] = h
	}
	p.mu.Unlock()
}

// WritePatch queues p as key's record, expiring at deadline: the change
// of the key's base, its last full record. It copies what it needs.
func (l *Log) WritePatch(key []byte, p *store.Patch, deadline int64) (replaced bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		// Failed (or closed): as queue does.
		if l.err != ErrClosed {
			l.loseLocked(key)
		}
		return false
	}
	if l.deferred == nil {
		l.deferred = make(map[string]queuedRec)
	}
	d, replaced := l.deferred[string(key)]
	d.rec = appendPatch(d.rec[:0], p)
	d.deadline = deadline
	l.deferred[string(key)] = d
	l.patches.note(key, d.rec, true)
	l.queued.Add(1)
	return replaced
}

// Deferred patches. A patch carries everything changed since its base, so
// a key's newer patch makes its older one useless; a pipeline of 16
// HSETs to one big hash would otherwise put 16 growing deltas in the
// batch, each written to the log and the memtable. So the Log keeps a
// patch aside until the batch is taken, the newest one of each key
// replacing the one before (WritePatch), and puts them in the batch then
// (batchDeferredLocked): each key's patch is written once per batch. A
// read of the patch finds it aside first. A whole write or
// delete of the key drops it (it is of the old base; the delete of the
// key's patch goes in the batch as before), and a disk failure counts
// its key as lost, as it does the keys of the batch.

// batchDeferredLocked puts the deferred patches in the pending batch.
// l.mu is held.
func (l *Log) batchDeferredLocked() {
	for key, d := range l.deferred {
		k := append(append(l.keyBuf[:0], prefixPatch), key...)
		l.keyBuf = k
		if d.deadline != 0 {
			l.pending.PutExpiring(k, d.rec, time.UnixMilli(d.deadline))
		} else {
			l.pending.Put(k, d.rec)
		}
		l.pendRecs.put(k, d.rec, d.deadline)
	}
	clear(l.deferred)
}

// appendPatch appends p's record to b.
func appendPatch(b []byte, p *store.Patch) []byte {
	// A delta's trailer holds its length where a run's has keepOff, and
	// 0 for keepLen.
	mid, x, y, version := p.Tail, uint64(p.KeepOff), uint64(p.KeepLen), byte(patchVersion)
	if p.Delta != nil {
		mid, x, y, version = p.Delta, uint64(len(p.Delta)), 0, patchDelta
	}
	b = append(b, p.Head...)
	b = append(b, mid...)
	b = append(b, p.BaseHead...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Head)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.BaseHead)))
	b = binary.LittleEndian.AppendUint64(b, x)
	b = binary.LittleEndian.AppendUint64(b, y)
	b = binary.LittleEndian.AppendUint64(b, uint64(p.BaseLen))
	return append(b, version)
}

// applyPatch returns the record patch p makes of base.
func applyPatch(base, p []byte) ([]byte, error) {
	if len(p) >= patchTrailer && p[len(p)-1] == patchDelta {
		return applyDelta(base, p)
	}
	if len(p) < patchTrailer || p[len(p)-1] != patchVersion {
		return nil, errBadPatch
	}
	t := p[len(p)-patchTrailer:]
	headLen := uint64(binary.LittleEndian.Uint32(t))
	baseHeadLen := uint64(binary.LittleEndian.Uint32(t[4:]))
	keepOff := binary.LittleEndian.Uint64(t[8:])
	keepLen := binary.LittleEndian.Uint64(t[16:])
	baseLen := binary.LittleEndian.Uint64(t[24:])
	body := p[:len(p)-patchTrailer]
	if headLen+baseHeadLen > uint64(len(body)) || baseLen != uint64(len(base)) ||
		keepOff > baseLen || keepLen > baseLen-keepOff || baseHeadLen > baseLen {
		return nil, errBadPatch
	}
	tailEnd := uint64(len(body)) - baseHeadLen
	if !bytes.Equal(body[tailEnd:], base[:baseHeadLen]) {
		return nil, errBadPatch
	}
	out := make([]byte, 0, headLen+keepLen+tailEnd-headLen)
	out = append(out, body[:headLen]...)
	out = append(out, base[keepOff:keepOff+keepLen]...)
	return append(out, body[headLen:tailEnd]...), nil
}

// applyDelta is applyPatch for a delta (patchDelta).
func applyDelta(base, p []byte) ([]byte, error) {
	t := p[len(p)-patchTrailer:]
	headLen := uint64(binary.LittleEndian.Uint32(t))
	baseHeadLen := uint64(binary.LittleEndian.Uint32(t[4:]))
	deltaLen := binary.LittleEndian.Uint64(t[8:])
	baseLen := binary.LittleEndian.Uint64(t[24:])
	body := p[:len(p)-patchTrailer]
	if headLen > uint64(len(body)) || deltaLen > uint64(len(body))-headLen ||
		headLen+deltaLen+baseHeadLen != uint64(len(body)) || binary.LittleEndian.Uint64(t[16:]) != 0 ||
		baseLen != uint64(len(base)) || baseHeadLen > baseLen ||
		!bytes.Equal(body[headLen+deltaLen:], base[:baseHeadLen]) {
		return nil, errBadPatch
	}
	out, err := store.MergeDelta(base, body[:headLen], body[headLen:headLen+deltaLen])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadPatch, err)
	}
	return out, nil
}

// patched returns rec (key's base record) with key's patch applied, if
// key has one.
func (l *Log) patched(key, rec []byte) ([]byte, error) {
	if rec == nil || !l.patches.has(key) {
		return rec, nil
	}
	p, _, err := l.read(append([]byte{prefixPatch}, key...))
	if err != nil || p == nil {
		return rec, err
	}
	out, err := applyPatch(rec, p)
	if err != nil {
		return nil, fmt.Errorf("%w (key %q)", err, key)
	}
	return out, nil
}

// loadPatches fills the patch set from the patches on disk (Open).
func (l *Log) loadPatches() error {
	it, err := l.db.NewIter(&lsm.IterOptions{LowerBound: []byte{prefixPatch}, UpperBound: []byte{prefixPatch + 1}})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		l.patches.note(it.Key()[1:], it.Value(), true)
	}
	return errors.Join(it.Error(), it.Close())
}

// scanPatched returns the record a scan at key's base rec reads: rec
// with key's patch applied, read from the scan's iterator, which it puts
// back at the base. key and rec are copied first, the iterator moving.
func scanPatched(it *lsm.Iterator, key, rec []byte) ([]byte, []byte, error) {
	key, rec = bytes.Clone(key), bytes.Clone(rec)
	p, err := patchOf(it, key)
	if err != nil || p == nil {
		return key, rec, err
	}
	if rec, err = applyPatch(rec, p); err != nil {
		return nil, nil, fmt.Errorf("%w (key %q)", err, key)
	}
	return key, rec, nil
}

// patchOf returns key's patch as it, an iterator over the keys and
// patches, holds it (the same snapshot as the base it is at), and puts it
// back at the base. nil: none.
func patchOf(it *lsm.Iterator, key []byte) ([]byte, error) {
	k := make([]byte, 1+len(key))
	k[0] = prefixPatch
	copy(k[1:], key)
	var p []byte
	if it.SeekGE(k) && bytes.Equal(it.Key(), k) {
		p = bytes.Clone(it.Value()) // the iterator skips an expired one
	}
	k[0] = prefixKey
	if !it.SeekGE(k) || !bytes.Equal(it.Key(), k) {
		return nil, errors.Join(it.Error(), errors.New("durable: a scan lost its place"))
	}
	return p, nil
}
