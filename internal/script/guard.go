package script

import (
	"runtime/metrics"
	"time"
)

// The memory guard. gopher-lua allocates from the Go heap and cannot
// bound what a script allocates (Lua's allocator hook, which Redis relies
// on, has no counterpart), so a watchdog looks at the heap while a script
// runs: when it has grown by more than Config.MaxMemory since the script
// began, the script is stopped with an error, before it takes the
// process down. The watchdog looks every guardTick while scripts run and
// for guardLinger after the last; then it sleeps, and the next Begin
// wakes it. (Woken by every Begin, it cost a thread wake-up per EVALSHA:
// 3 % of the server's CPU at redis-benchmark -P 1.)

// guardTick is how often the watchdog looks at a running script.
const guardTick = 10 * time.Millisecond

const heapMetric = "/memory/classes/heap/objects:bytes"

// guardLinger is how long the watchdog keeps looking after the last run
// it saw before it sleeps.
const guardLinger = time.Second

// wake starts the watchdog, or wakes it if it sleeps (Begin calls it once
// the run is published).
func (e *Engine) wake() {
	if e.guardAwake.Load() {
		return // it will see the run at its next look
	}
	e.guardOnce.Do(func() {
		e.guardWake = make(chan struct{}, 1)
		go e.guard()
	})
	select {
	case e.guardWake <- struct{}{}:
	default:
	}
}

func (e *Engine) guard() {
	sample := []metrics.Sample{{Name: heapMetric}}
	heap := func() int64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(sample[0].Value.Uint64())
	}
	t := time.NewTicker(guardTick)
	defer t.Stop()
	var seen *Run
	var base int64
	var seenAt, lastRun time.Time
	e.guardAwake.Store(true)
	for {
		r := e.run.Load()
		if r == nil {
			seen = nil
			if time.Since(lastRun) < guardLinger {
				select {
				case <-t.C:
				case <-e.guardStop:
					return
				}
				continue
			}
			// Asleep first, then one more look: a Begin that found the
			// watchdog awake published its run before this store, so the
			// look sees it; one that finds it asleep wakes it.
			e.guardAwake.Store(false)
			if e.run.Load() != nil {
				e.guardAwake.Store(true)
				continue
			}
			select {
			case <-e.guardWake:
			case <-e.guardStop:
				return
			}
			e.guardAwake.Store(true)
			lastRun = time.Now()
			continue
		}
		lastRun = time.Now()
		if r != seen {
			seen, base, seenAt = r, heap(), time.Now()
		} else if heap()-base > e.cfg.MaxMemory {
			e.stop(r, errOutOfMemory)
		}
		if r.rescuer != nil && time.Since(seenAt) >= r.rescueAfter {
			r.rescuer.Rescue()
			r.rescuer = nil // only this goroutine reads it once the run is published
		}
		select {
		case <-t.C:
		case <-e.guardStop:
			return
		}
	}
}

// Close stops the watchdog and drops the idle states.
func (e *Engine) Close() {
	e.closeOnce.Do(func() { close(e.guardStop) })
	e.Flush()
}
