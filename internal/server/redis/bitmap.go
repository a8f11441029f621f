package redis

import (
	"bytes"
	"math/bits"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The bitmap commands on strings (Redis's bitops.c): SETBIT, GETBIT,
// BITCOUNT, BITPOS, BITOP. SETBIT reads and writes in one store.Update;
// the readers refuse a key holding a collection with WRONGTYPE.

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
)

func bitmapCommands() []respCommand {
	w, r := []string{"write", "denyoom"}, []string{"readonly"}
	one := oneKey("bitmap")
	unit := oneOf("unit", true, token("BYTE"), token("BIT"))
	bitfieldGet := docArg{name: "get-block", typ: "block", token: "GET", sub: []docArg{str("encoding"), integ("offset")}}
	bitfieldOps := oneOf("operation", false,
		bitfieldGet,
		docArg{name: "write", typ: "block", sub: []docArg{
			opt(oneOf("overflow-block", true, token("WRAP"), token("SAT"), token("FAIL"))),
			oneOf("write-operation", false,
				docArg{name: "set-block", typ: "block", token: "SET", sub: []docArg{str("encoding"), integ("offset"), integ("value")}},
				docArg{name: "incrby-block", typ: "block", token: "INCRBY", sub: []docArg{str("encoding"), integ("offset"), integ("increment")}}),
		}})
	bitfieldOps.optional, bitfieldOps.multiple = true, true
	bitfieldGet.optional, bitfieldGet.multiple = true, true
	return []respCommand{
		one("setbit", 4, w, "2.2.0", "O(1)", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
			[]docArg{key("key"), integ("offset"), integ("value")}, cmdSetBit),
		one("getbit", 3, []string{"readonly", "fast"}, "2.2.0", "O(1)", "Returns a bit value by offset.",
			[]docArg{key("key"), integ("offset")}, cmdGetBit),
		one("bitcount", -2, r, "2.6.0", "O(N)", "Counts the number of set bits (population counting) in a string.",
			[]docArg{key("key"), {name: "range", typ: "block", optional: true, sub: []docArg{integ("start"), integ("end"), unit}}}, cmdBitCount),
		one("bitpos", -3, r, "2.8.7", "O(N)", "Finds the first set (1) or clear (0) bit in a string.",
			[]docArg{key("key"), integ("bit"), {name: "range", typ: "block", optional: true, sub: []docArg{integ("start"),
				{name: "end-unit-block", typ: "block", optional: true, sub: []docArg{integ("end"), unit}}}}}, cmdBitPos),
		{name: "bitop", arity: -4, flags: w, firstKey: 2, lastKey: -1, step: 1, group: "bitmap", since: "2.6.0", complexity: "O(N)",
			summary: "Performs bitwise operations on multiple strings, and stores the result.",
			args: []docArg{oneOf("operation", false, token("AND"), token("OR"), token("XOR"), token("NOT")),
				key("destkey"), keys("key")}, run: cmdBitOp},
		one("bitfield", -2, w, "3.2.0", "O(1) for each subcommand specified",
			"Performs arbitrary bitfield integer operations on strings.", []docArg{key("key"), bitfieldOps}, cmdBitField),
		one("bitfield_ro", -2, []string{"readonly", "fast"}, "6.0.0", "O(1) for each subcommand specified",
			"Performs arbitrary read-only bitfield integer operations on strings.", []docArg{key("key"), bitfieldGet}, cmdBitFieldRO),
	}
}

// parseBitOffset parses a bit offset as getBitOffsetFromArgument does:
// with hash, "#n" means n*bits (wrapping as Redis's long long does);
// negative offsets, and offsets whose byte is at or past limit, are
// refused. It writes the error itself.
func (rc *conn) parseBitOffset(arg []byte, hash bool, bits int, limit int64) (int64, bool) {
	use := hash && bits > 0 && len(arg) > 0 && arg[0] == '#'
	if use {
		arg = arg[1:]
	}
	off, ok := resp.ParseInt(arg)
	if use {
		off *= int64(bits)
	}
	if !ok || off < 0 || off>>3 >= limit {
		rc.w.Error(errBitOffset)
		return 0, false
	}
	return off, true
}

// readString looks up key for a reading bitmap command: the value (nil
// when missing), or false after answering WRONGTYPE.
func (rc *conn) readString(key []byte) ([]byte, bool, bool) {
	it, found := rc.st.Get(key)
	if found && it.Kind != store.KindString {
		rc.w.Error(errWrongType)
		return nil, false, false
	}
	return it.Value, found, true
}

// cmdSetBit is SETBIT key offset value: the bit's old value. The string
// grows with zero bytes to reach the offset, which must be within
// proto-max-bulk-len bytes, as Redis checks it (the bit offset error),
// and within the store's item size (errTooLarge, after the type check).
func cmdSetBit(rc *conn, argv [][]byte) {
	key := argv[1]
	off, ok := rc.parseBitOffset(argv[2], false, 0, rc.p.protoMaxBulk.Load())
	if !ok {
		return
	}
	on, ok := resp.ParseInt(argv[3])
	if !ok || on&^1 != 0 {
		rc.w.Error(errBitValue)
		return
	}
	maxLen := int64(rc.st.MaxValueLen(len(key)))
	byteIdx, shift := int(off>>3), 7-uint(off&7)
	old, put, tooLarge := 0, false, false
	_, err := rc.updateString(key, func(it store.Item, found bool) store.Change {
		old, put = 0, false
		if tooLarge = int64(byteIdx) >= maxLen; tooLarge {
			return store.Change{} // after the type check, before any memory is sized
		}
		if byteIdx < len(it.Value) {
			old = int(it.Value[byteIdx]>>shift) & 1
		}
		if found && byteIdx < len(it.Value) && int64(old) == on {
			return store.Change{} // nothing changes, as in Redis
		}
		rc.scratch = append(rc.scratch[:0], it.Value...)
		for len(rc.scratch) <= byteIdx {
			rc.scratch = append(rc.scratch, 0)
		}
		rc.scratch[byteIdx] = rc.scratch[byteIdx]&^(1<<shift) | byte(on)<<shift
		put = true
		return store.Change{Op: store.Put, Value: rc.scratch, Flags: it.Flags, Deadline: it.Deadline}
	})
	if err == nil && tooLarge {
		err = store.ErrTooLarge
	}
	if err != nil {
		rc.storeError(err)
		return
	}
	if put {
		rc.notify(server.EventString, "setbit", key)
	}
	rc.w.Int(int64(old))
}

// cmdGetBit is GETBIT key offset: 0 past the end of the string.
func cmdGetBit(rc *conn, argv [][]byte) {
	off, ok := rc.parseBitOffset(argv[2], false, 0, rc.p.protoMaxBulk.Load())
	if !ok {
		return
	}
	v, _, ok := rc.readString(argv[1])
	if !ok {
		return
	}
	bit := 0
	if i := off >> 3; i < int64(len(v)) {
		bit = int(v[i]>>(7-uint(off&7))) & 1
	}
	rc.w.Int(int64(bit))
}

// parseBitUnit parses BYTE or BIT.
func parseBitUnit(arg []byte) (isBit, ok bool) {
	switch {
	case bytes.EqualFold(arg, []byte("bit")):
		return true, true
	case bytes.EqualFold(arg, []byte("byte")):
		return false, true
	}
	return false, false
}

// bitRange turns a start and end in bytes or bits, with Redis's negative
// indexes and clamping, into a range of bits [first, last] of a string of
// n bytes; empty when first > last.
func bitRange(start, end int64, n int, isBit bool) (first, last int64) {
	total := int64(n)
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 1, 0
	}
	if !isBit {
		return start << 3, end<<3 + 7
	}
	return start, end
}

