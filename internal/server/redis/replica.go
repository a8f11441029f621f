package redis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/replication"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The replica side of Redis's replication protocol (issue 39): REPLICAOF
// host port makes MiniKV follow a primary, Redis or MiniKV, as a Redis
// 7.0 replica does. Its link connects, handshakes (PING, REPLCONF
// listening-port and capa eof psync2, PSYNC with the replid and offset
// it has), loads the primary's RDB on a full resync (the store is
// emptied first), then applies the stream's commands as the primary's
// client, counting their bytes as its offset, acknowledging it every
// second (REPLCONF ACK) and whenever asked (GETACK). A dropped link
// reconnects every second and continues from its offset (PSYNC
// +CONTINUE) when the primary's backlog still holds it. The stream's
// bytes also go into this server's own backlog, unchanged, so after a
// promotion (REPLICAOF NO ONE) the other replicas of the old primary can
// continue from it (PSYNC2: the old replid becomes replid2).
//
// While it is a replica, clients' writes are refused on both ports
// (replica-read-only yes, the default) with Redis's -READONLY words.

// Redis's refusals of a client's write: on a replica, and on a primary
// with fewer good replicas than min-replicas-to-write.
const (
	errReadOnly   = "READONLY You can't write against a read only replica."
	errNoReplicas = "NOREPLICAS Not enough good replicas to write."
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// staleRefused reports whether commands that may not see stale data are
// refused now: a replica whose link is not up, with
// replica-serve-stale-data no.
func (p *Protocol) staleRefused() bool {
	l := p.masterLink()
	return l != nil && l.state.Load() != linkConnected
}

// updateGate installs the write gate replication needs now (the server
// core asks it before every client write, on both ports): a read-only
// replica refuses writes; a primary with min-replicas-to-write refuses
// them while fewer replicas than that have acknowledged within
// min-replicas-max-lag seconds (counted at most once a second, as Redis's
// cron counts them); otherwise no gate.
func (p *Protocol) updateGate() {
	replica := p.masterLink() != nil
	switch {
	case replica && p.follow.readOnly.Load():
		p.srv.SetWriteGate(func() string { return errReadOnly })
	case !replica && p.repl.minReplicas.Load() > 0 && p.repl.minLag.Load() > 0:
		p.srv.SetWriteGate(func() string {
			if p.repl.goodReplicas() < p.repl.minReplicas.Load() {
				return errNoReplicas
			}
			return ""
		})
	default:
		p.srv.SetWriteGate(nil)
	}
}

// follower is the Protocol's replication state as a replica.
type follower struct {
	mu   sync.Mutex  // protects link
	link *masterLink // nil: a primary

	// applyMu is held while one command of the primary's stream is
	// applied and counted into the offset and the backlog, and while a
	// full resync's snapshot replaces the store: a full resync served to
	// a replica of this replica holds it to take the store at an offset
	// (psync).
	applyMu sync.Mutex

	readOnly     atomic.Bool  // replica-read-only
	staleRefused atomic.Bool  // replica-serve-stale-data no
	priority     atomic.Int64 // replica-priority
	announce     atomic.Int64 // replica-announce-port: the port announced to the primary; 0: the RESP port
	respPort     atomic.Int64 // the RESP port served (SetReplicaPort)
	masterAuth   atomic.Pointer[string]
	masterUser   atomic.Pointer[string]
	timeout      atomic.Int64 // repl-timeout, seconds
}

func (f *follower) init() {
	f.readOnly.Store(true)
	f.priority.Store(100)
	f.timeout.Store(60)
}

// Link states, as ROLE names them.
const (
	linkConnect    = iota // waiting to connect
	linkConnecting        // connected, handshaking
	linkSync              // receiving the RDB
	linkConnected         // applying the stream
)

var linkStateNames = [...]string{"connect", "connecting", "sync", "connected"}

// masterLink is the replica's connection to its primary.
type masterLink struct {
	p          *Protocol
	host       string
	port       int
	stop       chan struct{}
	done       chan struct{}
	state      atomic.Int32
	lastIO     atomic.Int64 // Unix s of the last byte from the primary
	downSince  atomic.Int64 // Unix s the link went down; 0: never up
	offset     atomic.Int64 // bytes of the stream applied: slave_repl_offset
	readOffset atomic.Int64 // bytes read: slave_read_repl_offset
	// synced is the offset known to be on stable storage, in durable
	// mode: what REPLCONF ACK's FACK says, for WAITAOF.
	synced  atomic.Int64
	syncNow chan struct{} // a GETACK asks for a fresh synced offset

	wmu sync.Mutex // serialises writes to nc (ACKs)
	nc  net.Conn
}

// SetReplicaPort sets the port a replica announces to its primary
// (REPLCONF listening-port): the RESP port it serves, unless
// replica-announce-port says otherwise.
func (p *Protocol) SetReplicaPort(port int) { p.follow.respPort.Store(int64(port)) }

// Replicate makes the server a replica of host:port (--replicaof), as
// REPLICAOF does.
func (p *Protocol) Replicate(host string, port int) {
	p.loadReplState()
	p.follow.start(p, host, port)
}

// replicaOfValue is the primary followed, as --replicaof's HOST:PORT,
// or "" on a primary.
func (p *Protocol) replicaOfValue() string {
	if l := p.masterLink(); l != nil {
		return net.JoinHostPort(l.host, strconv.Itoa(l.port))
	}
	return ""
}

// masterLink returns the link to the primary, or nil on a primary.
func (p *Protocol) masterLink() *masterLink {
	p.follow.mu.Lock()
	defer p.follow.mu.Unlock()
	return p.follow.link
}

// cmdReplicaOf is REPLICAOF host port | NO ONE (and SLAVEOF).
func cmdReplicaOf(rc *conn, argv [][]byte) {
	p := rc.p
	if p.cluster != nil {
		rc.w.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if p.failingOver() {
		rc.w.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if is(argv[1], "no") && is(argv[2], "one") {
		if p.masterLink() != nil {
			p.promote()
		}
		rc.w.OK()
		return
	}
	port, err := strconv.ParseInt(string(argv[2]), 10, 64)
	if err != nil || port < 0 || port > 65535 {
		rc.w.Error("ERR Invalid master port")
		return
	}
	if l := p.masterLink(); l != nil && strings.EqualFold(l.host, string(argv[1])) && l.port == int(port) {
		rc.w.Simple("OK Already connected to specified master")
		return
	}
	p.follow.start(p, string(argv[1]), int(port))
	rc.w.OK()
}

// start ends any link and begins one to host:port: from now on the
// server is a replica.
func (f *follower) start(p *Protocol, host string, port int) {
	f.mu.Lock()
	old := f.link
	l := &masterLink{p: p, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{}), syncNow: make(chan struct{}, 1)}
	f.link = l
	f.mu.Unlock()
	if old != nil {
		old.close()
	} else {
		p.detachSource() // a primary no longer: the stream now comes from the new primary
	}
	p.disconnectReplicas() // they resync with this server once it has synced, as Redis's replicas do
	p.updateGate()
	p.log.Info("replicating", "primary", net.JoinHostPort(host, strconv.Itoa(port)))
	go l.run()
}

// promote makes the replica a primary (REPLICAOF NO ONE): the link ends,
// writes are taken again, and the replication id changes, the old one
// kept as replid2 up to this offset so the old primary's other replicas
// can continue from here.
func (p *Protocol) promote() {
	l := p.follow.takeLink()
	if l == nil {
		return
	}
	l.close()
	p.updateGate()
	if p.st.Durable() {
		p.st.SetAux(replAux, nil) // a primary now: nothing to continue from at a restart
	}
	pr := &p.repl
	pr.mu.Lock()
	var end int64
	if pr.backlog != nil {
		end = pr.backlog.End()
	}
	pr.replid2, pr.second, pr.replid = pr.replid, end+1, newReplID()
	pr.alone = time.Now().Unix() // the old primary's replicas have repl-backlog-ttl to come, as in Redis
	pr.mu.Unlock()
	p.attachSource()
	p.log.Info("promoted to primary", "replid", pr.replid, "replid2", pr.replid2, "offset", end)
}

// takeLink removes the link to the primary, if any, and returns it for
// the caller to close.
func (f *follower) takeLink() *masterLink {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.link
	f.link = nil
	return l
}

func (l *masterLink) close() {
	close(l.stop)
	l.wmu.Lock()
	if l.nc != nil {
		l.nc.Close()
	}
	l.wmu.Unlock()
	<-l.done
}

// run connects again and again until the link is closed.
func (l *masterLink) run() {
	defer close(l.done)
	for {
		err := l.session()
		if l.state.Load() == linkConnected || l.downSince.Load() == 0 {
			l.downSince.Store(time.Now().Unix())
		}
		l.state.Store(linkConnect)
		select {
		case <-l.stop:
			return
		default:
		}
		l.p.log.Warn("link to the primary down; retrying in 1 s", "primary", net.JoinHostPort(l.host, strconv.Itoa(l.port)), "err", err)
		select {
		case <-l.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// session is one connection to the primary: handshake, sync, stream.
func (l *masterLink) session() error {
	p := l.p
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(l.host, strconv.Itoa(l.port)), 10*time.Second)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	select {
	case <-l.stop:
		l.wmu.Unlock()
		nc.Close()
		return errLinkClosed
	default:
	}
	l.nc = nc
	l.wmu.Unlock()
	defer nc.Close()
	l.state.Store(linkConnecting)
	br := bufio.NewReaderSize(nc, 64<<10)
	timeout := time.Duration(p.follow.timeout.Load()) * time.Second
	ask := func(args ...string) (string, error) {
		var b []byte
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		b = replication.AppendCommand(b, bs...)
		_ = nc.SetDeadline(time.Now().Add(timeout))
		if _, err := nc.Write(b); err != nil {
			return "", err
		}
		line, err := readReplyLine(br)
		l.lastIO.Store(time.Now().Unix())
		return line, err
	}
	if r, err := ask("PING"); err != nil {
		return err
	} else if r[0] == '-' && !strings.HasPrefix(r, "-NOAUTH") && !strings.HasPrefix(r, "-NOPERM") {
		return fmt.Errorf("primary answered PING with %s", r)
	}
	if pass := p.follow.masterAuth.Load(); pass != nil {
		args := []string{"AUTH", *pass}
		if user := p.follow.masterUser.Load(); user != nil {
			args = []string{"AUTH", *user, *pass}
		}
		if r, err := ask(args...); err != nil {
			return err
		} else if r[0] == '-' {
			return fmt.Errorf("primary refused AUTH: %s", r)
		}
	}
	port := p.follow.announce.Load()
	if port == 0 {
		port = p.follow.respPort.Load()
	}
	if r, err := ask("REPLCONF", "listening-port", strconv.FormatInt(port, 10)); err != nil {
		return err
	} else if r[0] == '-' {
		p.log.Info("primary refused REPLCONF listening-port", "reply", r)
	}
	if _, err := ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return err
	}
	pr := &p.repl
	pr.mu.Lock()
	replid, off := "?", int64(-1)
	if pr.backlog != nil {
		replid, off = pr.replid, pr.backlog.End()+1
	}
	pr.mu.Unlock()
	r, err := ask(p.psyncArgs(replid, off)...) // with FAILOVER during one (failover.go)
	if err != nil {
		return err
	}
	if err := p.failoverPSyncReply(r); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(r, "+FULLRESYNC "):
		f := strings.Fields(r)
		if len(f) != 3 {
			return fmt.Errorf("malformed reply to PSYNC: %q", r)
		}
		start, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("malformed reply to PSYNC: %q", r)
		}
		l.state.Store(linkSync)
		path, sum, err := l.readSnapshot(nc, br, timeout)
		if path != "" {
			defer os.Remove(path)
		}
		if err != nil {
			return err
		}
		// The store, the backlog and the offset change together: no
		// replica of this one takes a snapshot meanwhile, and those
		// following the old history must resync.
		p.follow.applyMu.Lock()
		p.disconnectReplicas()
		err = l.loadSnapshot(path, sum)
		if err == nil {
			pr.mu.Lock()
			pr.replid, pr.replid2, pr.second = f[1], "0000000000000000000000000000000000000000", -1
			pr.backlog = replication.NewBacklog(int(pr.backlogSize.Load()), start)
			pr.mu.Unlock()
			l.offset.Store(start)
			l.readOffset.Store(start)
			if p.st.Durable() {
				p.saveReplState(f[1], start)
			}
		}
		p.follow.applyMu.Unlock()
		if err != nil {
			return err
		}
		p.log.Info("full resync from the primary done", "replid", f[1], "offset", start)
	case strings.HasPrefix(r, "+CONTINUE"):
		pr.mu.Lock()
		if pr.backlog == nil { // we asked for a full resync (PSYNC ? -1)
			pr.mu.Unlock()
			return fmt.Errorf("primary answered %q to a PSYNC with no history", r)
		}
		newID := false
		if f := strings.Fields(r); len(f) == 2 && f[1] != pr.replid {
			// The primary changed (a failover): its history is ours up to
			// here, under its new id.
			pr.replid2, pr.second, pr.replid = pr.replid, off, f[1]
			newID = true
		}
		start := pr.backlog.End()
		pr.mu.Unlock()
		if newID {
			p.disconnectReplicas() // they learn the new id, and continue (replid2), as Redis's do
		}
		l.offset.Store(start)
		l.readOffset.Store(start)
		p.log.Info("partial resync from the primary", "offset", start)
	default:
		return fmt.Errorf("primary answered PSYNC with %q", r)
	}
	l.state.Store(linkConnected)
	return l.stream(nc, br, timeout)
}

// readReplyLine reads one reply line (a simple string or error), skipping
// the empty lines a primary sends to keep the link alive while it prepares
// a snapshot.
func readReplyLine(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			return line, nil
		}
	}
}

