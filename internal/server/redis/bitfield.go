package redis

import (
	"bytes"
	"math"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// BITFIELD and BITFIELD_RO (Redis's bitfieldGeneric): the arguments are
// parsed into a list of operations first (every error is found before
// anything runs), then a command with a SET or INCRBY runs them all in
// one store.Update, growing the string to the farthest bit written.

// Overflow behaviours.
const (
	bfWrap = iota
	bfSat
	bfFail
)

// bitfieldOp is one GET, SET or INCRBY.
type bitfieldOp struct {
	opcode   byte // 'g', 's', 'i'
	sign     bool
	bits     int
	overflow int
	offset   int64
	value    int64
}

// bitfieldResult is one reply of the array: an integer, or null when an
// OVERFLOW FAIL refused the operation.
type bitfieldResult struct {
	v    int64
	null bool
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// parseBitfieldType parses i1..i64 or u1..u63. Redis reads the width as a
// C string, so a NUL byte ends it.
func parseBitfieldType(arg []byte) (sign bool, bits int, ok bool) {
	if len(arg) == 0 || arg[0] != 'i' && arg[0] != 'u' {
		return false, 0, false
	}
	sign = arg[0] == 'i'
	n := arg[1:]
	if i := bytes.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	v, ok := resp.ParseInt(n)
	if !ok || v < 1 || sign && v > 64 || !sign && v > 63 {
		return false, 0, false
	}
	return sign, int(v), true
}

// parseBitfield parses BITFIELD's operations (argv from the first one
// on) into ops, checking each operation's type, offset (within protoMax
// bytes, Redis's proto-max-bulk-len) and value in Redis's order. It
// returns the error text, or "" and whether any operation writes and the
// farthest bit written.
func parseBitfield(argv [][]byte, protoMax int64, ops []bitfieldOp) (_ []bitfieldOp, write bool, highest int64, errMsg string) {
	overflow := bfWrap
	highest = -1
	for j := 0; j < len(argv); j++ {
		rem := len(argv) - j - 1
		var opcode byte
		switch sub := argv[j]; {
		case bytes.EqualFold(sub, []byte("get")) && rem >= 2:
			opcode = 'g'
		case bytes.EqualFold(sub, []byte("set")) && rem >= 3:
			opcode = 's'
		case bytes.EqualFold(sub, []byte("incrby")) && rem >= 3:
			opcode = 'i'
		case bytes.EqualFold(sub, []byte("overflow")) && rem >= 1:
			j++
			switch t := argv[j]; {
			case bytes.EqualFold(t, []byte("wrap")):
				overflow = bfWrap
			case bytes.EqualFold(t, []byte("sat")):
				overflow = bfSat
			case bytes.EqualFold(t, []byte("fail")):
				overflow = bfFail
			default:
				return ops, false, 0, "ERR Invalid OVERFLOW type specified"
			}
			continue
		default:
			return ops, false, 0, errSyntax
		}
		sign, bits, ok := parseBitfieldType(argv[j+1])
		if !ok {
			return ops, false, 0, errBitfieldType
		}
		arg := argv[j+2]
		hash := len(arg) > 0 && arg[0] == '#'
		if hash {
			arg = arg[1:]
		}
		off, ok := resp.ParseInt(arg)
		if hash {
			off *= int64(bits) // wraps as Redis's long long does
		}
		if !ok || off < 0 || off>>3 >= protoMax {
			return ops, false, 0, errBitOffset
		}
		op := bitfieldOp{opcode: opcode, sign: sign, bits: bits, overflow: overflow, offset: off}
		if opcode != 'g' {
			write, highest = true, max(highest, off+int64(bits)-1)
			if op.value, ok = resp.ParseInt(argv[j+3]); !ok {
				return ops, false, 0, errNotInt
			}
			j++
		}
		ops = append(ops, op)
		j += 2
	}
	return ops, write, highest, ""
}

// getBits reads bits bits at bit offset off of v, most significant first;
// bits past the end of v read as 0.
func getBits(v []byte, off int64, bits int) uint64 {
	var x uint64
	for j := 0; j < bits; j++ {
		b := uint64(0)
		if i := off >> 3; i < int64(len(v)) {
			b = uint64(v[i]>>(7-uint(off&7))) & 1
		}
		x = x<<1 | b
		off++
	}
	return x
}

// setBits writes the low bits bits of x at bit offset off of v, which is
// long enough.
func setBits(v []byte, off int64, bits int, x uint64) {
	for j := 0; j < bits; j++ {
		b := byte(x>>uint(bits-1-j)) & 1
		i, s := off>>3, 7-uint(off&7)
		v[i] = v[i]&^(1<<s) | b<<s
		off++
	}
}

// signExtend reads the low bits bits of x as a two's complement number.
func signExtend(x uint64, bits int) int64 {
	if bits < 64 && x&(1<<uint(bits-1)) != 0 {
		x |= math.MaxUint64 << uint(bits)
	}
	return int64(x)
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: whether value+incr
// leaves 0..2^bits-1, and the value WRAP or SAT makes of it.
func unsignedOverflow(value uint64, incr int64, bits, ow int) (bool, uint64) {
	maxv := uint64(1)<<uint(bits) - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	var limit uint64
	switch {
	case value > maxv || incr > 0 && incr > maxIncr:
		limit = maxv
	case incr < 0 && incr < minIncr:
		limit = 0
	default:
		return false, 0
	}
	if ow == bfWrap {
		limit = (value + uint64(incr)) &^ (math.MaxUint64 << uint(bits))
	}
	return true, limit
}

// signedOverflow is checkSignedBitfieldOverflow, with its wrapping
// arithmetic.
func signedOverflow(value, incr int64, bits, ow int) (bool, int64) {
	maxv := int64(math.MaxInt64)
	if bits != 64 {
		maxv = 1<<uint(bits-1) - 1
	}
	minv := -maxv - 1
	maxIncr := int64(uint64(maxv) - uint64(value))
	minIncr := minv - value
	var limit int64
	switch {
	case value > maxv || bits != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		limit = maxv
	case value < minv || bits != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		limit = minv
	default:
		return false, 0
	}
	if ow == bfWrap {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := uint64(math.MaxUint64) << uint(bits)
			if c&(1<<uint(bits-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		limit = int64(c)
	}
	return true, limit
}

// runBitfield runs ops on v (long enough for every write) in order,
// appending the replies to res. It also returns how many writes were done
// (not refused by OVERFLOW FAIL) and how many of them changed their field.
func runBitfield(v []byte, ops []bitfieldOp, res []bitfieldResult) (_ []bitfieldResult, writes, changes int) {
	for _, op := range ops {
		old := getBits(v, op.offset, op.bits)
		if op.opcode == 'g' {
			r := int64(old)
			if op.sign {
				r = signExtend(old, op.bits)
			}
			res = append(res, bitfieldResult{v: r})
			continue
		}
		var overflow bool
		var newv uint64
		var ret int64
		if op.sign {
			o := signExtend(old, op.bits)
			var wrapped int64
			if op.opcode == 'i' {
				overflow, wrapped = signedOverflow(o, op.value, op.bits, op.overflow)
				n := o + op.value
				if overflow {
					n = wrapped
				}
				newv, ret = uint64(n), n
			} else {
				n := op.value
				if overflow, wrapped = signedOverflow(n, 0, op.bits, op.overflow); overflow {
					n = wrapped
				}
				newv, ret = uint64(n), o
			}
		} else {
			var wrapped uint64
			if op.opcode == 'i' {
				n := old + uint64(op.value)
				if overflow, wrapped = unsignedOverflow(old, op.value, op.bits, op.overflow); overflow {
					n = wrapped
				}
				newv, ret = n, int64(n)
			} else {
				n := uint64(op.value)
				if overflow, wrapped = unsignedOverflow(n, 0, op.bits, op.overflow); overflow {
					n = wrapped
				}
				newv, ret = n, int64(old)
			}
		}
		if overflow && op.overflow == bfFail {
			res = append(res, bitfieldResult{null: true})
			continue
		}
		res = append(res, bitfieldResult{v: ret})
		setBits(v, op.offset, op.bits, newv)
		writes++
		if newv&(math.MaxUint64>>uint(64-op.bits)) != old {
			changes++
		}
	}
	return res, writes, changes
}

// cmdBitField is BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ...
func cmdBitField(rc *conn, argv [][]byte) { rc.bitfield(argv, false) }

// cmdBitFieldRO is BITFIELD_RO key [GET type offset ...].
func cmdBitFieldRO(rc *conn, argv [][]byte) { rc.bitfield(argv, true) }

// bitfield runs BITFIELD, or BITFIELD_RO (readOnly). As Redis's
// bitfieldGeneric, a command changes the key (a store write:
// WATCH, the change count of INFO persistence, the "setbit" event) only
// when a write changed a field's value, or created or lengthened the
// string; a SET of the value already there, an INCRBY 0, or a write
// OVERFLOW FAIL refused, changes nothing. (A string created or lengthened
// by writes all refused is kept, as in Redis, and counts as a change, where
// Redis counts none.)
func (rc *conn) bitfield(argv [][]byte, readOnly bool) {
	key := argv[1]
	ops, write, highest, errMsg := parseBitfield(argv[2:], rc.p.protoMaxBulk.Load(), nil)
	if errMsg != "" {
		rc.w.Error(errMsg)
		return
	}
	var res []bitfieldResult
	if !write {
		v, _, ok := rc.readString(key)
		if !ok {
			return
		}
		res, _, _ = runBitfield(v, ops, res)
		rc.writeBitfield(res)
		return
	}
	if readOnly {
		rc.w.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	maxLen := int64(rc.st.MaxValueLen(len(key)))
	n := int(highest>>3) + 1
	tooLarge, changed := false, false
	_, err := rc.updateString(key, func(it store.Item, found bool) store.Change {
		changed = false
		if tooLarge = int64(n) > maxLen; tooLarge {
			return store.Change{} // after the type check, before any memory is sized
		}
		grown := !found || len(it.Value) < n
		rc.scratch = append(rc.scratch[:0], it.Value...)
		for len(rc.scratch) < n {
			rc.scratch = append(rc.scratch, 0)
		}
		var writes, changes int
		res, writes, changes = runBitfield(rc.scratch, ops, res[:0])
		if changed = changes > 0 || grown && writes > 0; !changed && !grown {
			return store.Change{} // nothing changes, as in Redis
		}
		return store.Change{Op: store.Put, Value: rc.scratch, Flags: it.Flags, Deadline: it.Deadline}
	})
	if err == nil && tooLarge {
		err = store.ErrTooLarge
	}
	if err != nil {
		rc.storeError(err)
		return
	}
	if changed {
		rc.notify(server.EventString, "setbit", key)
	}
	rc.writeBitfield(res)
}

func (rc *conn) writeBitfield(res []bitfieldResult) {
	rc.w.Array(len(res))
	for _, r := range res {
		if r.null {
			rc.w.Null()
		} else {
			rc.w.Int(r.v)
		}
	}
}