// countBits is the number of set bits of v in the bit range [first, last].
func countBits(v []byte, first, last int64) int64 {
	if first > last {
		return 0
	}
	fb, lb := first>>3, last>>3
	n := 0
	for _, c := range v[fb : lb+1] {
		n += bits.OnesCount8(c)
	}
	n -= bits.OnesCount8(v[fb] & ^byte(0xff>>(first&7)))
	n -= bits.OnesCount8(v[lb] & byte(0xff>>(last&7+1)))
	return int64(n)
}

// cmdBitCount is BITCOUNT key [start end [BYTE|BIT]]. Redis 7.0 looks
// the key up before it parses the range: a missing key answers 0 whatever
// follows.
func cmdBitCount(rc *conn, argv [][]byte) {
	v, found, ok := rc.readString(argv[1])
	if !ok {
		return
	}
	if !found {
		rc.w.Int(0)
		return
	}
	switch len(argv) {
	case 2:
		rc.w.Int(countBits(v, 0, int64(len(v))*8-1))
		return
	case 4, 5:
	default:
		rc.w.Error(errSyntax)
		return
	}
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	end, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	isBit := false
	if len(argv) == 5 {
		if isBit, ok = parseBitUnit(argv[4]); !ok {
			rc.w.Error(errSyntax)
			return
		}
	}
	if start < 0 && end < 0 && start > end {
		rc.w.Int(0)
		return
	}
	first, last := bitRange(start, end, len(v), isBit)
	rc.w.Int(countBits(v, first, last))
}