// readSnapshot reads the RDB of a full resync ($EOF:<mark> ... <mark>, or
// $<length> and that many bytes) into a temporary file, whose path it
// returns (the caller removes it), summing it as it comes
// (rdb.CRCWriter), so that the load need not read it again for its
// checksum.
func (l *masterLink) readSnapshot(nc net.Conn, br *bufio.Reader, timeout time.Duration) (string, *rdb.CRCWriter, error) {
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	head, err := readReplyLine(br)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp("", "minikv-replica-*.rdb")
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	sum := &rdb.CRCWriter{}
	w := io.MultiWriter(f, sum)
	rd := &deadlineReader{nc: nc, r: br, timeout: timeout, lastIO: &l.lastIO}
	switch {
	case strings.HasPrefix(head, "$EOF:") && len(head) == 5+40:
		if err := copyUntilMark(w, br, []byte(head[5:]), nc, timeout, &l.lastIO); err != nil {
			return f.Name(), nil, err
		}
	case strings.HasPrefix(head, "$"):
		n, err := strconv.ParseInt(head[1:], 10, 64)
		if err != nil || n < 0 {
			return f.Name(), nil, fmt.Errorf("malformed snapshot header %q", head)
		}
		if _, err := io.CopyN(w, rd, n); err != nil {
			return f.Name(), nil, err
		}
	default:
		return f.Name(), nil, fmt.Errorf("primary sent %q for the snapshot", head)
	}
	return f.Name(), sum, f.Close()
}

