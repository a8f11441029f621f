package lsm

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"
)

// kind is the type of an entry, stored in the low byte of its trailer.
type kind uint8

const (
	kindDelete kind = 0 // tombstone: hides older values of the key
	kindSet    kind = 1 // value
	// kindSetExpiring is a value whose first 8 bytes are its expiry, an
	// int64 (little-endian, see encodeExpiry); readers treat it as absent
	// from then on and compactions turn it into a tombstone or drop it.
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

// An expiry is stored as an int64 in one of two forms:
//
//	e >= 0              Unix nanoseconds (the only form before far expiries)
//	e <= -minFarMilli   -(Unix milliseconds), for a time past the end of
//	                    int64 nanoseconds (2262-04-11)
//
// Nanoseconds keep full precision for every time before 2262, and files
// written before the far form existed hold only them (MiniKV never wrote
// a past expiry; Batch.PutExpiring wrote a time before 1970 as negative
// nanoseconds, which reads back the same when it is within 2.5 hours of
// the epoch, and as a far future time when it is earlier). A far expiry
// has millisecond precision, which covers every time Redis can express
// (its expiries are int64 milliseconds). A time before the epoch, which
// has passed either way, is written as 1 ns after it, so no new file
// holds the ambiguous values.
const minFarMilli = math.MaxInt64 / 1_000_000 // 2262-04-11T23:47:16.854Z

// lastNano and lastMilli are the last times int64 Unix nanoseconds and
// milliseconds hold.
var (
	lastNano  = time.Unix(0, math.MaxInt64)
	lastMilli = time.UnixMilli(math.MaxInt64)
)

// encodeExpiry is the stored form of t (not the zero time).
func encodeExpiry(t time.Time) int64 {
	switch {
	case t.After(lastMilli): // year 292278994: saturate
		return -math.MaxInt64
	case t.After(lastNano):
		return -t.UnixMilli()
	case t.Before(time.Unix(0, 1)):
		return 1
	}
	return t.UnixNano()
}

// decodeExpiry is the time an expiry e stands for.
func decodeExpiry(e int64) time.Time {
	if e <= -minFarMilli {
		return time.UnixMilli(-e)
	}
	return time.Unix(0, e)
}

// expiryPassed reports whether expiry e is at or before now (Unix
// nanoseconds). A far expiry is at e's millisecond, which lies past every
// int64 nanosecond only if the millisecond itself does: compare whole
// milliseconds.
func expiryPassed(e, now int64) bool {
	if e <= -minFarMilli {
		return -e <= now/1e6
	}
	return e <= now
}

// expired reports whether an entry of kind k with value v is expired at now
// (Unix nanoseconds).
func expired(k kind, v []byte, now int64) bool {
	return k == kindSetExpiring && len(v) >= 8 && expiryPassed(int64(binary.LittleEndian.Uint64(v)), now)
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
