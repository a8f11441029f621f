package store

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recFeed records what a Feed is told, one line per call.
type recFeed struct {
	mu  sync.Mutex
	log []string
}

func (f *recFeed) add(s string) { f.mu.Lock(); f.log = append(f.log, s); f.mu.Unlock() }

func (f *recFeed) Write(key, rec []byte, deadline int64) {
	if rec == nil {
		f.add("del " + string(key))
		return
	}
	f.add(fmt.Sprintf("put %s %d", key, len(rec)))
}
func (f *recFeed) Flush(fence uint64) { f.add(fmt.Sprintf("flush %d", fence)) }
func (f *recFeed) Hold()              { f.add("hold") }
func (f *recFeed) Release()           { f.add("release") }

// TestFeedEvents: a cache-mode store tells its Feed of writes, deletes,
// a FlushAll with its fence, and brackets a Tx's changes with Hold and
// Release; nothing once the Feed is detached.
func TestFeedEvents(t *testing.T) {
	s := newTestStore(t, Config{})
	f := &recFeed{}
	s.SetFeed(f)
	mustStore(t, s, ModeSet, "a", "1", 0, 0)
	_ = s.Delete([]byte("a"))
	_ = s.Delete([]byte("missing"))
	cas := mustStore(t, s, ModeSet, "b", "2", 0, 0)
	_ = s.Tx([][]byte{[]byte("b"), []byte("c")}, func(tx *Tx) error {
		tx.Rename([]byte("b"), []byte("c"), false)
		return nil
	})
	s.FlushAll(0)
	s.SetFeed(nil)
	mustStore(t, s, ModeSet, "d", "4", 0, 0)
	want := []string{"put a 14", "del a", "put b 14", "hold", "put c 14", "del b", "release", fmt.Sprintf("flush %d", cas+1)}
	if got := strings.Join(f.log, "; "); got != strings.Join(want, "; ") {
		t.Errorf("feed got\n%s\nwant\n%s", got, strings.Join(want, "; "))
	}
}