// loadSnapshot empties the store and loads the primary's RDB at path
// into it; sum is the CRCWriter it went through.
func (l *masterLink) loadSnapshot(path string, sum *rdb.CRCWriter) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := checkSnapshot(data, sum); err != nil {
		return err // the data kept: a bad snapshot is refused before the store is emptied (guard.go)
	}
	st := l.p.st
	st.FlushAll(0)
	l.p.srv.Flushed(nil)  // clients tracking keys: every key is invalid
	l.p.functions.Flush() // the primary's libraries replace ours, as Redis's replica does
	l.p.saveFunctions()
	stats, err := rdb.LoadBytes(data, st, rdb.LoadOptions{Function: l.p.loadRDBFunction, Databases: l.p.servedDatabases(), Sum: sum})
	if err != nil {
		return fmt.Errorf("loading the primary's snapshot: %w", err)
	}
	l.p.log.Info("loaded the primary's snapshot", "keys", stats.Keys, "expired", stats.Expired)
	return nil
}

// deadlineReader reads the link, pushing its read deadline on before each
// read and noting the time of the last bytes.
type deadlineReader struct {
	nc      net.Conn
	r       io.Reader
	timeout time.Duration
	lastIO  *atomic.Int64
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	_ = d.nc.SetReadDeadline(time.Now().Add(d.timeout))
	n, err := d.r.Read(p)
	if n > 0 {
		d.lastIO.Store(time.Now().Unix())
	}
	return n, err
}

