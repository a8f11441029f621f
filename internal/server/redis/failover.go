package redis

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/store"
)

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: a coordinated
// failover from this primary to one of its replicas, as Redis 7.0's
// failoverCommand does it:
//
//  1. clients' writes are paused (on both ports; the replication PING is
//     not streamed meanwhile), so the stream's end stops moving;
//  2. the primary waits until a replica (the one named by TO, else any)
//     has acknowledged the whole stream (master_failover_state
//     waiting-for-sync); past TIMEOUT it gives up, or with FORCE fails
//     over to the named replica anyway;
//  3. it becomes a replica of that replica (failover-in-progress): its
//     other replicas are disconnected, and its link's PSYNC carries a
//     fourth argument, FAILOVER, which makes the target promote itself
//     when the replication id is its own, then answer +CONTINUE;
//  4. once the target accepts (+CONTINUE or +FULLRESYNC) the pause ends,
//     and the paused writes are refused as a replica's are (READONLY); if
//     it refuses, the failover is aborted and this server is a primary
//     again.
//
// The replica side is cmdPSync's: a PSYNC <replid> <offset> FAILOVER
// whose replid is this replica's promotes it, as Redis's syncCommand does,
// so MiniKV honours a Redis primary's FAILOVER and a Redis replica honours
// MiniKV's.

// Failover states, as INFO replication's master_failover_state names them.
const (
	noFailover = iota
	failoverWaitForSync
	failoverInProgress
)

var failoverStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failover is the Protocol's coordinated failover, when one runs.
type failover struct {
	mu    sync.Mutex
	state int
	host  string // the target; "" until one is chosen (FAILOVER without TO)
	port  int
	force bool
	end   time.Time // zero: no TIMEOUT
	stop  chan struct{}
}

// failoverState is master_failover_state.
func (p *Protocol) failoverState() string {
	p.fo.mu.Lock()
	defer p.fo.mu.Unlock()
	return failoverStateNames[p.fo.state]
}

// failingOver reports whether a coordinated failover runs: the stream
// must not move (no PING, no GETACK), and replicaof is refused.
func (p *Protocol) failingOver() bool {
	p.fo.mu.Lock()
	defer p.fo.mu.Unlock()
	return p.fo.state != noFailover
}

