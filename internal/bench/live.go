package bench

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Live prints one self-overwriting progress line while a phase runs. A nil
// *Live prints nothing, which is what non-terminal output gets: progress
// lines would only clutter a file or a pipe.
type Live struct {
	W        io.Writer
	Interval time.Duration
	Prefix   string // e.g. "[2/3]", set by the caller between runs
}

// Start begins reporting the progress of s under label; total (requests)
// or dur (duration) give the percentage when known. The returned function
// stops the reporting and clears the line.
func (l *Live) Start(label string, s *Session, total int64, dur time.Duration) (stop func()) {
	if l == nil || l.W == nil {
		return func() {}
	}
	iv := l.Interval
	if iv == 0 {
		iv = 500 * time.Millisecond
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(iv)
		defer t.Stop()
		start := time.Now()
		last, lastT := int64(0), start
		for {
			select {
			case <-done:
				fmt.Fprint(l.W, "\r\033[K")
				return
			case now := <-t.C:
				n := s.Done.Load()
				rate := float64(n-last) / now.Sub(lastT).Seconds()
				last, lastT = n, now
				el := now.Sub(start)
				pct := ""
				switch {
				case total > 0:
					pct = fmt.Sprintf(" %3.0f%%", 100*float64(n)/float64(total))
				case dur > 0:
					pct = fmt.Sprintf(" %3.0f%%", 100*min(1, el.Seconds()/dur.Seconds()))
				}
				errs := ""
				if e := s.Errs.Load(); e > 0 {
					errs = fmt.Sprintf("  ERRORS %d", e)
				}
				fmt.Fprintf(l.W, "\r\033[K%s %s%s  %5.1fs  %s ops/s  %s done%s",
					l.Prefix, label, pct, el.Seconds(), humanCount(rate), humanCount(float64(n)), errs)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