// copyUntilMark copies the link's bytes to w up to the 40-byte mark that
// ends a diskless snapshot, which is not copied; it consumes nothing
// after the mark (the stream's first commands may come in the same
// read), working on br's buffer directly.
func copyUntilMark(w io.Writer, br *bufio.Reader, mark []byte, nc net.Conn, timeout time.Duration, lastIO *atomic.Int64) error {
	var data, carry []byte // carry: the last bytes seen, which may begin the mark
	for {
		_ = nc.SetReadDeadline(time.Now().Add(timeout))
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		lastIO.Store(time.Now().Unix())
		chunk, _ := br.Peek(br.Buffered())
		data = append(append(data[:0], carry...), chunk...)
		if i := bytes.Index(data, mark); i >= 0 {
			if _, err := w.Write(data[:i]); err != nil {
				return err
			}
			_, err := br.Discard(i + len(mark) - len(carry))
			return err
		}
		keep := min(len(mark)-1, len(data))
		if _, err := w.Write(data[:len(data)-keep]); err != nil {
			return err
		}
		carry = append(carry[:0], data[len(data)-keep:]...)
		if _, err := br.Discard(len(chunk)); err != nil {
			return err
		}
	}
}

// stream applies the primary's commands until the link fails or closes.
// Each command is run as the primary's client (its replies dropped,
// read-only and memory refusals not applied), which CLIENT LIST shows
// with flag M and CLIENT KILL TYPE master closes, as Redis's; its bytes
// are counted into the offset and copied into this server's backlog.
// A transaction's commands (MULTI ... EXEC) are counted together once
// EXEC has run, as Redis counts them: the offset never stands inside
// one, so a snapshot taken at it (psync) holds all of it or none.
func (l *masterLink) stream(nc net.Conn, br *bufio.Reader, timeout time.Duration) error {
	p := l.p
	mc := p.NewHandler(p.srv.NewLinkConn(nc, p)).(*conn)
	mc.master = true
	mc.mute()
	mc.publish()
	unlist := p.srv.ListLinkConn(mc.Conn, mc)
	defer unlist()
	defer mc.Close() // its command statistics join the closed connections'
	ackDone := make(chan struct{})
	defer close(ackDone)
	l.sendAck() // at once, as Redis's replica: a primary that sent a diskless snapshot streams after it
	go l.ackLoop(ackDone)
	src := &linkReader{dr: deadlineReader{nc: nc, r: br, timeout: timeout, lastIO: &l.lastIO}, fd: -1}
	rd := resp.NewReader(src, server.ReadBufSize, 0)
	// Every bulk is kept whole, however long: the offset counts the
	// command's bytes as they came.
	rd.SetMaxBulkLen(p.protoMaxBulk.Load(), int(p.protoMaxBulk.Load()))
	a := &applier{l: l, mc: mc, rd: rd, durable: p.st.Durable()}
	p.repl.mu.Lock()
	a.replid = p.repl.replid
	p.repl.mu.Unlock()
	for {
		// On this goroutine: what the snapshot's reads left buffered,
		// a command longer than the read buffer, a turn the applier's
		// lock was taken (a sub-replica's snapshot), and in durable mode
		// everything.
		argv, out, ok, err := rd.ReadRaw(a.raw)
		if err != nil {
			return streamError(err) // guard.go
		}
		p.follow.applyMu.Lock()
		err = a.run(argv, out, ok)
		p.follow.applyMu.Unlock()
		if err != nil {
			return streamError(err)
		}
		if a.durable || a.noLoop || rd.Buffered() > 0 || br.Buffered() > 0 {
			continue
		}
		if err := a.inLoop(src, timeout); !errors.Is(err, errLeaveLoop) {
			return err
		}
	}
}

