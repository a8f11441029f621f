package redis

import (
	"errors"
	"math"

	"github.com/minikv/minikv/internal/hll"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// PFADD, PFCOUNT and PFMERGE (Redis's hyperloglog.c) over package hll,
// which keeps Redis's byte format. PFADD and PFMERGE's write, and
// PFCOUNT's update of the cached cardinality, each run in one
// store.Update.

const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errInvalidHLL = "INVALIDOBJ Corrupted HLL object detected"
)

func hllCommands() []respCommand {
	w := []string{"write", "denyoom"}
	return []respCommand{
		{name: "pfadd", arity: -2, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "hyperloglog", since: "2.8.9",
			complexity: "O(1) to add every element.", summary: "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
			args: []docArg{key("key"), {name: "element", typ: "string", optional: true, multiple: true}}, run: cmdPFAdd},
		{name: "pfcount", arity: -2, flags: []string{"readonly"}, firstKey: 1, lastKey: -1, step: 1, group: "hyperloglog", since: "2.8.9",
			complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
			summary:    "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
			args:       []docArg{keys("key")}, run: cmdPFCount},
		{name: "pfmerge", arity: -2, flags: w, firstKey: 1, lastKey: -1, step: 1, group: "hyperloglog", since: "2.8.9",
			complexity: "O(N) to merge N HyperLogLogs, but with high constant times.",
			summary:    "Merges one or more HyperLogLog values into a single key.",
			args:       []docArg{key("destkey"), {name: "sourcekey", typ: "key", optional: true, multiple: true}}, run: cmdPFMerge},
	}
}

// hllSparseMax is hll-sparse-max-bytes (CONFIG SET), as an int.
func (rc *conn) hllSparseMax() int {
	return int(min(rc.st.Limits().HLLSparseMaxBytes, math.MaxInt32))
}

// cmdPFAdd is PFADD key [element ...]: 1 when a register changed or the
// key was created, else 0.
func cmdPFAdd(rc *conn, argv [][]byte) {
	maxSparse := rc.hllSparseMax()
	var errMsg string
	updated := false
	_, err := rc.updateString(argv[1], func(old store.Item, found bool) store.Change {
		errMsg, updated = "", !found
		changed := !found
		var buf []byte
		if found {
			if !hll.Valid(old.Value) {
				errMsg = errNotHLL
				return store.Change{}
			}
			buf = hll.Prepare(append(rc.scratch[:0], old.Value...))
		} else {
			buf = hll.Prepare(hll.AppendNew(rc.scratch[:0]))
		}
		for _, e := range argv[2:] {
			var r int
			buf, r = hll.Add(buf, e, maxSparse)
			if r < 0 {
				// Redis changed its value in place for the elements
				// before this one: so does this.
				errMsg = errInvalidHLL
				break
			}
			if r == 1 {
				updated, changed = true, true
			}
		}
		rc.scratch = buf
		if !changed {
			return store.Change{}
		}
		if errMsg == "" {
			hll.Invalidate(buf)
		}
		return store.Change{Op: store.Put, Value: buf, Flags: old.Flags, Deadline: old.Deadline}
	})
	switch {
	case errMsg != "":
		rc.w.Error(errMsg)
	case err != nil:
		rc.storeError(err)
	case updated:
		rc.notify(server.EventString, "pfadd", argv[1])
		rc.w.Int(1)
	default:
		rc.w.Int(0)
	}
}

