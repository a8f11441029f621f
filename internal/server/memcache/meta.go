package memcache

import (
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Meta commands (mg, ms, md, ma, me; mn is answered in dispatch) map onto
// the store's Meta* operations. Return flags are written in the order the request gave them;
// q hides only the "nothing to report" code of each command (EN for mg, HD
// for ms and md, HD or VA for ma), never an error.

// metaKey writes the k flag: the key as sent, or base64 when it is binary,
// followed by the b flag that tells the client so.
func metaKey(w *memcache.Writer, m *memcache.Meta, key []byte, binary bool) {
	switch {
	case m.Base64:
		w.MetaToken('k', m.RawKey)
		w.MetaFlag('b')
	case binary:
		w.MetaBase64('k', userKey(key))
		w.MetaFlag('b')
	default:
		w.MetaToken('k', userKey(key))
	}
}

// metaEcho writes the flags every reply carries back whatever happened:
// k (key) and O (opaque), in request order.
func metaEcho(w *memcache.Writer, m *memcache.Meta, key []byte, binary bool) {
	for _, f := range m.Flags() {
		switch f {
		case 'k':
			metaKey(w, m, key, binary)
		case 'O':
			w.MetaToken('O', m.Opaque)
		}
	}
}

// ttlLeft is the t flag: whole seconds left, rounded up, or -1 for never.
func ttlLeft(deadline int64, now time.Time) int64 {
	if deadline == 0 {
		return -1
	}
	left := deadline - now.UnixMilli() // the store's unit
	if left <= 0 {
		return -1
	}
	return (left + 999) / 1000
}

func (c *conn) metaGet(req *memcache.Request, w *memcache.Writer) {
	m := &req.Meta
	key := req.Key()
	now := time.Now()
	o := store.GetOptions{NoBump: m.Has('u'), BinaryKey: m.Base64}
	if m.Has('T') {
		o.Touch, o.Deadline = true, store.Deadline(m.TTL, now)
	}
	if m.Has('N') {
		o.Vivify, o.VivifyDeadline = true, store.Deadline(m.Vivify, now)
	}
	if m.Has('R') {
		o.Recache, o.RecacheBelow = true, m.Recache*1000 // ms
	}
	if m.Has('E') {
		o.HasNewCAS, o.NewCAS = true, m.NewCAS
	}
	mi, ok := c.st.MetaGet(key, o)
	c.Count(server.StatCmdGet)
	if o.Touch {
		c.Count(server.StatCmdTouch)
	}
	if !ok || mi.Created {
		c.Count(server.StatGetMisses)
		if o.Touch {
			c.Count(server.StatTouchMisses)
		}
	} else {
		c.Count(server.StatGetHits)
		if o.Touch {
			c.Count(server.StatTouchHits)
		}
	}
	if !ok {
		if m.Quiet {
			return
		}
		w.MetaCode("EN")
		metaEcho(w, m, key, false)
		w.MetaEnd()
		return
	}
	if mi.Kind != store.KindString {
		w.Line(memcache.ServerErrorWrongType)
		return
	}
	if o.Touch && !mi.Created {
		c.touchEvent(key, o.Deadline)
	}
	value := m.Has('v')
	if value {
		w.MetaValue(len(mi.Value))
	} else {
		w.MetaCode("HD")
	}
	for _, f := range m.Flags() {
		switch f {
		case 'c':
			w.MetaUint('c', c.casOut(mi.CAS))
		case 'f':
			w.MetaUint('f', uint64(mi.Flags))
		case 'h':
			h := uint64(0)
			if mi.HitBefore {
				h = 1
			}
			w.MetaUint('h', h)
		case 'k':
			metaKey(w, m, key, mi.BinaryKey)
		case 'l':
			w.MetaInt('l', mi.Idle)
		case 'O':
			w.MetaToken('O', m.Opaque)
		case 's':
			w.MetaUint('s', uint64(len(mi.Value)))
		case 't':
			w.MetaInt('t', ttlLeft(mi.Deadline, now))
		}
	}
	// memcached 1.6 appends the recache state after the requested flags,
	// in this order.
	if mi.WinSent {
		w.MetaFlag('Z')
	}
	if mi.Stale {
		w.MetaFlag('X')
	}
	if mi.Won {
		w.MetaFlag('W')
	}
	w.MetaEnd()
	if value {
		w.MetaData(mi.Value)
	}
}

var metaSetModes = [256]store.Mode{
	'S': store.ModeSet,
	'E': store.ModeAdd,
	'A': store.ModeAppend,
	'P': store.ModePrepend,
	'R': store.ModeReplace,
}

func (c *conn) metaSet(req *memcache.Request, w *memcache.Writer) {
	m := &req.Meta
	key := req.Key()
	now := time.Now()
	o := store.SetOptions{
		Mode:       metaSetModes[m.Mode],
		HasCompare: m.Has('C'),
		CompareCAS: m.CompareCAS,
		Invalidate: m.Has('I'),
		HasNewCAS:  m.Has('E'),
		NewCAS:     m.NewCAS,
		BinaryKey:  m.Base64,
	}
	if m.Has('N') {
		o.Vivify, o.VivifyDeadline = true, store.Deadline(m.Vivify, now)
	}
	var deadline int64
	if m.Has('T') {
		deadline = store.Deadline(m.TTL, now)
	}
	c.Count(server.StatCmdSet)
	cas, size, err := c.st.MetaSet(key, req.Value, m.ClientFlags, deadline, o)
	if err == nil {
		c.storeEvent(o.Mode, key, deadline)
	}
	if o.HasCompare {
		switch {
		case err == nil:
			c.Count(server.StatCASHits)
		case errors.Is(err, store.ErrExists):
			c.Count(server.StatCASBadval)
		case errors.Is(err, store.ErrNotFound):
			c.Count(server.StatCASMisses)
		}
	}
	var code string
	switch {
	case err == nil:
		if m.Quiet {
			return
		}
		code = "HD"
	case errors.Is(err, store.ErrNotStored):
		code = "NS"
	case errors.Is(err, store.ErrExists):
		code = "EX"
	case errors.Is(err, store.ErrNotFound):
		code = "NF"
	default:
		if errors.Is(err, store.ErrTooLarge) {
			c.Count(server.StatStoreTooLarge)
		} else if errors.Is(err, store.ErrNoMemory) {
			c.Count(server.StatStoreNoMemory)
		}
		w.Line(storeErrorLine(err))
		return
	}
	w.MetaCode(code)
	for _, f := range m.Flags() {
		switch f {
		case 'c':
			// memcached answers c0 when nothing was stored.
			w.MetaUint('c', c.casOut(cas))
		case 'k':
			metaKey(w, m, key, false)
		case 'O':
			w.MetaToken('O', m.Opaque)
		case 's':
			if err == nil {
				w.MetaUint('s', uint64(size))
			}
		}
	}
	w.MetaEnd()
}

func (c *conn) metaDelete(req *memcache.Request, w *memcache.Writer) {
	m := &req.Meta
	key := req.Key()
	o := store.DeleteOptions{
		HasCompare:  m.Has('C'),
		CompareCAS:  m.CompareCAS,
		Invalidate:  m.Has('I'),
		HasNewCAS:   m.Has('E'),
		NewCAS:      m.NewCAS,
		RemoveValue: m.Has('x'),
	}
	if m.Has('T') && o.Invalidate {
		o.Touch, o.Deadline = true, store.Deadline(m.TTL, time.Now())
	}
	err := c.st.MetaDelete(key, o)
	var code string
	switch {
	case err == nil:
		c.Count(server.StatDeleteHits)
		if !o.Invalidate { // I marks the item stale and keeps it
			c.p.srv.KeyEvent(server.EventGeneric, "del", key)
		}
		if m.Quiet {
			return
		}
		code = "HD"
	case errors.Is(err, store.ErrNotFound):
		c.Count(server.StatDeleteMisses)
		code = "NF"
	default:
		code = "EX"
	}
	w.MetaCode(code)
	metaEcho(w, m, key, false)
	w.MetaEnd()
}

func (c *conn) metaArith(req *memcache.Request, w *memcache.Writer) {
	m := &req.Meta
	key := req.Key()
	now := time.Now()
	o := store.ArithOptions{
		Decr:       m.Mode == 'D' || m.Mode == '-',
		Delta:      m.Delta,
		HasCompare: m.Has('C'),
		CompareCAS: m.CompareCAS,
		HasNewCAS:  m.Has('E'),
		NewCAS:     m.NewCAS,
		Initial:    m.Initial,
		BinaryKey:  m.Base64,
	}
	if m.Has('N') {
		o.Vivify, o.VivifyDeadline = true, store.Deadline(m.Vivify, now)
	}
	if m.Has('T') {
		o.Touch, o.Deadline = true, store.Deadline(m.TTL, now)
	}
	hits, misses := server.StatIncrHits, server.StatIncrMisses
	if o.Decr {
		hits, misses = server.StatDecrHits, server.StatDecrMisses
	}
	res, err := c.st.MetaArith(key, o)
	var code string
	switch {
	case err == nil:
		c.Count(hits)
		c.p.srv.KeyEvent(server.EventString, "incrby", key) // also when N created it, as INCR on a missing key
		// memcached 1.6.18 hides only an update with q, not a creation.
		if m.Quiet && !res.Created {
			return
		}
	case errors.Is(err, store.ErrNotFound):
		c.Count(misses)
		code = "NF"
	case errors.Is(err, store.ErrNotStored):
		code = "NS"
	case errors.Is(err, store.ErrExists):
		code = "EX"
	default:
		w.Line(storeErrorLine(err))
		return
	}
	if err != nil {
		w.MetaCode(code)
		metaEcho(w, m, key, false)
		w.MetaEnd()
		return
	}
	value := m.Has('v')
	if value {
		w.MetaValue(decimalLen(res.Value))
	} else {
		w.MetaCode("HD")
	}
	for _, f := range m.Flags() {
		switch f {
		case 'c':
			w.MetaUint('c', c.casOut(res.CAS))
		case 't':
			w.MetaInt('t', ttlLeft(res.Deadline, now))
		case 'k':
			metaKey(w, m, key, false)
		case 'O':
			w.MetaToken('O', m.Opaque)
		}
	}
	w.MetaEnd()
	if value {
		w.Uint(res.Value) // the number and its CRLF: the data block
	}
}

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

func (c *conn) metaDebug(req *memcache.Request, w *memcache.Writer) {
	m := &req.Meta
	key := req.Key()
	mi, ok := c.st.MetaDebug(key)
	if !ok {
		w.Line("EN")
		return
	}
	// A debug command: building the line with allocations is fine.
	now := time.Now()
	var k []byte
	switch {
	case m.Base64:
		k = m.RawKey
	case mi.BinaryKey:
		k = []byte(base64.StdEncoding.EncodeToString(key))
	default:
		k = key
	}
	exp := int64(-1)
	if mi.Deadline != 0 {
		exp = ttlLeft(mi.Deadline, now)
	}
	fetch := "no"
	if mi.HitBefore {
		fetch = "yes"
	}
	b := append([]byte("ME "), k...)
	b = append(b, " exp="...)
	b = strconv.AppendInt(b, exp, 10)
	b = append(b, " la="...)
	b = strconv.AppendInt(b, mi.Idle, 10)
	b = append(b, " cas="...)
	b = strconv.AppendUint(b, c.casOut(mi.CAS), 10)
	b = append(b, " fetch="+fetch+" cls=1 size="...)
	b = strconv.AppendInt(b, int64(len(key)+len(mi.Value))+store.ItemOverhead, 10)
	b = append(b, "\r\n"...)
	_, _ = w.Write(b)
}