// testHookLoopApplies counts the event loops' turns at applying a
// stream (tests check that the loop did).
var testHookLoopApplies atomic.Int64

// errLeaveLoop is what applier.inLoop returns when the stream goes back
// to the link's goroutine.
var errLeaveLoop = errors.New("replication: the stream leaves the event loop")

// linkReader is the stream's source: the link's socket through Go's
// poller with the repl-timeout deadline (dr) on the link's goroutine, or,
// while an event loop applies the stream (applier.inLoop), a duplicate of
// the socket read without waiting.
type linkReader struct {
	dr       deadlineReader
	fd       int // the duplicate, while nonblock: the loop owns and closes it
	nonblock bool
}

func (r *linkReader) Read(b []byte) (int, error) {
	if !r.nonblock {
		return r.dr.Read(b)
	}
	n, err := unix.Read(r.fd, b)
	switch {
	case n > 0:
		r.dr.lastIO.Store(time.Now().Unix())
		return n, nil
	case err == unix.EAGAIN || err == unix.EINTR:
		return 0, server.ErrWouldBlock
	case err == nil:
		return 0, io.EOF
	}
	return 0, err
}

// applier applies the primary's stream: each command as the primary's
// client (mc), its bytes kept as they came and counted into the offset
// and the backlog.
type applier struct {
	l       *masterLink
	mc      *conn
	rd      *resp.Reader
	durable bool
	noLoop  bool // no event loop applies the stream: the goroutine applies all
	replid  string

	raw      []byte // the stream's bytes applied and not yet counted (a MULTI block's, until its EXEC)
	read     int64  // of those, the bytes not yet counted into readOffset
	prefetch [store.MaxPrefetch][]byte
	ahead    int // commands read whose keys were prefetched
	applied  int
}

// run applies the command ReadRaw returned (argv; out and ok as ReadRaw's)
// and then those already buffered behind it, up to 256 (one in durable
// mode, where each command's changes and the offset after it are one
// batch on disk), and counts them together: a lock, a backlog append and
// an offset per command cost the replica CPU it lacks when its primary is
// loaded (docs/benchmarks.md). The caller holds follow.applyMu.
func (a *applier) run(argv [][]byte, out []byte, ok bool) (err error) {
	var release func()
	if a.durable {
		release = a.l.p.st.Hold()
	}
	for batch := 0; ; batch++ {
		a.apply(argv, out, ok)
		if a.durable || batch == 255 || a.rd.Ready() != resp.FrameComplete || a.p().srv.Paused() {
			break
		}
		if argv, out, ok, err = a.rd.ReadRaw(a.raw); err != nil {
			break
		}
	}
	a.count()
	if a.durable {
		release()
	}
	return err
}

func (a *applier) p() *Protocol { return a.l.p }

