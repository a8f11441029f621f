package redis

import (
	"bytes"
	"hash/maphash"
	"math"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Blocking commands (Redis 7.2's blocked.c and the blocking halves of
// t_list.c and t_zset.c): BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP,
// BZPOPMIN, BZPOPMAX, BZMPOP, and CLIENT UNBLOCK; XREAD and XREADGROUP
// wait here too (stream.go's serveStream: Redis 7.2 runs a blocked
// stream read again when its key is signalled, as if it came anew).
//
// A blocking command first runs as its non-blocking twin. When every key
// is empty (and it is not inside EXEC, where it answers as on a timeout,
// as Redis does), it registers a waiter on each of its keys, in arrival
// order, and parks its connection (server.Conn.Block: the goroutine sits
// in a read of its socket, costing no CPU).
//
// The pusher serves the waiters, as Redis's handleClientsBlockedOnKeys
// does before its next command: after any write command (or EXEC) while
// some client is blocked, the connection that ran it looks its keys up
// among the blocked ones and, for each key, takes the first waiter still
// waiting, claims it and pops its elements under the key's shard lock
// (store.UpdateList, or a Tx over BLMOVE's two keys), then delivers them
// to it; it goes on with the next waiter while the key has elements, and
// then with the destinations BLMOVE waiters pushed to. Claim and pop happen
// under the same lock, and a waiter that has timed out, been unblocked or
// lost its client can no longer be claimed, so an element popped for a
// waiter always reaches that waiter's reply, and one for a waiter that
// went away is never popped. The waiter writes its reply itself, in its
// own protocol version.
//
// The one difference from Redis's single thread: the waiters are served
// right after the pushing command, with the key's lock taken again, not
// in the same step. A command another connection runs at that very
// instant on the same key (an LPOP) can take the element first; the
// waiter then waits on, as if that command had come before the push.
// Nothing a client sends after it has seen the push's reply can overtake
// the waiters: the reply leaves only after they are served.

// blockOp is the shape of a blocking command's reply.
type blockOp uint8

const (
	opBPop   blockOp = iota // BLPOP, BRPOP: key, element
	opBMove                 // BLMOVE, BRPOPLPUSH: element
	opBMPop                 // BLMPOP: key, [element ...]
	opBZPop                 // BZPOPMIN, BZPOPMAX: key, member, score
	opBZMPop                // BZMPOP: key, [[member, score] ...]
	opXRead                 // XREAD, XREADGROUP: stream.go
)

// blockCall is what a blocking command asks for.
type blockCall struct {
	op     blockOp
	keys   [][]byte
	left   bool  // lists: pop the head; sorted sets: pop the max
	count  int64 // elements or members per pop
	dst    []byte
	toLeft bool       // BLMOVE: push onto the destination's head
	stream *xreadCall // XREAD, XREADGROUP
}

// zset reports whether the call pops sorted sets.
func (b *blockCall) zset() bool { return b.op == opBZPop || b.op == opBZMPop }

// blockResult is what a blocking command pops: the key and its elements
// (members with their scores), or an error reply instead.
type blockResult struct {
	key      []byte
	buf      []byte // the elements' bytes, one after the other
	ends     []int  // where each element ends in buf
	scores   []float64
	errMsg   string // an error reply (WRONGTYPE at BLMOVE's destination, UNBLOCKED)
	timedOut bool   // CLIENT UNBLOCK ... TIMEOUT: the timeout's reply
	emptied  bool   // the pop emptied key, which is gone (keyspace notifications)
	stream   *streamResult
}

func (r *blockResult) reset() {
	r.key, r.buf, r.ends, r.scores = r.key[:0], r.buf[:0], r.ends[:0], r.scores[:0]
	r.errMsg, r.timedOut, r.emptied = "", false, false
}

func (r *blockResult) elem(i int) []byte {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.buf[start:r.ends[i]]
}

// popList pops the call's elements from l, under key, into r.
func (r *blockResult) popList(b *blockCall, key []byte, l *store.List) {
	r.key = append(r.key[:0], key...)
	n := 1
	if b.op == opBMPop {
		n = int(min(b.count, int64(l.Len())))
	}
	for range n {
		r.buf, _ = l.Pop(b.left, r.buf)
		r.ends = append(r.ends, len(r.buf))
	}
	r.emptied = l.Len() == 0
}

// popZSet pops the call's members from z, under key, into r.
func (r *blockResult) popZSet(b *blockCall, key []byte, z *store.ZSet) {
	r.key = append(r.key[:0], key...)
	n := 1
	if b.op == opBZMPop {
		n = int(min(b.count, int64(z.Len())))
	}
	lo, hi := 0, n-1
	if b.left {
		lo, hi = z.Len()-n, z.Len()-1
	}
	z.Range(lo, hi, b.left, func(m []byte, s float64) bool {
		r.buf = append(r.buf, m...)
		r.ends = append(r.ends, len(r.buf))
		r.scores = append(r.scores, s)
		return true
	})
	z.DeleteRange(lo, hi)
	r.emptied = z.Len() == 0
}

// moveList is BLMOVE's step with src's and dst's shards held by tx: the
// element moves, or the destination's wrong type is the reply (checked
// only once there is an element, as in Redis). claim is called once
// there is something to answer; false leaves everything as it was.
func (r *blockResult) moveList(b *blockCall, tx *store.Tx, src []byte, claim func() bool) (has, served bool, err error) {
	var s, d store.List
	if err := tx.List(src, &s, true); err != nil || s.Len() == 0 {
		return false, false, err
	}
	same := string(src) == string(b.dst)
	if !same {
		if k, ok := tx.Kind(b.dst); ok && k != store.KindList {
			if !claim() {
				return true, false, nil
			}
			r.errMsg = errWrongType
			return true, true, nil
		}
	}
	if !claim() {
		return true, false, nil
	}
	r.key = append(r.key[:0], src...)
	start := len(r.buf)
	r.buf, _ = s.Pop(b.left, r.buf)
	r.ends = append(r.ends, len(r.buf))
	v := r.buf[start:]
	if same {
		s.Push(b.toLeft, v)
		return true, true, nil
	}
	r.emptied = s.Len() == 0
	if err := tx.List(b.dst, &d, true); err != nil {
		return true, true, err // not reached: the kind was checked
	}
	d.Push(b.toLeft, v)
	return true, true, nil
}

// writeBlockResult writes r as the call's reply.
func (rc *conn) writeBlockResult(b *blockCall, r *blockResult) {
	switch {
	case r.errMsg != "":
		rc.w.Error(r.errMsg)
		return
	case r.timedOut:
		rc.writeBlockTimeout()
		return
	}
	switch b.op {
	case opXRead:
		rc.writeStreamResult(r.stream)
	case opBPop:
		rc.w.Array(2)
		rc.w.Bulk(userKey(r.key))
		rc.w.Bulk(r.elem(0))
	case opBMove:
		rc.w.Bulk(r.elem(0))
	case opBMPop:
		rc.w.Array(2)
		rc.w.Bulk(userKey(r.key))
		rc.w.Array(len(r.ends))
		for i := range r.ends {
			rc.w.Bulk(r.elem(i))
		}
	case opBZPop:
		rc.w.Array(3)
		rc.w.Bulk(userKey(r.key))
		rc.w.Bulk(r.elem(0))
		rc.w.Double(r.scores[0])
	case opBZMPop:
		rc.w.Array(2)
		rc.w.Bulk(userKey(r.key))
		rc.w.Array(len(r.ends))
		for i := range r.ends {
			rc.w.Array(2)
			rc.w.Bulk(r.elem(i))
			rc.w.Double(r.scores[i])
		}
	}
}

// writeBlockTimeout is the reply of a block that timed out: a null array
// for every blocking command, BLMOVE's included (Redis 7.0's
// replyToBlockedClientTimedOut).
func (rc *conn) writeBlockTimeout() { rc.w.NullArray() }

// waiter is one blocked command, registered on each of its keys.
type waiter struct {
	sw    *server.Waiter
	id    uint64 // its connection's
	timed bool   // it has a timeout
	call  blockCall
	res   blockResult // filled in by whoever claims sw
}

// blockedSet is the server's blocked commands, by key (first come, first
// served) and by client id (CLIENT UNBLOCK). Its shards split the keys
// so that pushers on unrelated keys do not meet on one lock.
type blockedSet struct {
	readyMu sync.Mutex
	ready   map[string]struct{} // streams an XADD added to since their waiters were served (stream.go)

	n      atomic.Int64 // blocked commands; while 0 nobody looks further
	timed  atomic.Int64 // those with a timeout (INFO's clients_in_timeout_table)
	seed   maphash.Seed
	shards [16]blockedShard
	idMu   sync.Mutex
	byID   map[uint64]*waiter

	groupMu     sync.Mutex
	groupReader int // blocked XREADGROUPs: the store's removals are watched while any
}

type blockedShard struct {
	n    atomic.Int64 // registrations on the shard's keys
	mu   sync.Mutex
	keys map[string][]*waiter
}

func newBlockedSet() *blockedSet {
	bs := &blockedSet{seed: maphash.MakeSeed(), byID: make(map[uint64]*waiter)}
	for i := range bs.shards {
		bs.shards[i].keys = make(map[string][]*waiter)
	}
	return bs
}

func (bs *blockedSet) shard(key []byte) *blockedShard {
	return &bs.shards[maphash.Bytes(bs.seed, key)%uint64(len(bs.shards))]
}

// add registers w on each of its keys, behind the waiters already there.
func (bs *blockedSet) add(w *waiter) {
	bs.idMu.Lock()
	bs.byID[w.id] = w
	bs.idMu.Unlock()
	for i, k := range w.call.keys {
		if slices.ContainsFunc(w.call.keys[:i], func(o []byte) bool { return string(o) == string(k) }) {
			continue // BLPOP k k 0: one place in k's queue
		}
		sh := bs.shard(k)
		sh.mu.Lock()
		sh.keys[string(k)] = append(sh.keys[string(k)], w)
		sh.n.Add(1)
		sh.mu.Unlock()
	}
	if w.timed {
		bs.timed.Add(1)
	}
	bs.n.Add(1)
}

// remove unregisters w (claimed or given up) from every key.
func (bs *blockedSet) remove(w *waiter) {
	bs.n.Add(-1)
	if w.timed {
		bs.timed.Add(-1)
	}
	for _, k := range w.call.keys {
		sh := bs.shard(k)
		sh.mu.Lock()
		q := sh.keys[string(k)]
		if i := slices.Index(q, w); i >= 0 {
			q = slices.Delete(q, i, i+1)
			sh.n.Add(-1)
			if len(q) == 0 {
				delete(sh.keys, string(k))
			} else {
				sh.keys[string(k)] = q
			}
		}
		sh.mu.Unlock()
	}
	bs.idMu.Lock()
	if bs.byID[w.id] == w {
		delete(bs.byID, w.id)
	}
	bs.idMu.Unlock()
}

// requeue moves w, which waits on, behind the commands waiting on each
// of its keys, as Redis 7.2 blocks a command it ran again anew.
func (bs *blockedSet) requeue(w *waiter) {
	for i, k := range w.call.keys {
		if slices.ContainsFunc(w.call.keys[:i], func(o []byte) bool { return string(o) == string(k) }) {
			continue
		}
		sh := bs.shard(k)
		sh.mu.Lock()
		q := sh.keys[string(k)]
		if i := slices.Index(q, w); i >= 0 && i < len(q)-1 {
			q = append(slices.Delete(q, i, i+1), w)
			sh.keys[string(k)] = q
		}
		sh.mu.Unlock()
	}
}

// groupReaders counts a blocked XREADGROUP in (d 1) or out (d -1): while
// any waits, srv reports the keys the store removes on its own (expiry,
// eviction), which end such a wait as a DEL does (removed).
func (p *Protocol) groupReaders(d int) {
	bs := p.blocked
	bs.groupMu.Lock()
	defer bs.groupMu.Unlock()
	bs.groupReader += d
	if d > 0 && bs.groupReader == 1 || d < 0 && bs.groupReader == 0 {
		p.srv.WatchRemovals(bs.groupReader > 0)
	}
}

// removed is told of a key the store removed on its own (a RemovalSink,
// under the key's shard lock): its waiters are served on a goroutine of
// their own, as after a DEL, Redis's signalDeletedKeyAsReady.
func (p *Protocol) removed(key []byte) {
	if p.blocked.n.Load() == 0 || p.blocked.shard(key).n.Load() == 0 {
		return
	}
	k := bytes.Clone(key)
	go p.wake(k)
}

// keyCount is the number of keys some command is blocked on (INFO's
// total_blocking_keys), and of those some XREADGROUP is blocked on
// (total_blocking_keys_on_nokey: Redis 7.2 ends such a wait when the key
// goes).
func (bs *blockedSet) keyCount() (n, onNoKey int) {
	for i := range bs.shards {
		sh := &bs.shards[i]
		sh.mu.Lock()
		n += len(sh.keys)
		for _, q := range sh.keys {
			if slices.ContainsFunc(q, func(w *waiter) bool { return w.call.op == opXRead && w.call.stream.group != nil }) {
				onNoKey++
			}
		}
		sh.mu.Unlock()
	}
	return n, onNoKey
}

// first returns the longest-waiting command on key that may still be
// claimed, or nil.
func (bs *blockedSet) first(key []byte) *waiter {
	sh := bs.shard(key)
	if sh.n.Load() == 0 {
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, w := range sh.keys[string(key)] {
		if w.sw.Waiting() {
			return w
		}
	}
	return nil
}

// markReady records that an XADD added to the stream key.
func (bs *blockedSet) markReady(key []byte) {
	if bs.n.Load() == 0 {
		return
	}
	bs.readyMu.Lock()
	if bs.ready == nil {
		bs.ready = make(map[string]struct{})
	}
	bs.ready[string(key)] = struct{}{}
	bs.readyMu.Unlock()
}

// takeReady reports whether key was marked ready, and unmarks it.
func (bs *blockedSet) takeReady(key []byte) bool {
	bs.readyMu.Lock()
	defer bs.readyMu.Unlock()
	_, ok := bs.ready[string(key)]
	delete(bs.ready, string(key))
	return ok
}

// waiting returns the commands on key that may still be claimed, in
// arrival order.
func (bs *blockedSet) waiting(key []byte) []*waiter {
	sh := bs.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []*waiter
	for _, w := range sh.keys[string(key)] {
		if w.sw.Waiting() {
			out = append(out, w)
		}
	}
	return out
}

// byClient returns the command client id is blocked in, if any.
func (bs *blockedSet) byClient(id uint64) *waiter {
	bs.idMu.Lock()
	defer bs.idMu.Unlock()
	return bs.byID[id]
}

// wakeKeysOf serves the waiters on the keys of a write command that just
// ran (argv), as Redis serves the keys a command made ready.
func (p *Protocol) wakeKeysOf(cmd *respCommand, argv [][]byte, db int) {
	var buf [8][]byte
	adds := keyAddingCommands[cmd.name]
	for _, k := range cmd.keys(argv, buf[:0]) {
		if store.DBKeyNeeded(db, k) {
			k = store.DBKey(nil, db, k)
		}
		if adds {
			p.blocked.markReady(k)
		}
		p.wake(k)
	}
}

// keyAddingCommands put a whole value under a key: a stream arriving so
// serves its readers, as Redis's dbAdd signals the key ready.
var keyAddingCommands = map[string]bool{"rename": true, "renamenx": true, "copy": true, "restore": true}

// wake serves the waiters on key, longest-waiting first, while it has
// elements for them; then those on the keys BLMOVE waiters pushed to.
func (p *Protocol) wake(key []byte) {
	var more [][]byte
	for {
		w := p.blocked.first(key)
		if w != nil && w.call.op == opXRead {
			// A stream's entries stay for every reader: run each
			// waiter again, in order, once an XADD made the key ready
			// (Redis's signalKeyAsReady); any other write only ends
			// group readers whose stream or group is gone (Redis's
			// signalDeletedKeyAsReady).
			added := p.blocked.takeReady(key)
			for _, sw := range p.blocked.waiting(key) {
				if sw.call.op == opXRead && p.serveStream(sw, key, added) {
					sw.sw.Deliver()
				}
			}
			w = nil
		}
		if w != nil {
			has, served := p.serve(w, key)
			if served {
				w.sw.Deliver()
				if w.call.op == opBMove && string(w.call.dst) != string(key) {
					more = append(more, w.call.dst)
				}
			}
			if has {
				continue // the next waiter, or this one again if it slipped away
			}
		}
		if len(more) == 0 {
			return
		}
		key, more = more[0], more[1:]
	}
}

// serve pops w's elements from key, if key has any (has), claiming w
// under the key's lock; served reports that w was claimed and its result
// filled in, so the caller must deliver it.
func (p *Protocol) serve(w *waiter, key []byte) (has, served bool) {
	b, r := &w.call, &w.res
	claim := func() bool {
		if !w.sw.Claim() {
			return false
		}
		served = true
		return true
	}
	switch {
	case b.op == opBMove:
		_ = p.st.Tx([][]byte{key, b.dst}, func(tx *store.Tx) error {
			var err error
			has, _, err = r.moveList(b, tx, key, claim)
			return err
		})
	case b.zset():
		var z store.ZSet
		_ = p.st.UpdateZSet(key, &z, func() error {
			if has = z.Len() > 0; has && claim() {
				r.popZSet(b, key, &z)
			}
			return nil
		})
	default:
		var l store.List
		_ = p.st.UpdateList(key, &l, func() error {
			if has = l.Len() > 0; has && claim() {
				r.popList(b, key, &l)
			}
			return nil
		})
	}
	if served {
		p.notifyBlockPop(b, r)
	}
	return has, served
}

// tryPop runs the call without blocking: the first of its keys with
// elements, in order, is popped into r. A key of the wrong type before it
// is the error, as in Redis.
func (rc *conn) tryPop(b *blockCall, r *blockResult) (popped bool, err error) {
	r.reset()
	yes := func() bool { popped = true; return true }
	if b.op == opBMove {
		err = rc.st.Tx([][]byte{b.keys[0], b.dst}, func(tx *store.Tx) error {
			_, _, err := r.moveList(b, tx, b.keys[0], yes)
			return err
		})
		return popped, err
	}
	if len(b.keys) == 1 {
		if b.zset() {
			var z store.ZSet
			err = rc.st.UpdateZSet(b.keys[0], &z, func() error {
				if z.Len() > 0 && yes() {
					r.popZSet(b, b.keys[0], &z)
				}
				return nil
			})
		} else {
			var l store.List
			err = rc.st.UpdateList(b.keys[0], &l, func() error {
				if l.Len() > 0 && yes() {
					r.popList(b, b.keys[0], &l)
				}
				return nil
			})
		}
		return popped, err
	}
	err = rc.st.Tx(b.keys, func(tx *store.Tx) error {
		for _, k := range b.keys {
			if b.zset() {
				var z store.ZSet
				if err := tx.ZSet(k, &z, true); err != nil {
					return err
				}
				if z.Len() > 0 && yes() {
					r.popZSet(b, k, &z)
					return nil
				}
				tx.DoneZSet(&z)
				continue
			}
			var l store.List
			if err := tx.List(k, &l, true); err != nil {
				return err
			}
			if l.Len() > 0 && yes() {
				r.popList(b, k, &l)
				return nil
			}
			tx.DoneList(&l)
		}
		return nil
	})
	return popped, err
}

// inExec reports whether the connection runs the commands of an EXEC
// (rc.st is then the exclusive view of the store).
func (rc *conn) inExec() bool { return rc.st != rc.p.st }

// block runs a parsed blocking command: at once when a key has elements
// (or the key's type is wrong), else it waits up to timeout (0: forever)
// for a push to serve it.
func (rc *conn) block(name string, b *blockCall, timeout time.Duration) {
	exec := rc.inExec()
	if !exec && rc.p.blocked.n.Load() != 0 {
		// Waiters that came first are served first, should a push have
		// just given their keys elements.
		for _, k := range b.keys {
			rc.p.wake(k)
		}
	}
	r := &rc.bres
	switch popped, err := rc.tryPop(b, r); {
	case err != nil:
		rc.storeError(err)
		return
	case popped:
		rc.p.notifyBlockPop(b, r)
		rc.writeBlockResult(b, r)
		return
	case exec:
		// Inside EXEC a blocking command does not block: it answers as
		// its non-blocking twin on empty keys (Redis's
		// CLIENT_DENY_BLOCKING).
		if b.op == opBMove {
			rc.w.Null()
		} else {
			rc.w.NullArray()
		}
		return
	}

	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	w := &waiter{id: rc.ID(), call: *b, timed: timeout > 0}
	w.call.keys = make([][]byte, len(b.keys))
	for i, k := range b.keys {
		w.call.keys[i] = append([]byte(nil), k...)
	}
	w.call.dst = append([]byte(nil), b.dst...)
	w.sw = rc.NewWaiter(name)
	rc.p.blocked.add(w)
	// A push that came between tryPop and add found no waiter: serve
	// the keys once more, this waiter included.
	for _, k := range w.call.keys {
		rc.p.wake(k)
	}
	waitStart := rc.beforeWait() // cmdstats.go
	end, _ := rc.Block(w.sw, deadline, rc.r.Fill)
	rc.waited += rc.p.ops.now() - waitStart // not the command's own time
	rc.p.blocked.remove(w)
	rc.nowMs, rc.awaitOK = 0, false
	switch end {
	case server.BlockServed:
		rc.writeBlockResult(&w.call, &w.res)
	case server.BlockTimeout:
		rc.writeBlockTimeout()
	default: // the client went away, or the server is shutting down
		rc.quit = true
	}
}

// Errors of the blocking commands, as Redis 7.2 words them.
const (
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
	errTimeoutRange    = "ERR timeout is out of range"
	errUnblocked       = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
)

// maxBlockTimeout is the longest finite block: a longer timeout (Redis
// takes up to 2^63-1 ms) waits forever, which it would anyway.
const maxBlockTimeout = 100 * 365 * 24 * time.Hour

// parseTimeout reads a blocking command's timeout in seconds as Redis 7.2
// reads it (getTimeoutFromObjectOrReply): an x87 long double (strtold's
// syntax, string2ld's rules), times 1000; past the largest 64-bit integer
// (inf included) it is out of range, else it is rounded up to whole
// milliseconds and converted to a 64-bit integer (-inf, and anything
// below the range, becoming the most negative one: "timeout is
// negative"). A deadline past the largest 64-bit Unix time in
// milliseconds is out of range too. Zero means no timeout.
func (rc *conn) parseTimeout(arg []byte) (time.Duration, bool) {
	var z big.Float
	if !parseLongDouble(&z, arg) {
		rc.w.Error(errTimeoutNotFloat)
		return 0, false
	}
	z.Mul(&z, big.NewFloat(1000))
	if z.Cmp(new(big.Float).SetInt64(math.MaxInt64)) > 0 {
		rc.w.Error(errTimeoutRange)
		return 0, false
	}
	ms := int64(math.MinInt64)
	if !z.IsInf() {
		i, acc := z.Int(nil) // toward zero
		if acc == big.Below {
			i.Add(i, big.NewInt(1))
		}
		if i.IsInt64() {
			ms = i.Int64()
		}
	}
	return rc.blockTimeout(ms)
}

// blockTimeout checks a timeout of ms milliseconds as Redis 7.2 does once
// it has it: negative is an error, and so is a deadline (now + ms) past
// the largest 64-bit integer.
func (rc *conn) blockTimeout(ms int64) (time.Duration, bool) {
	if ms < 0 {
		rc.w.Error(errTimeoutNegative)
		return 0, false
	}
	if timeoutPastEnd(ms) {
		rc.w.Error(errTimeoutRange)
		return 0, false
	}
	if ms > int64(maxBlockTimeout/time.Millisecond) {
		return 0, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// timeoutPastEnd reports whether a timeout of ms milliseconds from now
// ends past 2^63-1 ms since the epoch: Redis 7.2's "timeout is out of
// range" for a deadline that would overflow.
func timeoutPastEnd(ms int64) bool {
	return ms > 0 && ms > math.MaxInt64-time.Now().UnixMilli()
}

func blockingCommands() []respCommand {
	lists := func(name string, summary string, left bool) respCommand {
		return respCommand{name: name, arity: -3, flags: []string{"write", "noscript", "blocking"}, firstKey: 1, lastKey: -2, step: 1,
			group: "list", since: "2.0.0", complexity: "O(N) where N is the number of provided keys.", summary: summary,
			args: []docArg{keys("key"), {name: "timeout", typ: "double"}},
			run:  func(rc *conn, argv [][]byte) { rc.bpop(argv, left) }}
	}
	zsets := func(name string, summary string, max bool) respCommand {
		return respCommand{name: name, arity: -3, flags: []string{"write", "noscript", "blocking", "fast"}, firstKey: 1, lastKey: -2, step: 1,
			group: "sorted-set", since: "5.0.0", complexity: "O(log(N)) with N being the number of elements in the sorted set.", summary: summary,
			args: []docArg{keys("key"), {name: "timeout", typ: "double"}},
			run:  func(rc *conn, argv [][]byte) { rc.bzpop(argv, max) }}
	}
	side := func(name string) docArg { return oneOf(name, false, token("LEFT"), token("RIGHT")) }
	mpopArgs := func(a, b string) []docArg {
		return []docArg{{name: "timeout", typ: "double"}, integ("numkeys"), keys("key"), oneOf("where", false, token(a), token(b)),
			opt(tokArg("COUNT", "count", "integer"))}
	}
	return []respCommand{
		lists("blpop", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", true),
		lists("brpop", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", false),
		{name: "blmove", arity: 6, flags: []string{"write", "denyoom", "noscript", "blocking"}, firstKey: 1, lastKey: 2, step: 1, group: "list",
			since: "6.2.0", complexity: "O(1)",
			summary: "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.",
			args:    []docArg{key("source"), key("destination"), side("wherefrom"), side("whereto"), {name: "timeout", typ: "double"}}, run: cmdBLMove},
		{name: "brpoplpush", arity: 4, flags: []string{"write", "denyoom", "noscript", "blocking"}, firstKey: 1, lastKey: 2, step: 1, group: "list",
			since: "2.2.0", complexity: "O(1)",
			summary: "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.",
			args:    []docArg{key("source"), key("destination"), {name: "timeout", typ: "double"}}, run: cmdBRPopLPush},
		{name: "blmpop", arity: -5, flags: []string{"write", "blocking", "movablekeys"}, keysOf: numKeys(2), group: "list", since: "7.0.0",
			complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			summary:    "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
			args:       mpopArgs("LEFT", "RIGHT"), run: cmdBLMPop},
		zsets("bzpopmin", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", false),
		zsets("bzpopmax", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", true),
		{name: "bzmpop", arity: -5, flags: []string{"write", "blocking", "movablekeys"}, keysOf: numKeys(2), group: "sorted-set", since: "7.0.0",
			complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
			summary:    "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
			args:       mpopArgs("MIN", "MAX"), run: cmdBZMPop},
	}
}

// bpop is BLPOP and BRPOP key [key ...] timeout.
func (rc *conn) bpop(argv [][]byte, left bool) {
	timeout, ok := rc.parseTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	name := "brpop"
	if left {
		name = "blpop"
	}
	rc.block(name, &blockCall{op: opBPop, keys: argv[1 : len(argv)-1], left: left}, timeout)
}

// bzpop is BZPOPMIN and BZPOPMAX key [key ...] timeout.
func (rc *conn) bzpop(argv [][]byte, max bool) {
	timeout, ok := rc.parseTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	name := "bzpopmin"
	if max {
		name = "bzpopmax"
	}
	rc.block(name, &blockCall{op: opBZPop, keys: argv[1 : len(argv)-1], left: max}, timeout)
}

// cmdBLMove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func cmdBLMove(rc *conn, argv [][]byte) {
	from, ok1 := side(argv[3])
	to, ok2 := side(argv[4])
	if !ok1 || !ok2 {
		rc.w.Error(errSyntax)
		return
	}
	timeout, ok := rc.parseTimeout(argv[5])
	if !ok {
		return
	}
	rc.block("blmove", &blockCall{op: opBMove, keys: argv[1:2], dst: argv[2], left: from, toLeft: to}, timeout)
}

// cmdBRPopLPush is BRPOPLPUSH source destination timeout.
func cmdBRPopLPush(rc *conn, argv [][]byte) {
	timeout, ok := rc.parseTimeout(argv[3])
	if !ok {
		return
	}
	rc.block("brpoplpush", &blockCall{op: opBMove, keys: argv[1:2], dst: argv[2], left: false, toLeft: true}, timeout)
}

// cmdBLMPop is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT
// count]: the arguments after the timeout are checked first, as in Redis.
func cmdBLMPop(rc *conn, argv [][]byte) {
	keys, left, count, ok := rc.parseMPop(argv[1:], "left", "right")
	if !ok {
		return
	}
	timeout, ok := rc.parseTimeout(argv[1])
	if !ok {
		return
	}
	rc.block("blmpop", &blockCall{op: opBMPop, keys: keys, left: left, count: count}, timeout)
}

// cmdBZMPop is BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].
func cmdBZMPop(rc *conn, argv [][]byte) {
	keys, maxSide, count, ok := rc.parseMPop(argv[1:], "max", "min")
	if !ok {
		return
	}
	timeout, ok := rc.parseTimeout(argv[1])
	if !ok {
		return
	}
	rc.block("bzmpop", &blockCall{op: opBZMPop, keys: keys, left: maxSide, count: count}, timeout)
}

// cmdClientUnblock is CLIENT UNBLOCK client-id [TIMEOUT|ERROR]: the
// client blocked in a command is answered as on its timeout, or with the
// UNBLOCKED error; 1 when there was one, else 0.
func cmdClientUnblock(rc *conn, argv [][]byte) {
	if len(argv) > 4 {
		rc.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cString(argv[1], len(argv[1]))) + "'. Try CLIENT HELP.")
		return
	}
	asError := false
	if len(argv) == 4 {
		switch {
		case is(argv[3], "timeout"):
		case is(argv[3], "error"):
			asError = true
		default:
			rc.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	w := rc.p.blocked.byClient(uint64(id))
	if w == nil || id <= 0 || !w.sw.Claim() {
		rc.w.Int(0)
		return
	}
	w.res.reset()
	if asError {
		w.res.errMsg = errUnblocked
	} else {
		w.res.timedOut = true
	}
	w.sw.Deliver()
	rc.w.Int(1)
}
