package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Batch encoding (also the payload of a WAL record):
//
//	+---------+-----------+-----------------------------------------+
//	| seq (8) | count (4) | entry × count                           |
//	+---------+-----------+-----------------------------------------+
//	entry: kind (1) | uvarint(len key) | key | [uvarint(len value) | value]
//
// Entries take consecutive sequence numbers starting at seq. A value of kind
// set-expiring begins with its 8-byte expiry time (encodeExpiry). Delete
// carries no value.

const batchHeaderLen = 12

// Batch is a set of writes applied atomically: after a crash either all of
// them are visible or none. A Batch is not safe for concurrent use.
type Batch struct {
	data  []byte
	count uint32
}

// NewBatch returns an empty batch.
func NewBatch() *Batch { return &Batch{} }

func (b *Batch) init() {
	if len(b.data) < batchHeaderLen {
		b.data = append(b.data[:0], make([]byte, batchHeaderLen)...)
	}
}

// Put adds a write of value under key.
func (b *Batch) Put(key, value []byte) { b.add(kindSet, key, value, 0) }

// PutExpiring adds a write of value under key that reads as absent from
// expireAt on. A zero expireAt means no expiry.
func (b *Batch) PutExpiring(key, value []byte, expireAt time.Time) {
	if expireAt.IsZero() {
		b.add(kindSet, key, value, 0)
		return
	}
	b.add(kindSetExpiring, key, value, encodeExpiry(expireAt))
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) { b.add(kindDelete, key, nil, 0) }

func (b *Batch) add(k kind, key, value []byte, exp int64) {
	b.init()
	b.data = append(b.data, byte(k))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	switch k {
	case kindSet:
		b.data = binary.AppendUvarint(b.data, uint64(len(value)))
		b.data = append(b.data, value...)
	case kindSetExpiring:
		b.data = binary.AppendUvarint(b.data, uint64(len(value)+8))
		b.data = binary.LittleEndian.AppendUint64(b.data, uint64(exp))
		b.data = append(b.data, value...)
	}
	b.count++
}

// Len reports the number of writes in the batch.
func (b *Batch) Len() int { return int(b.count) }

// Size is the batch's encoded size in bytes.
func (b *Batch) Size() int { return len(b.data) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	b.data = b.data[:0]
	b.count = 0
}

func (b *Batch) setSeq(seq uint64) {
	b.init()
	binary.LittleEndian.PutUint64(b.data, seq)
	binary.LittleEndian.PutUint32(b.data[8:], b.count)
}

var errBadBatch = errors.New("lsm: malformed batch")

// batchIter decodes a batch payload.
type batchIter struct {
	data  []byte
	seq   uint64
	count uint32
	n     uint32
}

func newBatchIter(data []byte) (batchIter, error) {
	if len(data) < batchHeaderLen {
		return batchIter{}, errBadBatch
	}
	it := batchIter{
		data:  data[batchHeaderLen:],
		seq:   binary.LittleEndian.Uint64(data),
		count: binary.LittleEndian.Uint32(data[8:]),
	}
	// Every entry's sequence number must fit a trailer, or it would be
	// silently cut to 56 bits and order wrongly against older writes.
	if it.seq > maxSeq || uint64(it.count) > maxSeq-it.seq+1 {
		return batchIter{}, fmt.Errorf("%w: sequence numbers %d+%d out of range", errBadBatch, it.seq, it.count)
	}
	return it, nil
}

// next returns the next entry and its sequence number; ok is false at the end.
func (it *batchIter) next() (k kind, key, value []byte, seq uint64, ok bool, err error) {
	if it.n == it.count {
		if len(it.data) != 0 {
			return 0, nil, nil, 0, false, errBadBatch
		}
		return 0, nil, nil, 0, false, nil
	}
	if len(it.data) < 1 {
		return 0, nil, nil, 0, false, errBadBatch
	}
	k = kind(it.data[0])
	if k > kindMax {
		return 0, nil, nil, 0, false, fmt.Errorf("%w: kind %d", errBadBatch, k)
	}
	d := it.data[1:]
	klen, n := binary.Uvarint(d)
	if n <= 0 || klen > uint64(len(d)-n) {
		return 0, nil, nil, 0, false, errBadBatch
	}
	key = d[n : n+int(klen)]
	d = d[n+int(klen):]
	if k != kindDelete {
		vlen, n := binary.Uvarint(d)
		if n <= 0 || vlen > uint64(len(d)-n) {
			return 0, nil, nil, 0, false, errBadBatch
		}
		value = d[n : n+int(vlen)]
		d = d[n+int(vlen):]
		if k == kindSetExpiring && vlen < 8 {
			return 0, nil, nil, 0, false, errBadBatch
		}
	}
	it.data = d
	seq = it.seq + uint64(it.n)
	it.n++
	return k, key, value, seq, true, nil
}