// apply runs one command of the stream.
func (a *applier) apply(argv [][]byte, out []byte, ok bool) {
	if len(argv) == 0 {
		return
	}
	l, mc, p := a.l, a.mc, a.l.p
	n := len(a.raw)
	if ok {
		a.raw = out
	} else {
		a.raw = replication.AppendCommand(a.raw, argv...)
	}
	a.read += int64(len(a.raw) - n)
	if a.ahead > 0 {
		a.ahead--
	} else if p.st.PrefetchPays() {
		// The commands buffered behind this one: their lookups' cache
		// misses overlap, as a client's pipeline's do
		// (server.Conn.prefetchBatch). Applying the stream one lookup
		// miss at a time made a replica lag its primary under load
		// (docs/benchmarks.md).
		ks, k := mc.keysIn(a.rd.Pending(), a.prefetch[:0])
		if len(ks) > 1 {
			p.st.Prefetch(ks)
		}
		clear(ks)
		a.ahead = k
	}
	if is(argv[0], "replconf") && len(argv) >= 2 && is(argv[1], "getack") {
		// The offset before this command, as Redis answers.
		cmd := slices.Clone(a.raw[n:])
		a.raw, a.read = a.raw[:n], a.read-int64(len(cmd))
		a.count()
		l.sendAck()
		a.raw, a.read = append(a.raw, cmd...), a.read+int64(len(cmd))
		select {
		case l.syncNow <- struct{}{}: // and a FACK once that is on disk
		default:
		}
		return
	}
	mc.newBatch()
	mc.dispatch(argv)
	if a.applied++; a.applied&255 == 0 || a.rd.Buffered() == 0 {
		mc.Ran() // CLIENT LIST's idle: a clock read per command cost 7 % of applying SETs
	}
}

// count moves what was applied into the offset, the backlog (and in
// durable mode the store's record of both), unless a MULTI block is
// open: the offset never stands inside one.
func (a *applier) count() {
	l, p := a.l, a.l.p
	l.readOffset.Add(a.read)
	a.read = 0
	if a.mc.multi.active || len(a.raw) == 0 {
		return
	}
	p.repl.mu.Lock()
	bl := p.repl.backlog
	p.repl.mu.Unlock()
	bl.Append(a.raw)
	off := l.offset.Add(int64(len(a.raw)))
	a.raw = a.raw[:0]
	if a.durable {
		p.saveReplState(a.replid, off)
	}
}

// inLoop has an event loop apply the stream as it arrives, between its
// clients' requests (server.Server.WatchFD), until the link ends (its
// error is returned: closed, killed, repl-timeout, a malformed stream) or
// something needs the link's goroutine (errLeaveLoop, with the input
// that needs it still buffered): a command longer than the read buffer,
// the applier's lock held by a sub-replica's snapshot. Without a loop it
// returns errLeaveLoop at once, and the goroutine applies all.
func (a *applier) inLoop(src *linkReader, timeout time.Duration) error {
	l := a.l
	// A duplicate of the link's socket for the loop, which closes it
	// once its epoll set lets it go (server.Server.WatchFD).
	fd := -1
	sc, ok := src.dr.nc.(syscall.Conn)
	if !ok {
		a.noLoop = true
		return errLeaveLoop
	}
	rc, e := sc.SyscallConn()
	if e == nil {
		e = rc.Control(func(sfd uintptr) { fd, e = unix.FcntlInt(sfd, unix.F_DUPFD_CLOEXEC, 0) })
	}
	if e != nil || fd < 0 {
		a.noLoop = true
		return errLeaveLoop
	}
	result := make(chan error, 1)
	end := func(err error) bool {
		result <- err
		return false // and the loop stops calling serve
	}
	// serve runs on the loop's goroutine whenever the socket is readable.
	serve := func() bool {
		testHookLoopApplies.Add(1)
		if !a.l.p.follow.applyMu.TryLock() {
			return end(errLeaveLoop)
		}
		defer a.l.p.follow.applyMu.Unlock()
		full, ferr := a.rd.Fill()
		if errors.Is(ferr, server.ErrWouldBlock) {
			ferr = nil
		}
		for {
			if a.l.p.srv.Paused() {
				// A client pause holds the primary's commands back
				// (waitPause): on the goroutine, not the loop.
				return end(errLeaveLoop)
			}
			switch a.rd.Ready() {
			case resp.FrameComplete:
				argv, out, ok, err := a.rd.ReadRaw(a.raw)
				if err == nil {
					err = a.run(argv, out, ok)
				}
				if err != nil {
					return end(err)
				}
				continue
			case resp.FrameNeedMore:
				if full {
					return end(errLeaveLoop) // longer than the buffer: the goroutine reads it whole
				}
				if ferr != nil {
					return end(ferr)
				}
				return true
			default:
				return end(errLeaveLoop) // malformed: the goroutine's ReadRaw says how
			}
		}
	}
	src.fd, src.nonblock = fd, true
	unwatch, ok := l.p.srv.WatchFD(fd, serve)
	if !ok {
		src.fd, src.nonblock = -1, false
		_ = unix.Close(fd)
		a.noLoop = true // no loop (EventLoops 0), or shutting down
		return errLeaveLoop
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var err error
	for err == nil {
		select {
		case err = <-result:
		case <-l.stop:
			err = net.ErrClosed
		case <-a.mc.KillCh():
			err = net.ErrClosed
		case <-tick.C:
			if time.Since(time.Unix(l.lastIO.Load(), 0)) > timeout {
				err = os.ErrDeadlineExceeded
			}
		}
	}
	unwatch() // serve is not called after it; the loop closes fd
	src.fd, src.nonblock = -1, false
	if errors.Is(err, errLeaveLoop) {
		return errLeaveLoop
	}
	return streamError(err)
}

// replAux is the store's record of the replication id and offset its
// data is at, in durable mode: a restarted replica continues from it.
const replAux = "repl"

// saveReplState records, in durable mode, that the store holds the stream
// of replid up to offset.
func (p *Protocol) saveReplState(replid string, offset int64) {
	p.st.SetAux(replAux, strconv.AppendInt([]byte(replid+" "), offset, 10))
}

// loadReplState makes a durable replica that restarts ask its primary to
// continue from the replication id and offset its data is at.
func (p *Protocol) loadReplState() {
	if !p.st.Durable() {
		return
	}
	rec, err := p.st.Aux(replAux)
	if err != nil || rec == nil {
		return
	}
	id, off, ok := strings.Cut(string(rec), " ")
	n, err := strconv.ParseInt(off, 10, 64)
	if !ok || err != nil || len(id) != 40 || n < 0 {
		return
	}
	pr := &p.repl
	pr.mu.Lock()
	if pr.backlog == nil {
		pr.replid = id
		pr.backlog = replication.NewBacklog(int(pr.backlogSize.Load()), n)
		p.log.Info("replica state kept on disk", "replid", id, "offset", n)
	}
	pr.mu.Unlock()
}

// ackLoop sends REPLCONF ACK every second until done is closed. In
// durable mode it first makes what was applied durable (Store.SyncData),
// and the ACK carries that offset as FACK, as a Redis 7.2 replica with an
// AOF does; a GETACK (WAIT, WAITAOF) asks for one at once (syncNow).
func (l *masterLink) ackLoop(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		case <-l.syncNow:
		}
		if l.p.st.Durable() {
			off := l.offset.Load()
			if l.p.st.SyncData() == nil && off > l.synced.Load() {
				l.synced.Store(off)
			}
		}
		l.sendAck()
	}
}