// cmdBitPos is BITPOS key bit [start [end [BYTE|BIT]]]: the first bit set
// to bit in the range, -1 when none; looking for a 0 without an end, the
// string counts as followed by zeroes.
func cmdBitPos(rc *conn, argv [][]byte) {
	bit, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		rc.w.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	v, found, ok := rc.readString(argv[1])
	if !ok {
		return
	}
	if !found {
		rc.w.Int(-bit)
		return
	}
	var first, last int64
	endGiven, isBit := false, false
	switch len(argv) {
	case 3:
		first, last = 0, int64(len(v))*8-1
	case 4, 5, 6:
		start, ok := rc.parseInt(argv[3])
		if !ok {
			return
		}
		if len(argv) == 6 {
			if isBit, ok = parseBitUnit(argv[5]); !ok {
				rc.w.Error(errSyntax)
				return
			}
		}
		end := int64(len(v)) - 1
		if isBit {
			end = int64(len(v))<<3 + 7
		}
		if len(argv) >= 5 {
			if end, ok = rc.parseInt(argv[4]); !ok {
				return
			}
			endGiven = true
		}
		first, last = bitRange(start, end, len(v), isBit)
	default:
		rc.w.Error(errSyntax)
		return
	}
	if first > last {
		rc.w.Int(-1)
		return
	}
	pos := findBit(v, first, last, byte(bit))
	if pos < 0 && bit == 0 && !endGiven {
		pos = last + 1
	}
	rc.w.Int(pos)
}

// findBit is the first bit in [first, last] of v equal to bit, or -1.
func findBit(v []byte, first, last int64, bit byte) int64 {
	for i := first; i <= last; {
		c := v[i>>3]
		if bit == 0 {
			c = ^c
		}
		if i&7 == 0 && c == 0 {
			i += 8
			continue
		}
		if c>>(7-uint(i&7))&1 == 1 {
			return i
		}
		i++
	}
	return -1
}

// cmdBitOp is BITOP AND|OR|XOR|NOT destkey key [key ...]: the length of
// the result stored in destkey (deleted when the result is empty), which
// is replaced whatever it held, its TTL dropped, as Redis's setKey does.
// The sources are read one key at a time, so the command is not atomic
// across keys (a write to a source between two reads may be half seen)
// until it runs in a store.Tx; the destination is written in one call.
func cmdBitOp(rc *conn, argv [][]byte) {
	const (
		opAnd = iota
		opOr
		opXor
		opNot
	)
	var op int
	switch name := argv[1]; {
	case bytes.EqualFold(name, []byte("and")):
		op = opAnd
	case bytes.EqualFold(name, []byte("or")):
		op = opOr
	case bytes.EqualFold(name, []byte("xor")):
		op = opXor
	case bytes.EqualFold(name, []byte("not")):
		op = opNot
	default:
		rc.w.Error(errSyntax)
		return
	}
	if op == opNot && len(argv) != 4 {
		rc.w.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	srcs := make([][]byte, 0, len(argv)-3)
	maxLen := 0
	for _, k := range argv[3:] {
		v, _, ok := rc.readString(k)
		if !ok {
			return
		}
		srcs = append(srcs, v)
		maxLen = max(maxLen, len(v))
	}
	dest := argv[2]
	if maxLen == 0 {
		if rc.st.Delete(dest) == nil { // ErrNotFound: nothing to delete
			rc.notify(server.EventGeneric, "del", dest)
		}
		rc.w.Int(0)
		return
	}
	res := make([]byte, maxLen)
	for i := range res {
		at := func(s []byte) byte {
			if i < len(s) {
				return s[i]
			}
			return 0
		}
		c := at(srcs[0])
		for _, s := range srcs[1:] {
			switch op {
			case opAnd:
				c &= at(s)
			case opOr:
				c |= at(s)
			case opXor:
				c ^= at(s)
			}
		}
		if op == opNot {
			c = ^c
		}
		res[i] = c
	}
	if _, err := rc.st.Store(store.ModeSet, dest, res, 0, 0, 0); err != nil {
		rc.storeError(err)
		return
	}
	rc.notify(server.EventString, "set", dest)
	rc.w.Int(int64(maxLen))
}
