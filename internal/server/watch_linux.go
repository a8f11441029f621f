//go:build linux

package server

import "golang.org/x/sys/unix"

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
}

// WatchFD has an event loop call fn on its goroutine whenever fd is
// readable (level-triggered: again on every pass while it stays so),
// until fn returns false or unwatch is called; unwatch returns once the
// loop no longer calls fn. fn must not block. ok is false when there is
// no loop to watch it (none configured, or shutting down): the caller
// reads fd itself. fd stays the caller's to close, after unwatch.
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
		done := make(chan struct{})
		l.mu.Lock()
		if l.stopped {
			l.mu.Unlock()
			return
		}
		l.watchDel = append(l.watchDel, watchDel{w, done})
		l.mu.Unlock()
		l.wake()
		<-done
	}, true
}

type watchDel struct {
	w    *watch
	done chan struct{}
}

// takeWatches applies the WatchFD calls and unwatches made since the last
// pass. Only the loop's goroutine calls it, with l.mu held.
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
	for _, d := range l.watchDel {
		l.unwatch(d.w)
		close(d.done)
	}
	l.watchDel = nil
}

// unwatch stops watching w, if the loop still does.
func (l *eventLoop) unwatch(w *watch) {
	if l.watches[int32(w.fd)] == w {
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, w.fd, nil)
		delete(l.watches, int32(w.fd))
	}
}

// serveWatch calls the function watching fd, if one does, and reports
// whether one did.
func (l *eventLoop) serveWatch(fd int32) bool {
	w := l.watches[fd]
	if w == nil {
		return false
	}
	if !w.fn() {
		l.unwatch(w)
	}
	return true
}

// endWatchesLocked releases every unwatch waiting when the loop stops.
func (l *eventLoop) endWatchesLocked() {
	l.stopped = true
	for _, d := range l.watchDel {
		close(d.done)
	}
	l.watchDel, l.watchAdd = nil, nil
}
