package store

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
)

// Feed receives every change of the store's keys, in the order the
// changes happened: what a replication primary streams to its replicas.
// It gets exactly the records a Disk gets (the same calls, made at the
// same places, under the changed key's shard lock), so two changes of one
// key arrive in the order they were made, and a change a client saw
// arrives before any change that client made afterwards. In a cache-mode
// store the records are built only while a Feed is attached.
//
// Besides what a Disk sees, a Feed is told of deletions the Disk does not
// need: a key removed at its deadline (expired) and, in a cache-mode
// store, a live key evicted to make room, each as Write(key, nil, 0), as
// Redis propagates them as DEL. A durable store's eviction only drops the
// key from memory, so it is no change.
//
// Every record is a key's whole state (its value, flags, CAS and
// deadline: the Disk's record format, DecodeRecord), so applying a record
// twice gives the same state: a replica may load a snapshot taken while
// writes went on and then apply the changes from a point before it.
type Feed interface {
	// Write is a change of key: rec its new record, or nil when the key
	// is gone. It must not block, and copies key and rec.
	Write(key, rec []byte, deadline int64)
	// Flush says every item whose CAS is at or below fence is gone (a
	// FlushAll took effect). A record of such an item that arrives
	// afterwards was made before the flush and is obsolete.
	Flush(fence uint64)
	// Hold and Release bracket the changes of one Tx or Exclusive
	// section (EXEC, a script, RENAME ...): they are one atomic step.
	Hold()
	Release()
}

// A CommandFeed is a Feed that also takes a collection's change as the
// Redis commands that make it (replication's Source), where a Feed gets
// the collection's whole new record: a hash's, set's or sorted set's
// HSET, SREM, ZADD ... (the store records them: coll.record), a stream's
// XADD, XCLAIM ... (the redis layer's: Stream.Propagate).
type CommandFeed interface {
	Feed
	// Commands is a change of key given as the n commands (RESP arrays,
	// in cmds) that make it on a replica holding key's previous state,
	// in place of its whole new record. cas is the CAS token the key
	// holds after it, as a record's (RecordCAS). Each command is one a
	// replica may apply again over a later state without changing it (a
	// full resync's replay). It must not block, and copies key and cmds.
	Commands(key []byte, cas uint64, n int, cmds []byte)
}

// feedRef boxes a Feed for an atomic pointer; cf is f when it takes
// commands.
type feedRef struct {
	f  Feed
	cf CommandFeed
}

// SetFeed attaches f (nil detaches the current one). Changes made after
// SetFeed returns reach f; a change being made at the same moment may or
// may not, so a caller that needs every change from a point on attaches
// the Feed first and then takes its snapshot (see Feed).
func (s *Store) SetFeed(f Feed) {
	if f == nil {
		s.feed.Store(nil)
		return
	}
	cf, _ := f.(CommandFeed)
	s.feed.Store(&feedRef{f: f, cf: cf})
}

// commandFeeder is the attached Feed when it takes commands, or nil.
func (s *Store) commandFeeder() CommandFeed {
	if r := s.feed.Load(); r != nil {
		return r.cf
	}
	return nil
}

// feeder is the attached Feed, or nil.
func (s *Store) feeder() Feed {
	if r := s.feed.Load(); r != nil {
		return r.f
	}
	return nil
}

// recording reports whether changes must be made into records: a Disk
// or a Feed takes them.
func (s *Store) recording() bool { return s.disk != nil || s.feed.Load() != nil }

// feedDelete tells the Feed that key is gone.
func (s *Store) feedDelete(key []byte) {
	if f := s.feeder(); f != nil {
		f.Write(key, nil, 0)
	}
}

// feedState is the part of core the Feed needs.
type feedState struct {
	feed atomic.Pointer[feedRef]
}

// errRecord is PutRecord's answer to a record too short for its header.
var errRecord = errors.New("store: malformed record")

// PutRecord stores rec, a record this build's Feed or Disk was given (its
// kind, encoding, memcached flags and value), under key with deadline
// (Unix ms, 0 for none), replacing whatever key holds, under a new CAS
// token. It turns a record back into a value the Store's readers
// understand (replication encodes a changed collection from it). rec is
// trusted as the Disk's records are: it is not checked as client input.
// The key must not be open.
func (tx *Tx) PutRecord(key, rec []byte, deadline int64) error {
	if len(rec) < diskHeader {
		return errRecord
	}
	s := tx.s
	sh, h := tx.lockedShard(key)
	meta := rec[0] &^ metaWinSent
	value := rec[diskHeader:]
	var obj object
	var objSize int64
	if encOf(meta) == encBig {
		o, err := s.decodeFlat(sh.seed, kindOf(meta), value)
		if err != nil {
			return err
		}
		obj, objSize = o, o.size()
		value = make([]byte, 4) // the object's number, set below
	} else if s.tooLarge(len(key), len(value)) {
		return ErrTooLarge
	}
	tx.Delete(key)
	e := entry{tag: tagOf(h), meta: meta, deadline: deadline}
	e.flags = binary.LittleEndian.Uint32(rec[1:])
	e.cas = s.nextCAS()
	e.atime = s.stamp(nil, &tx.clk)
	if obj != nil {
		binary.LittleEndian.PutUint32(value, sh.newObjLocked(obj, objSize))
	}
	cost := int64(len(key)+len(value)) + ItemOverhead + objSize
	sh.insertLocked(&e, key, value, nil)
	s.notifyLocked(key, EventNew)
	sh.bytes += cost
	s.used.Add(cost)
	sh.totalItems++
	s.persistLocked(sh, &e)
	return nil
}

// RecordString returns the value and memcached flags of rec when it is a
// string's record (what a Feed or Disk is given); ok is false for a
// collection's.
func RecordString(rec []byte) (value []byte, flags uint32, ok bool) {
	if len(rec) < diskHeader || kindOf(rec[0]) != KindString || encOf(rec[0]) == encBig {
		return nil, 0, false
	}
	return rec[diskHeader:], binary.LittleEndian.Uint32(rec[1:]), true
}

// RecordCAS returns the CAS token rec was written with: one at or below a
// Feed's flush fence is obsolete.
func RecordCAS(rec []byte) uint64 {
	if len(rec) < diskHeader {
		return 0
	}
	return binary.LittleEndian.Uint64(rec[5:])
}
