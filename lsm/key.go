package lsm

import (
	"bytes"
	"encoding/binary"
)

// kind is the type of an entry, stored in the low byte of its trailer.
type kind uint8

const (
	kindDelete kind = 0 // tombstone: hides older values of the key
	kindSet    kind = 1 // value
	// kindSetExpiring is a value whose first 8 bytes are the expiry in Unix
	// nanoseconds (little-endian); readers treat it as absent from then on and
	// compactions turn it into a tombstone or drop it.
	kindSetExpiring kind = 2
	kindMax         kind = 2 // the largest kind, for seek keys
)

// maxSeq is the largest sequence number that fits in a trailer.
const maxSeq = 1<<56 - 1

const trailerLen = 8

// An internal key is the user key followed by an 8-byte little-endian
// trailer, seq<<8 | kind. Internal keys sort by user key ascending, then by
// trailer descending, so the newest version of a key comes first.

func makeTrailer(seq uint64, k kind) uint64 { return seq<<8 | uint64(k) }

func appendInternalKey(dst, ukey []byte, seq uint64, k kind) []byte {
	dst = append(dst, ukey...)
	return binary.LittleEndian.AppendUint64(dst, makeTrailer(seq, k))
}

func userKey(ikey []byte) []byte { return ikey[:len(ikey)-trailerLen] }

func trailer(ikey []byte) uint64 {
	return binary.LittleEndian.Uint64(ikey[len(ikey)-trailerLen:])
}

func seqOf(t uint64) uint64 { return t >> 8 }
func kindOf(t uint64) kind  { return kind(t & 0xff) }

// compareInternal orders internal keys.
func compareInternal(a, b []byte) int {
	if c := bytes.Compare(userKey(a), userKey(b)); c != 0 {
		return c
	}
	ta, tb := trailer(a), trailer(b)
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

// expired reports whether an entry of kind k with value v is expired at now
// (Unix nanoseconds).
func expired(k kind, v []byte, now int64) bool {
	return k == kindSetExpiring && len(v) >= 8 && int64(binary.LittleEndian.Uint64(v)) <= now
}

// userValue is the value of an entry of kind k as its writer gave it: v
// without the expiry of a kindSetExpiring entry.
func userValue(k kind, v []byte) []byte {
	if k == kindSetExpiring && len(v) >= 8 {
		return v[8:]
	}
	return v
}

func compareUser(a, b []byte) int { return bytes.Compare(a, b) }