func (l *masterLink) sendAck() {
	args := [][]byte{[]byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(nil, l.offset.Load(), 10)}
	if l.p.st.Durable() {
		args = append(args, []byte("FACK"), strconv.AppendInt(nil, l.synced.Load(), 10))
	}
	b := replication.AppendCommand(nil, args...)
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.nc != nil {
		_ = l.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, _ = l.nc.Write(b)
	}
}

// replicaInfo writes INFO replication's replica part (after role).
func (p *Protocol) replicaInfo(l *masterLink, field func(k string, v any)) {
	field("master_host", l.host)
	field("master_port", l.port)
	up := l.state.Load() == linkConnected
	field("master_link_status", map[bool]string{true: "up", false: "down"}[up])
	lastIO := int64(-1)
	if t := l.lastIO.Load(); t != 0 {
		lastIO = time.Now().Unix() - t
	}
	field("master_last_io_seconds_ago", lastIO)
	field("master_sync_in_progress", map[bool]int{true: 1, false: 0}[l.state.Load() == linkSync])
	field("slave_read_repl_offset", l.readOffset.Load())
	field("slave_repl_offset", l.offset.Load())
	if !up {
		down := int64(-1)
		if t := l.downSince.Load(); t != 0 {
			down = time.Now().Unix() - t
		}
		field("master_link_down_since_seconds", down)
	}
	field("slave_priority", p.follow.priority.Load())
	field("slave_read_only", map[bool]int{true: 1, false: 0}[p.follow.readOnly.Load()])
	field("replica_announced", 1)
}

