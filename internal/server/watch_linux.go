//go:build linux

package server

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Watching a socket that is not a connection of the loop's own: a
// replica's link to its primary, which the redis protocol reads itself
// (WatchFD). Its bytes are then applied on the loop's goroutine, as
// Redis's one thread reads its primary between its clients: on a loaded
// machine, a goroutine of its own that parked whenever it had caught up
// and was woken for the next write made the replica wake threads several
// times as often as Redis and wait for a core each time
// (docs/benchmarks.md).

// watch is a socket the loop watches for another part of the server.
type watch struct {
	fd int
	fn func() bool

	mu    sync.Mutex // held while fn runs
	gone  bool       // under mu: fn is not called again
	close sync.Once  // of fd, once the loop's epoll no longer has it
}

// WatchFD has an event loop call fn on its goroutine whenever fd is
// readable (level-triggered: again on every pass while it stays so),
// until fn returns false or unwatch is called. fn must not block. fd is
// the loop's from then on: it is closed once no longer watched, after
// the loop's epoll set lets it go (an fd number closed first could be a
// new connection's by then). unwatch does not wait for the loop, which
// may be busy with a command that waits for the unwatch's caller (a
// REPLICAOF ending the link); it waits only for a call of fn under way,
// and fn is not called after it returns. ok is false when there is no
// loop (none configured, or shutting down): fd stays the caller's.
func (s *Server) WatchFD(fd int, fn func() bool) (unwatch func(), ok bool) {
	if len(s.loops) == 0 {
		return nil, false
	}
	l := s.loops[0]
	w := &watch{fd: fd, fn: fn}
	l.mu.Lock()
	if l.stop {
		l.mu.Unlock()
		return nil, false
	}
	l.watchAdd = append(l.watchAdd, w)
	l.mu.Unlock()
	l.wake()
	return func() {
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
		l.mu.Lock()
		stopped := l.stopped
		if !stopped {
			l.watchDel = append(l.watchDel, w)
		}
		l.mu.Unlock()
		if stopped {
			w.closeFD() // the loop's epoll set is closed or closing
			return
		}
		l.wake()
	}, true
}

func (w *watch) closeFD() { w.close.Do(func() { _ = unix.Close(w.fd) }) }

// takeWatchesLocked applies the WatchFD calls and unwatches made since the
// last pass. Only the loop's goroutine calls it, with l.mu held.
func (l *eventLoop) takeWatchesLocked() {
	for _, w := range l.watchAdd {
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, w.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(w.fd)}); err != nil {
			l.srv.log.Error("event loop: cannot watch a socket", "fd", w.fd, "err", err)
			continue
		}
		if l.watches == nil {
			l.watches = make(map[int32]*watch)
		}
		l.watches[int32(w.fd)] = w
	}
	l.watchAdd = nil
	for _, w := range l.watchDel {
		l.unwatch(w)
	}
	l.watchDel = nil
}

// unwatch stops watching w, if the loop still does, and closes its fd.
func (l *eventLoop) unwatch(w *watch) {
	if l.watches[int32(w.fd)] == w {
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, w.fd, nil)
		delete(l.watches, int32(w.fd))
	}
	w.closeFD()
}

// serveWatch calls the function watching fd, if one does, and reports
// whether one did.
func (l *eventLoop) serveWatch(fd int32) bool {
	w := l.watches[fd]
	if w == nil {
		return false
	}
	w.mu.Lock()
	keep := !w.gone && w.fn()
	w.gone = !keep
	w.mu.Unlock()
	if !keep {
		l.unwatch(w)
	}
	return true
}

// endWatchesLocked, as the loop stops: unwatch closes fds itself from now
// on, and those waiting for the loop are closed.
func (l *eventLoop) endWatchesLocked() {
	l.stopped = true
	for _, w := range l.watchDel {
		w.closeFD()
	}
	for _, w := range l.watchAdd {
		w.closeFD()
	}
	l.watchDel, l.watchAdd = nil, nil
}