// cmdFailover is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms].
func cmdFailover(rc *conn, argv [][]byte) {
	p := rc.p
	if p.cluster != nil {
		rc.w.Error("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
		return
	}
	if len(argv) == 2 && is(argv[1], "abort") {
		if !p.failingOver() {
			rc.w.Error("ERR No failover in progress.")
			return
		}
		p.abortFailover("Failover manually aborted")
		rc.w.OK()
		return
	}
	var timeout int64
	force, port, host := false, int64(0), ""
	hasHost := false
	for j := 1; j < len(argv); j++ {
		switch {
		case is(argv[j], "timeout") && j+1 < len(argv) && timeout == 0:
			n, ok := resp.ParseInt(argv[j+1])
			if !ok {
				rc.w.Error("ERR value is not an integer or out of range")
				return
			}
			if n <= 0 {
				rc.w.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case is(argv[j], "to") && j+2 < len(argv) && !hasHost:
			n, ok := resp.ParseInt(argv[j+2])
			if !ok {
				rc.w.Error("ERR value is not an integer or out of range")
				return
			}
			port, host, hasHost = n, string(argv[j+1]), true
			j += 2
		case is(argv[j], "force") && !force:
			force = true
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	if p.failingOver() {
		rc.w.Error("ERR FAILOVER already in progress.")
		return
	}
	if p.masterLink() != nil {
		rc.w.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	}
	pr := &p.repl
	pr.mu.Lock()
	n := len(pr.links)
	pr.mu.Unlock()
	if n == 0 {
		rc.w.Error("ERR FAILOVER requires connected replicas.")
		return
	}
	if force && (timeout == 0 || !hasHost) {
		rc.w.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if hasHost {
		l := p.findReplica(host, port)
		if l == nil {
			rc.w.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if l.state.Load() != linkOnline {
			rc.w.Error("ERR FAILOVER target replica is not online.")
			return
		}
		p.log.Info("FAILOVER requested", "to", net.JoinHostPort(host, strconv.FormatInt(port, 10)))
	} else {
		p.log.Info("FAILOVER requested to any replica")
	}
	fo := &p.fo
	fo.mu.Lock()
	if fo.state != noFailover { // another FAILOVER won the race
		fo.mu.Unlock()
		rc.w.Error("ERR FAILOVER already in progress.")
		return
	}
	fo.state, fo.force, fo.stop = failoverWaitForSync, force, make(chan struct{})
	fo.host, fo.port = "", 0
	if hasHost {
		fo.host, fo.port = host, int(port)
	}
	fo.end = time.Time{}
	if timeout > 0 {
		fo.end = time.Now().Add(time.Duration(min(timeout, 1<<40)) * time.Millisecond)
	}
	stop := fo.stop
	fo.mu.Unlock()
	p.srv.Pause(time.Unix(1<<40, 0), false) // writes wait, as Redis's PAUSE_DURING_FAILOVER
	rc.w.OK()
	go p.failoverLoop(stop)
}

// findReplica is the replica link announced as host:port (its REPLCONF
// ip-address, or its connection's address, and its listening-port).
func (p *Protocol) findReplica(host string, port int64) *replicaLink {
	pr := &p.repl
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for l := range pr.links {
		if strings.EqualFold(l.ip, host) && int64(l.port) == port {
			return l
		}
	}
	return nil
}

// failoverLoop is Redis's updateFailoverStatus, run every 10 ms while the
// failover waits for a replica to catch up.
func (p *Protocol) failoverLoop(stop chan struct{}) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-p.quit:
			return
		case <-t.C:
		}
		if p.failoverStep() {
			return
		}
	}
}

// failoverStep checks once whether the failover can go on; it reports
// true when the wait is over (failed over, or aborted).
func (p *Protocol) failoverStep() bool {
	fo := &p.fo
	fo.mu.Lock()
	if fo.state != failoverWaitForSync {
		fo.mu.Unlock()
		return true
	}
	if !fo.end.IsZero() && !time.Now().Before(fo.end) {
		if fo.force {
			fo.state = failoverInProgress
			host, port := fo.host, fo.port
			fo.mu.Unlock()
			p.log.Info("FAILOVER time out exceeded, failing over", "to", net.JoinHostPort(host, strconv.Itoa(port)))
			p.failoverDemote(host, port)
			return true
		}
		fo.mu.Unlock()
		p.abortFailover("Replica never caught up before timeout")
		return true
	}
	host, port := fo.host, fo.port
	fo.mu.Unlock()

	target := p.caughtUp(host, port, false)
	if target == nil {
		return false
	}
	// Before the role moves, every write that began before the pause is
	// on the stream and the target has it: a write that was running when
	// the pause began holds its shard locks, which Exclusive waits for.
	_ = p.st.Exclusive(func(*store.Store) error { return nil })
	if target = p.caughtUp(host, port, true); target == nil {
		return false
	}
	fo.mu.Lock()
	if fo.state != failoverWaitForSync {
		fo.mu.Unlock()
		return true // aborted meanwhile
	}
	fo.state, fo.host, fo.port = failoverInProgress, target.ip, target.port
	fo.mu.Unlock()
	p.log.Info("Failover target is synced, failing over", "to", net.JoinHostPort(target.ip, strconv.Itoa(target.port)))
	p.failoverDemote(target.ip, target.port)
	return true
}

// caughtUp returns the failover's target (host:port, or when host is ""
// the first replica found) if it is online and has acknowledged the
// whole stream, else nil. sync waits for the changes made so far to be
// on the stream first; without it the check is a cheap first look.
func (p *Protocol) caughtUp(host string, port int, sync bool) *replicaLink {
	if sync {
		p.syncStream()
	}
	pr := &p.repl
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var end int64
	if pr.backlog != nil {
		end = pr.backlog.End()
	}
	for l := range pr.links {
		if host != "" && !(strings.EqualFold(l.ip, host) && l.port == port) {
			continue
		}
		if l.state.Load() == linkOnline && l.ack.Load() == end {
			return l
		}
	}
	return nil
}

// failoverDemote makes this primary a replica of the failover's target,
// as Redis's replicationSetMaster does: the replicas are disconnected (they
// reconnect and continue under the new replication id) and the link's
// PSYNC carries FAILOVER (psyncArgs).
func (p *Protocol) failoverDemote(host string, port int) {
	pr := &p.repl
	pr.mu.Lock()
	links := make([]*replicaLink, 0, len(pr.links))
	for l := range pr.links {
		links = append(links, l)
	}
	pr.mu.Unlock()
	p.follow.start(p, host, port)
	for _, l := range links {
		l.rc.Kill()
	}
}

// abortFailover ends a failover that has not completed: a primary that
// had already become the target's replica is a primary again (Redis's
// replicationUnsetMaster, so its replication id changes), and the writes
// paused go on.
func (p *Protocol) abortFailover(why string) {
	fo := &p.fo
	fo.mu.Lock()
	state, host, port := fo.state, fo.host, fo.port
	fo.mu.Unlock()
	if state == noFailover {
		return
	}
	if host != "" {
		p.log.Info("FAILOVER aborted", "to", net.JoinHostPort(host, strconv.Itoa(port)), "reason", why)
	} else {
		p.log.Info("FAILOVER to any replica aborted", "reason", why)
	}
	if state == failoverInProgress {
		p.promote()
	}
	p.clearFailover()
}

// clearFailover ends the failover's state and its pause of writes.
func (p *Protocol) clearFailover() {
	fo := &p.fo
	fo.mu.Lock()
	if fo.state == noFailover {
		fo.mu.Unlock()
		return
	}
	fo.state, fo.host, fo.port, fo.force, fo.end = noFailover, "", 0, false, time.Time{}
	close(fo.stop)
	fo.mu.Unlock()
	p.srv.Unpause()
}

// psyncArgs is the replica link's PSYNC: with FAILOVER appended while a
// failover hands this server's role to the primary it now follows.
func (p *Protocol) psyncArgs(replid string, off int64) []string {
	args := []string{"PSYNC", replid, strconv.FormatInt(off, 10)}
	p.fo.mu.Lock()
	if p.fo.state == failoverInProgress {
		args = append(args, "FAILOVER")
	}
	p.fo.mu.Unlock()
	return args
}

// errFailoverRejected ends a link whose PSYNC FAILOVER was refused.
var errFailoverRejected = errors.New("failover target rejected psync request")

// failoverPSyncReply completes or aborts a failover in progress with the
// target's answer to PSYNC ... FAILOVER: +CONTINUE or +FULLRESYNC end it
// (the paused writes go on, refused now as a replica's), anything else
// aborts it. It runs on the link's goroutine, which the abort ends, so
// the abort runs on its own.
func (p *Protocol) failoverPSyncReply(reply string) error {
	p.fo.mu.Lock()
	state := p.fo.state
	p.fo.mu.Unlock()
	if state != failoverInProgress {
		return nil
	}
	if strings.HasPrefix(reply, "+CONTINUE") || strings.HasPrefix(reply, "+FULLRESYNC") {
		p.clearFailover()
		p.log.Info("FAILOVER done: following the new primary")
		return nil
	}
	go p.abortFailover("Failover target rejected psync request")
	return errFailoverRejected
}

// psyncFailover is the replica's part of a failover (PSYNC <replid>
// <offset> FAILOVER, from its primary): it promotes itself when replid is
// its own and reports true, or answers the error Redis does and reports
// false. A server failing over itself refuses every SYNC.
func (rc *conn) psyncFailover(argv [][]byte) bool {
	p := rc.p
	if rc.link != nil {
		return false // already a replica: Redis ignores it
	}
	if len(argv) > 3 && is(argv[0], "psync") && is(argv[3], "failover") {
		if p.masterLink() == nil {
			rc.w.Error("ERR PSYNC FAILOVER can't be sent to a master.")
			return false
		}
		p.repl.mu.Lock()
		mine := string(argv[1]) == p.repl.replid
		p.repl.mu.Unlock()
		if !mine {
			rc.w.Error("ERR PSYNC FAILOVER replid must match my replid.")
			return false
		}
		p.promote()
		p.log.Info("MASTER MODE enabled (failover request)", "from", rc.RemoteAddr().String())
	}
	if p.failingOver() {
		rc.w.Error("NOMASTERLINK Can't SYNC while failing over")
		return false
	}
	return true
}

func failoverCommands() []respCommand {
	return []respCommand{{name: "failover", arity: -1, flags: []string{"admin", "noscript", "stale"}, group: "server", since: "6.2.0",
		complexity: "O(1)", summary: "Start a coordinated failover between this server and one of its replicas.", run: cmdFailover}}
}