// replicationConfigParams are replication's CONFIG parameters, with
// Redis's old slave- names as aliases.
func replicationConfigParams() []*configParam {
	yes := func(f func(p *Protocol) *atomic.Bool) (func(rc *conn) string, func(p *Protocol, v []byte) (func() string, string)) {
		return func(rc *conn) string { return yesNo(f(rc.p).Load()) },
			func(p *Protocol, v []byte) (func() string, string) {
				on, ok := parseYesNo(v)
				if !ok {
					return nil, "argument must be 'yes' or 'no'"
				}
				return func() string {
					f(p).Store(on)
					p.updateGate()
					return ""
				}, ""
			}
	}
	num := func(f func(p *Protocol) *atomic.Int64, lo, hi int64) (func(rc *conn) string, func(p *Protocol, v []byte) (func() string, string)) {
		return func(rc *conn) string { return itoa64(f(rc.p).Load()) },
			intConfig(lo, hi, func(p *Protocol, v int64) string { f(p).Store(v); return "" })
	}
	secret := func(f func(p *Protocol) *atomic.Pointer[string]) (func(rc *conn) string, func(p *Protocol, v []byte) (func() string, string)) {
		return func(rc *conn) string {
				if s := f(rc.p).Load(); s != nil {
					return *s
				}
				return ""
			}, func(p *Protocol, v []byte) (func() string, string) {
				return func() string {
					if len(v) == 0 {
						f(p).Store(nil)
					} else {
						s := string(v)
						f(p).Store(&s)
					}
					return ""
				}, ""
			}
	}
	var params []*configParam
	add := func(names []string, def string, get func(rc *conn) string, set func(p *Protocol, v []byte) (func() string, string)) {
		for i, n := range names {
			params = append(params, &configParam{name: n, get: get, set: set, def: def, noRewrite: i > 0})
		}
	}
	g, s := yes(func(p *Protocol) *atomic.Bool { return &p.follow.readOnly })
	add([]string{"replica-read-only", "slave-read-only"}, "yes", g, s)
	serve := func(rc *conn) string { return yesNo(!rc.p.follow.staleRefused.Load()) }
	add([]string{"replica-serve-stale-data", "slave-serve-stale-data"}, "yes", serve, func(p *Protocol, v []byte) (func() string, string) {
		on, ok := parseYesNo(v)
		if !ok {
			return nil, "argument must be 'yes' or 'no'"
		}
		return func() string { p.follow.staleRefused.Store(!on); return "" }, ""
	})
	gate := func(f func(p *Protocol) *atomic.Int64) func(p *Protocol, v []byte) (func() string, string) {
		return intConfig(0, 1<<31-1, func(p *Protocol, v int64) string { f(p).Store(v); p.updateGate(); return "" })
	}
	minRep := func(p *Protocol) *atomic.Int64 { return &p.repl.minReplicas }
	minLag := func(p *Protocol) *atomic.Int64 { return &p.repl.minLag }
	add([]string{"min-replicas-to-write", "min-slaves-to-write"}, "0", func(rc *conn) string { return itoa64(minRep(rc.p).Load()) }, gate(minRep))
	add([]string{"min-replicas-max-lag", "min-slaves-max-lag"}, "10", func(rc *conn) string { return itoa64(minLag(rc.p).Load()) }, gate(minLag))
	g, s = num(func(p *Protocol) *atomic.Int64 { return &p.follow.priority }, 0, 1<<31-1)
	add([]string{"replica-priority", "slave-priority"}, "100", g, s)
	g, s = num(func(p *Protocol) *atomic.Int64 { return &p.follow.announce }, 0, 65535)
	add([]string{"replica-announce-port", "slave-announce-port"}, "0", g, s)
	g, s = num(func(p *Protocol) *atomic.Int64 { return &p.follow.timeout }, 1, 1<<31-1)
	add([]string{"repl-timeout"}, "60", g, s)
	g, s = num(func(p *Protocol) *atomic.Int64 { return &p.repl.pingPeriod }, 1, 1<<31-1)
	add([]string{"repl-ping-replica-period", "repl-ping-slave-period"}, "10", g, s)
	g, s = secret(func(p *Protocol) *atomic.Pointer[string] { return &p.follow.masterAuth })
	add([]string{"masterauth"}, "", g, s)
	g, s = secret(func(p *Protocol) *atomic.Pointer[string] { return &p.follow.masterUser })
	add([]string{"masteruser"}, "", g, s)
	// CONFIG GET replicaof is "host port" on a replica, "" on a primary;
	// REPLICAOF changes it, CONFIG SET does not (Redis: immutable).
	// CONFIG REWRITE writes it as --replicaof HOST:PORT (config.go).
	replicaOf := func(rc *conn) string {
		if l := rc.p.masterLink(); l != nil {
			return l.host + " " + strconv.Itoa(l.port)
		}
		return ""
	}
	params = append(params, &configParam{name: "replicaof", get: replicaOf, noRewrite: true},
		&configParam{name: "slaveof", get: replicaOf, noRewrite: true})
	g, s = num(func(p *Protocol) *atomic.Int64 { return &p.repl.backlogTTL }, 0, math.MaxInt64)
	add([]string{"repl-backlog-ttl"}, "3600", g, s)
	params = append(params, &configParam{name: "repl-backlog-size", def: "1048576",
		get: func(rc *conn) string { return itoa64(rc.p.repl.backlogSize.Load()) },
		set: memConfig(16<<10, 1<<40, func(p *Protocol, v int64) string {
			p.repl.backlogSize.Store(v) // a backlog already made keeps its size until the server restarts
			return ""
		})})
	return params
}
