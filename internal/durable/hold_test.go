package durable

import (
	"errors"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm"
)

// inEngine reports whether the engine (not the Log's queue) has key.
func inEngine(t *testing.T, l *Log, key string) bool {
	t.Helper()
	_, err := l.DB().Get(append([]byte{prefixKey}, key...))
	switch {
	case err == nil:
		return true
	case errors.Is(err, lsm.ErrNotFound):
		return false
	}
	t.Fatal(err)
	return false
}

// syncWithin runs sync on a goroutine and fails the test if it has not
// returned within a generous bound (it would wait forever otherwise).
func syncWithin(t *testing.T, what string, sync func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- sync() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return while the section was open", what)
	}
}

// TestExclusiveSectionSyncs: while an Exclusive section is open (a
// script that has written runs long), a Sync returns once the changes
// queued before the section are in the engine, without waiting for the
// section, whose changes reach the engine only with its end, all in one
// batch.
func TestExclusiveSectionSyncs(t *testing.T) {
	l := openMemLog(t)
	l.Write([]byte("before"), []byte("1"), 0)
	l.HoldExclusive()
	l.Write([]byte("in-1"), []byte("1"), 0)
	syncWithin(t, "Sync (the changes before the section)", l.Sync)
	syncWithin(t, "SyncPass", l.SyncPass)
	if !inEngine(t, l, "before") {
		t.Error("the change queued before the section is not in the engine after a Sync")
	}
	l.Write([]byte("in-2"), []byte("2"), 0)
	syncWithin(t, "Sync with nothing before the section pending", l.Sync)
	for _, k := range []string{"in-1", "in-2"} {
		if inEngine(t, l, k) {
			t.Errorf("the section's change %s is in the engine before the section ended", k)
		}
		if rec, _, err := l.Read([]byte(k)); err != nil || rec == nil {
			t.Errorf("Read(%s) in the section = %q, %v; want its queued record", k, rec, err)
		}
	}
	l.EndExclusive()
	l.Release()
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"in-1", "in-2"} {
		if !inEngine(t, l, k) {
			t.Errorf("the section's change %s is not in the engine after its end and a Sync", k)
		}
	}
}

// TestLeaderWaitingForAHoldYieldsToExclusive: a Sync that leads and waits
// for another section's end, when an Exclusive section then begins (the
// other one ended first: the Exclusive holds every shard), returns with
// the changes queued before the Exclusive one, not at its end.
func TestLeaderWaitingForAHoldYieldsToExclusive(t *testing.T) {
	l := openMemLog(t)
	l.Hold()
	l.Write([]byte("a"), []byte("1"), 0)
	done := make(chan error, 1)
	go func() { done <- l.Sync() }()
	waitTakeWait(t, l)
	l.Release()
	l.HoldExclusive() // waits until the leader has taken the batch, or takes it itself
	l.Write([]byte("x"), []byte("1"), 0)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the leader's Sync waited for the Exclusive section")
	}
	if !inEngine(t, l, "a") || inEngine(t, l, "x") {
		t.Errorf("in the engine: a %v (want true), x %v (want false)", inEngine(t, l, "a"), inEngine(t, l, "x"))
	}
	l.EndExclusive()
	l.Release()
}

// waitTakeWait waits until a leading Sync waits for the open sections.
func waitTakeWait(t *testing.T, l *Log) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		w := l.takeWait
		l.mu.Unlock()
		if w {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the Sync never waited for the open section")
		}
	}
}

// TestHoldInsideHoldCalls: a replica applying its primary's EXEC holds a
// HoldCalls section and, inside it, the EXEC's own Hold. A Sync that
// waits for the sections to end must not make the inner Hold wait for it
// (it once did: the replica and every reply stopped for good).
func TestHoldInsideHoldCalls(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		l := openMemLog(t)
		l.HoldCalls()
		l.Write([]byte("cmd"), []byte("1"), 0)
		done := make(chan error, 1)
		go func() { done <- l.Sync() }()
		waitTakeWait(t, l)
		inner := make(chan struct{})
		go func() {
			if exclusive {
				l.HoldExclusive()
			} else {
				l.Hold()
			}
			close(inner)
		}()
		select {
		case <-inner:
		case <-time.After(30 * time.Second):
			t.Fatalf("exclusive %v: the nested Hold waits for the Sync that waits for it", exclusive)
		}
		l.Write([]byte("exec"), []byte("1"), 0)
		if exclusive {
			l.EndExclusive()
		}
		l.Release()
		l.WriteAux("repl", []byte("offset"))
		l.ReleaseCalls()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		if !inEngine(t, l, "cmd") || !inEngine(t, l, "exec") {
			t.Errorf("exclusive %v: the section's changes are not in the engine", exclusive)
		}
	}
}
