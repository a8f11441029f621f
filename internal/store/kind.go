package store

import (
	"encoding/binary"
	"errors"
)

// Kind is the type of the value a key holds, as Redis's TYPE names it.
// The memcached commands and Redis's string commands read and modify
// strings only; the collection handles (Hash) one kind each.
type Kind uint8

// The kinds of value.
const (
	KindString Kind = iota
	KindHash
	KindList
	KindSet
	KindZSet
	KindStream
)

var kindNames = [...]string{"string", "hash", "list", "set", "zset", "stream"}

// String is the kind's name in Redis's TYPE reply.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "none"
}

// ErrWrongType is returned by an operation on a key that holds another
// kind of value than it works on. The value is left as it was.
var ErrWrongType = errors.New("store: wrong kind of value")

// The meta byte's upper bits say what a record's value is (record.go
// draws the byte): bits 3-5 its Kind, bits 6-7 its encoding.
//
//	encCompact  the value is the whole collection in one block: a
//	            listpack (Redis 7's format) for every kind but strings,
//	            whose value is their bytes
//	encIntset   a set of integers, in Redis's intset format
//	encBig      in memory: the value is the 4-byte number of an object in
//	            the shard's object table (a structure too large to
//	            rewrite on each change, object.go); on disk, where no
//	            object exists, the flat encoding of that object
const (
	kindShift = 3
	kindMask  = 7 << kindShift
	encShift  = 6
	encMask   = 3 << encShift

	encCompact = 0
	encIntset  = 1
	encBig     = 2
)

func kindOf(meta uint8) Kind { return Kind(meta&kindMask) >> kindShift }
func encOf(meta uint8) uint8 { return (meta & encMask) >> encShift }

// typeMeta is the meta bits of a value of kind k in encoding enc.
func typeMeta(k Kind, enc uint8) uint8 { return uint8(k)<<kindShift | enc<<encShift }

// isBig reports whether e's value names an object.
func (e *entry) isBig() bool { return encOf(e.meta) == encBig }

// objID is the object number a big record's value holds.
func (sh *shard) objID(e *entry) uint32 {
	return binary.LittleEndian.Uint32(sh.value(e))
}