// cmdPFCount is PFCOUNT key [key ...]. With one key the cardinality is
// cached in the value, as Redis does (a write, in one store.Update); with
// several, the union's, from their registers merged.
func cmdPFCount(rc *conn, argv [][]byte) {
	if len(argv) > 2 {
		rc.pfcountMany(argv[1:])
		return
	}
	var errMsg string
	var card uint64
	_, err := rc.updateString(argv[1], func(old store.Item, found bool) store.Change {
		errMsg, card = "", 0
		if !found {
			rc.keymiss(argv[1]) // Keep: fn does not run again
			return store.Change{}
		}
		if !hll.Valid(old.Value) {
			errMsg = errNotHLL
			return store.Change{}
		}
		if c, ok := hll.Cached(old.Value); ok {
			card = c
			return store.Change{}
		}
		c, ok := hll.Count(old.Value)
		if !ok {
			errMsg = errInvalidHLL
			return store.Change{}
		}
		card = c
		if rc.st.WriteErr() != nil {
			return store.Change{} // durable mode, the disk failed: a read must not write
		}
		rc.scratch = append(rc.scratch[:0], old.Value...)
		hll.SetCached(rc.scratch, card)
		return store.Change{Op: store.Put, Value: rc.scratch, Flags: old.Flags, Deadline: old.Deadline}
	})
	switch {
	case errMsg != "":
		rc.w.Error(errMsg)
	case errors.Is(err, store.ErrWrongType):
		rc.storeError(err)
	default:
		// A cache that could not be written (no memory) still answers.
		rc.w.Int(int64(card))
	}
}

// pfcountMany reads each key with its own store call: the union is not
// atomic across keys until PFCOUNT runs in a store.Tx.
func (rc *conn) pfcountMany(keys [][]byte) {
	var max [hll.Registers]uint8
	if _, ok := rc.mergeHLLs(&max, keys); !ok {
		return
	}
	rc.w.Int(int64(hll.CountRegisters(&max)))
}

// mergeHLLs merges the registers of the HyperLogLogs under keys (missing
// keys are empty) into max, answering the error of a key that is not
// one; dense reports whether any of them is dense.
func (rc *conn) mergeHLLs(max *[hll.Registers]uint8, keys [][]byte) (dense, ok bool) {
	for _, k := range keys {
		it, found := rc.st.Get(k)
		if !found {
			continue
		}
		switch {
		case it.Kind != store.KindString:
			rc.w.Error(errWrongType)
			return false, false
		case !hll.Valid(it.Value):
			rc.w.Error(errNotHLL)
			return false, false
		}
		dense = dense || hll.IsDense(it.Value)
		if !hll.Merge(max, it.Value) {
			rc.w.Error(errInvalidHLL)
			return false, false
		}
	}
	return dense, true
}

// cmdPFMerge is PFMERGE destkey [sourcekey ...]: destkey (itself one of
// the inputs) gets the union. The inputs are read one key at a time (not
// atomic across keys until store.Tx); the destination is raised to the
// merged registers in one store.Update, so a write that reached it in
// between is kept (registers only grow).
func cmdPFMerge(rc *conn, argv [][]byte) {
	var max [hll.Registers]uint8
	dense, ok := rc.mergeHLLs(&max, argv[1:])
	if !ok {
		return
	}
	maxSparse := rc.hllSparseMax()
	var errMsg string
	_, err := rc.updateString(argv[1], func(old store.Item, found bool) store.Change {
		errMsg = ""
		var buf []byte
		if found {
			if !hll.Valid(old.Value) { // changed since it was read
				errMsg = errNotHLL
				return store.Change{}
			}
			buf = hll.Prepare(append(rc.scratch[:0], old.Value...))
		} else {
			buf = hll.Prepare(hll.AppendNew(rc.scratch[:0]))
		}
		if dense && !hll.IsDense(buf) {
			d, ok := hll.ToDense(nil, buf)
			if !ok {
				errMsg = errInvalidHLL
				return store.Change{}
			}
			buf = hll.Prepare(d)
		}
		for j, v := range max {
			if v != 0 {
				buf, _ = hll.Set(buf, j, v, maxSparse) // Redis ignores a corrupt destination here
			}
		}
		hll.Invalidate(buf)
		rc.scratch = buf
		return store.Change{Op: store.Put, Value: buf, Flags: old.Flags, Deadline: old.Deadline}
	})
	switch {
	case errMsg != "":
		rc.w.Error(errMsg)
	case err != nil:
		rc.storeError(err)
	default:
		rc.notify(server.EventString, "pfadd", argv[1]) // as Redis: a mass PFADD
		rc.w.OK()
	}
}
