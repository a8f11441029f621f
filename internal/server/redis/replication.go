package redis

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/replication"
	"github.com/minikv/minikv/internal/server"
)

// The primary side of Redis's replication protocol (issue 39), as Redis
// 7.0 speaks it, so a Redis replica (or a MiniKV one) can follow MiniKV:
//
//	replica                              primary
//	PING                          ->     +PONG
//	REPLCONF listening-port <p>   ->     +OK
//	REPLCONF capa eof capa psync2 ->     +OK
//	PSYNC <replid> <offset+1>     ->     +CONTINUE <replid>    (the backlog holds it)
//	                                     +FULLRESYNC <replid> <offset>
//	                                     $EOF:<40 bytes>\r\n <RDB> <the 40 bytes>   (capa eof)
//	                                     $<length>\r\n <RDB>                         (otherwise)
//	                                     then the stream, from offset on
//	REPLCONF ACK <offset>         ->     (no reply), every second
//
// The stream is made by a replication.Source from the store's change
// feed, attached when the first replica asks (as Redis creates its
// backlog then). A full resync's RDB is rdb.Save's, taken after the
// stream's offset is marked: the snapshot holds every change made before
// the mark, and the replica applies the stream from the mark; a change
// made in between is in both, and applying it again gives the same state
// (replication.Source).

// primary is the Protocol's replication state as a primary.
type primary struct {
	// feedMu serialises making and freeing the backlog and attaching
	// and detaching the Source (before mu).
	feedMu sync.Mutex

	mu      sync.Mutex // protects what follows
	replid  string     // master_replid
	replid2 string     // master_replid2: the replid of the primary this one followed
	second  int64      // second_repl_offset: the last offset replid2 is good for, -1 none
	backlog *replication.Backlog
	offset  int64 // master_repl_offset while there is no backlog (freed by repl-backlog-ttl)
	src     *replication.Source
	links   map[*replicaLink]struct{}
	pumped  atomic.Pointer[[]*replicaLink] // the links online, for pumpLinks (setPumpedLocked)
	alone   int64                          // Unix s since when no replica is connected (repl-backlog-ttl)
	pinging bool                           // replCron runs

	backlogSize atomic.Int64 // repl-backlog-size, bytes
	minReplicas atomic.Int64 // min-replicas-to-write
	minLag      atomic.Int64 // min-replicas-max-lag, seconds
	good        atomic.Int64 // replicas online with an ACK within minLag, at goodAt
	goodAt      atomic.Int64 // Unix s of that count
	pingPeriod  atomic.Int64 // repl-ping-replica-period, seconds
	backlogTTL  atomic.Int64 // repl-backlog-ttl, seconds; 0: never freed

	fullSyncs  atomic.Int64 // sync_full
	partialOK  atomic.Int64 // sync_partial_ok
	partialErr atomic.Int64 // sync_partial_err
}

// replCapa are the REPLCONF capa bits a replica announced.
const (
	capaEOF = 1 << iota
	capaPSYNC2
)

// replicaLink is one replica's connection once it has asked for the
// stream.
type replicaLink struct {
	rc    *conn
	out   *server.Outbox
	ip    string
	port  int
	state atomic.Int32 // linkWaitBgsave, linkSendBulk, linkOnline
	ack   atomic.Int64 // the offset it last acknowledged
	fack  atomic.Int64 // the offset it last said is on its disk (FACK), for WAITAOF
	ackAt atomic.Int64 // when (Unix s)
	done  chan struct{}

	acked    chan struct{} // closed at its first REPLCONF ACK
	ackedOne sync.Once

	// mark: a primary in memory mode's full resync, whose offset is the
	// one the Source marks at the snapshot's instant (sendSnapshot); the
	// +FULLRESYNC line (when the replica sent PSYNC, reply) waits for it.
	mark  *replication.Source
	reply bool

	// Sending the stream (pump): on the goroutine of whoever appended
	// to the backlog, with the link's own goroutine for backpressure.
	pumping atomic.Bool // online, bl and sent set: pump sends
	pumpMu  sync.Mutex  // held while sending; protects bl, sent and buf
	again   atomic.Bool // bytes were appended while pumpMu was held
	bl      *replication.Backlog
	sent    int64 // the next offset to send
	buf     []byte
	poke    chan struct{} // the Outbox was full: the goroutine waits for room and pumps
}

const (
	linkWaitBgsave = iota
	linkSendBulk
	linkOnline
)

// linkPending is how many bytes of a replica's output may wait in its
// Outbox before the link stops adding more: a slow replica falls behind
// in the backlog, which bounds how far (past it, it must resync).
const linkPending = 4 << 20

var errLinkClosed = errors.New("redis: replica link closed")

func newReplID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (pr *primary) init() {
	pr.replid, pr.replid2, pr.second = newReplID(), "0000000000000000000000000000000000000000", -1
	pr.links = make(map[*replicaLink]struct{})
	pr.backlogSize.Store(1 << 20)
	pr.minLag.Store(10)
	pr.pingPeriod.Store(10)
	pr.backlogTTL.Store(3600)
	pr.alone = time.Now().Unix()
}

// ensureBacklog creates the backlog and attaches the Source to the store,
// once, when the first replica asks for the stream.
// On a replica the backlog holds the primary's stream and no Source is
// attached (src is nil).
func (p *Protocol) ensureBacklog() (*replication.Backlog, *replication.Source) {
	replica := p.masterLink() != nil
	pr := &p.repl
	pr.feedMu.Lock()
	defer pr.feedMu.Unlock()
	pr.mu.Lock()
	if pr.backlog == nil {
		pr.backlog = replication.NewBacklog(int(pr.backlogSize.Load()), pr.offset)
	}
	pr.alone = time.Now().Unix() // a replica is coming: repl-backlog-ttl counts again
	pr.mu.Unlock()
	if !replica {
		p.attachSourceLocked()
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.backlog, pr.src
}

// attachSource makes the store's changes the stream, appended to the
// backlog from its end on: once on a primary, and again when a replica is
// promoted.
func (p *Protocol) attachSource() {
	p.repl.feedMu.Lock()
	defer p.repl.feedMu.Unlock()
	p.attachSourceLocked()
}

func (p *Protocol) attachSourceLocked() {
	pr := &p.repl
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.backlog == nil || pr.src != nil {
		return
	}
	pr.src = replication.NewSource(pr.backlog, rdb.Dump)
	pr.src.SetDeferTo(p.srv.InPass)
	p.st.SetFeed(pr.src)
	p.srv.SetPassEnd(pr.src.EncodeNow)
	if !pr.pinging {
		pr.pinging = true
		go p.replCron()
	}
}

// detachSource stops streaming the store's changes: the server becomes a
// replica, whose stream is its primary's.
func (p *Protocol) detachSource() {
	p.repl.feedMu.Lock()
	defer p.repl.feedMu.Unlock()
	p.detachSourceLocked()
}

func (p *Protocol) detachSourceLocked() {
	pr := &p.repl
	pr.mu.Lock()
	src := pr.src
	pr.src = nil
	pr.mu.Unlock()
	if src != nil {
		p.srv.SetPassEnd(nil)
		p.st.SetFeed(nil)
		src.Close()
	}
}

// replCron is replication's once-a-second work on a primary, as Redis's
// replicationCron: a PING on the stream every repl-ping-replica-period
// while replicas are connected, so a replica sees its link alive when
// nothing is written, and the backlog freed once no replica has been
// connected for repl-backlog-ttl seconds.
func (p *Protocol) replCron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var sincePing int64
	for {
		select {
		case <-t.C:
		case <-p.quit:
			return
		}
		if sincePing++; sincePing >= p.repl.pingPeriod.Load() {
			sincePing = 0
			p.repl.mu.Lock()
			n, src := len(p.repl.links), p.repl.src
			p.repl.mu.Unlock()
			if n > 0 && src != nil && !p.failingOver() { // Redis sends none during a failover
				src.Ping()
			}
		}
		p.freeIdleBacklog()
	}
}

// freeIdleBacklog frees a primary's backlog (and stops streaming the
// store's changes) once no replica has been connected for
// repl-backlog-ttl seconds, as Redis does: the replication id changes,
// and replid2 is cleared, so a replica that comes back later resyncs
// fully; master_repl_offset stays where it was, and the next backlog
// goes on from it.
func (p *Protocol) freeIdleBacklog() {
	pr := &p.repl
	ttl := pr.backlogTTL.Load()
	if ttl <= 0 || p.masterLink() != nil {
		return
	}
	pr.feedMu.Lock()
	defer pr.feedMu.Unlock()
	pr.mu.Lock()
	idle := pr.backlog != nil && len(pr.links) == 0 && time.Now().Unix()-pr.alone >= ttl
	pr.mu.Unlock()
	if !idle || p.masterLink() != nil {
		return
	}
	p.detachSourceLocked() // the changes queued are in the backlog once it returns
	pr.mu.Lock()
	pr.offset = pr.backlog.End()
	pr.backlog = nil
	pr.replid, pr.replid2, pr.second = newReplID(), "0000000000000000000000000000000000000000", -1
	off := pr.offset
	pr.mu.Unlock()
	p.log.Info("replication backlog freed: no replica for repl-backlog-ttl", "ttl_s", ttl, "offset", off)
}

// replOffsetLocked is master_repl_offset: the backlog's end, or where the
// freed one ended.
func (pr *primary) replOffsetLocked() int64 {
	if pr.backlog != nil {
		return pr.backlog.End()
	}
	return pr.offset
}

// connectedClients is INFO's connected_clients, counted as Redis counts
// it: the connections of both ports (conns), without this server's
// replicas, with the link to its primary while it is up.
func (p *Protocol) connectedClients(conns int64) int64 {
	p.repl.mu.Lock()
	conns -= int64(len(p.repl.links))
	p.repl.mu.Unlock()
	if l := p.masterLink(); l != nil && l.state.Load() == linkConnected {
		conns++
	}
	return max(conns, 0)
}

// disconnectReplicas closes every replica's link, as Redis's
// disconnectSlaves: when this server starts following a primary, or its
// history changes (a full resync, a new replication id), its replicas
// must ask again, and learn the new id.
func (p *Protocol) disconnectReplicas() {
	pr := &p.repl
	pr.mu.Lock()
	links := make([]*replicaLink, 0, len(pr.links))
	for l := range pr.links {
		links = append(links, l)
	}
	pr.mu.Unlock()
	for _, l := range links {
		l.rc.Kill()
	}
}

// closeReplication stops replication's background work: the pings, the
// Source's encoder, and a replica's link to its primary, which would
// otherwise go on dialing the primary's address once a second after the
// server is gone (and, in a process that runs servers one after another
// as the tests do, sync with whatever server takes that port next). The
// replicas' links end with their connections.
func (p *Protocol) closeReplication() {
	select {
	case <-p.quit:
		return // closed already
	default:
		close(p.quit)
	}
	if l := p.follow.takeLink(); l != nil {
		l.close()
	}
	p.detachSource()
}

// cmdReplconf is REPLCONF option value ...: what a replica says of itself
// before PSYNC, and its ACKs after.
func cmdReplconf(rc *conn, argv [][]byte) {
	if len(argv)%2 == 0 {
		rc.w.Error("ERR syntax error")
		return
	}
	for i := 1; i < len(argv); i += 2 {
		opt, v := argv[i], argv[i+1]
		switch {
		case is(opt, "listening-port"):
			n, ok := rc.parseInt(v)
			if !ok {
				return
			}
			rc.replPort = int(n)
		case is(opt, "ip-address"):
			rc.replIP = string(v)
		case is(opt, "capa"):
			switch {
			case is(v, "eof"):
				rc.replCapa |= capaEOF
			case is(v, "psync2"):
				rc.replCapa |= capaPSYNC2
			}
		case is(opt, "ack"):
			// A replica's ACK gets no reply; from anyone else it is ignored.
			// A Redis 7.2 replica with an AOF (and a durable MiniKV one)
			// adds FACK and the offset its disk holds (WAITAOF).
			if l := rc.link; l != nil {
				if off, ok := resp.ParseInt(v); ok && off > l.ack.Load() {
					l.ack.Store(off)
				}
				if i+3 < len(argv) && is(argv[i+2], "fack") {
					if off, ok := resp.ParseInt(argv[i+3]); ok && off > l.fack.Load() {
						l.fack.Store(off)
					}
				}
				l.ackAt.Store(time.Now().Unix())
				l.ackedOne.Do(func() { close(l.acked) })
			}
			return
		case is(opt, "getack"):
			return // only a primary asks its replica this
		case is(opt, "rdb-only"), is(opt, "rdb-filter-only"):
		default:
			rc.w.Error("ERR Unrecognized REPLCONF option: " + string(opt))
			return
		}
	}
	rc.w.OK()
}

// cmdSync is SYNC, the protocol before PSYNC: a full resync without the
// +FULLRESYNC line.
func cmdSync(rc *conn, argv [][]byte) {
	if rc.psyncFailover(argv) {
		rc.psync(nil, 0, false)
	}
}

// cmdPSync is PSYNC replid offset.
func cmdPSync(rc *conn, argv [][]byte) {
	if !rc.psyncFailover(argv) { // PSYNC ... FAILOVER (failover.go)
		return
	}
	off, ok := resp.ParseInt(argv[2])
	if !ok {
		off = -1
	}
	rc.psync(argv[1], off, true)
}

// psync starts the link: it answers +CONTINUE or +FULLRESYNC and hands the
// connection's output to the link's goroutine, which sends the snapshot
// (on a full resync) and then the stream. The connection goes on reading:
// a replica sends REPLCONF ACK every second.
func (rc *conn) psync(replid []byte, off int64, psync bool) {
	if rc.link != nil {
		return // already a replica: Redis ignores it too
	}
	p := rc.p
	// On a replica the applier stops between two of the primary's
	// commands (follow.applyMu) while the offset is picked and the link
	// registered, and on a full resync until the snapshot is taken: the
	// snapshot is the store at exactly the offset it names, and the
	// stream from there is the primary's, as this server copied it into
	// its backlog.
	var release func()
	if ml := p.masterLink(); ml != nil {
		if ml.state.Load() == linkConnected {
			p.follow.applyMu.Lock()
			release = sync.OnceFunc(p.follow.applyMu.Unlock)
		}
		if ml.state.Load() != linkConnected || p.masterLink() != ml {
			if release != nil {
				release()
			}
			rc.w.Error("NOMASTERLINK Can't SYNC while not connected with my master")
			return
		}
	}
	bl, src := p.ensureBacklog()
	pr := &p.repl
	pr.mu.Lock()
	from, partial := int64(0), false
	if psync && off > 0 {
		want := off - 1 // Redis asks for its next byte, counted from 1
		ours := string(replid) == pr.replid || string(replid) == pr.replid2 && want <= pr.second
		partial = ours && bl.Holds(want)
		from = want
	}
	replidNow := pr.replid
	pr.mu.Unlock()

	l := &replicaLink{rc: rc, ip: rc.replicaIP(), port: rc.replPort, done: make(chan struct{}), acked: make(chan struct{})}
	l.ackAt.Store(time.Now().Unix())
	rc.SetIdleExempt(true)
	l.out = rc.StartOutbox()
	if partial {
		pr.partialOK.Add(1)
		if rc.replCapa&capaPSYNC2 != 0 {
			rc.w.Simple("CONTINUE " + replidNow)
		} else {
			rc.w.Simple("CONTINUE")
		}
		l.state.Store(linkOnline)
		l.ack.Store(from)
	} else {
		if psync && !(len(replid) == 1 && replid[0] == '?') {
			pr.partialErr.Add(1)
		}
		pr.fullSyncs.Add(1)
		if release == nil && src != nil && !p.st.Durable() {
			// The snapshot is one instant of the store: the Source marks
			// the stream there, and the offset is known then.
			l.mark, l.reply = src, psync
		} else {
			if src != nil {
				src.Reselect() // the stream after the snapshot begins with SELECT 0
				src.Sync()
			}
			from = bl.End()
			if psync {
				rc.w.Simple("FULLRESYNC " + replidNow + " " + strconv.FormatInt(from, 10))
			}
			l.ack.Store(from)
		}
	}
	_ = rc.w.Flush()
	rc.link = l
	pr.mu.Lock()
	pr.links[l] = struct{}{}
	pr.mu.Unlock()
	if partial && release != nil {
		release()
		release = nil
	}
	go l.run(bl, !partial, from, replidNow, rc.replCapa&capaEOF != 0, release)
}

// replicaIP is the address a replica is shown and reached at: the one it
// announced (REPLCONF ip-address), or its connection's.
func (rc *conn) replicaIP() string {
	if rc.replIP != "" {
		return rc.replIP
	}
	if a, ok := rc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, _ := net.SplitHostPort(rc.RemoteAddr().String())
	return host
}

// endLink unregisters the link when its connection ends.
func (rc *conn) endLink() {
	l := rc.link
	if l == nil {
		return
	}
	close(l.done)
	pr := &rc.p.repl
	pr.mu.Lock()
	delete(pr.links, l)
	pr.setPumpedLocked()
	if len(pr.links) == 0 {
		pr.alone = time.Now().Unix()
	}
	pr.mu.Unlock()
}

// outboxWriter pushes what it is given to a replica's Outbox, waiting
// while more than linkPending bytes are queued.
type outboxWriter struct{ l *replicaLink }

func (w outboxWriter) Write(p []byte) (int, error) {
	if err := w.l.wait(); err != nil {
		return 0, err
	}
	if !w.l.out.Push(append([]byte(nil), p...)) {
		return 0, errLinkClosed
	}
	return len(p), nil
}

// wait returns once the replica's Outbox has room, or errLinkClosed when
// the connection has ended.
func (l *replicaLink) wait() error {
	for l.out.Pending() > linkPending {
		select {
		case <-l.done:
			return errLinkClosed
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case <-l.done:
		return errLinkClosed
	default:
		return nil
	}
}

// run is the link's goroutine: the snapshot on a full resync, then the
// stream from offset from of backlog bl, until the connection ends. A
// replica further behind than the backlog holds is disconnected, and
// resyncs. On a replica, release lets the applier go on (psync): the
// snapshot calls it once it has the store at offset from.
func (l *replicaLink) run(bl *replication.Backlog, full bool, from int64, replid string, eof bool, release func()) {
	rc := l.rc
	p := rc.p
	if full {
		l.state.Store(linkSendBulk)
		var err error
		if l.mark != nil {
			from, err = l.sendMarkedSnapshot(replid, eof)
		} else {
			err = l.sendSnapshot(from, replid, eof, release)
		}
		if release != nil {
			release()
		}
		if err != nil {
			if !errors.Is(err, errLinkClosed) {
				p.log.Warn("replica full resync failed", "conn_id", rc.ID(), "err", err)
			}
			rc.Kill()
			return
		}
		if eof {
			// A replica reading a diskless snapshot looks for the end
			// mark at the end of what it has read: the stream waits
			// until it has loaded the snapshot and acknowledged, as
			// Redis's primary waits (repl_start_cmd_stream_on_ack).
			select {
			case <-l.acked:
			case <-l.done:
				return
			}
		}
		l.state.Store(linkOnline)
		p.log.Info("replica synchronized", "conn_id", rc.ID(), "addr", net.JoinHostPort(l.ip, strconv.Itoa(l.port)), "offset", from)
	}
	l.pumpMu.Lock()
	l.bl, l.sent = bl, from
	l.pumpMu.Unlock()
	l.poke = make(chan struct{}, 1)
	l.pumping.Store(true)
	pr := &p.repl
	pr.mu.Lock()
	pr.setPumpedLocked()
	pr.mu.Unlock()
	bl.OnAppend(p.pumpLinks)
	for {
		l.pump() // what the backlog holds already, and after a wait for room
		select {
		case <-l.poke:
			if err := l.wait(); err != nil {
				return
			}
		case <-l.done:
			return
		}
	}
}

// pumpLinks sends what was appended to the backlog to every replica
// online: Backlog.OnAppend's function, on the appender's goroutine (an
// event loop at its pass's end, the Source's goroutine, a replica's
// applier), as Redis writes its replicas' output from its one thread:
// a goroutine woken for every pass cost a primary's loop about a tenth
// of its CPU at redis-benchmark -P 1 (docs/benchmarks.md).
func (p *Protocol) pumpLinks() {
	if ls := p.repl.pumped.Load(); ls != nil {
		for _, l := range *ls {
			l.pump()
		}
	}
}

// setPumpedLocked lists the links pumpLinks sends to. pr.mu is held.
func (pr *primary) setPumpedLocked() {
	var ls []*replicaLink
	for l := range pr.links {
		if l.pumping.Load() {
			ls = append(ls, l)
		}
	}
	pr.pumped.Store(&ls)
}

// pump sends the link what the backlog holds past what it sent, unless
// another goroutine is at it (which then sends this too: again).
func (l *replicaLink) pump() {
	l.again.Store(true)
	for l.again.Load() && l.pumpMu.TryLock() {
		l.again.Store(false)
		l.sendAvailable()
		l.pumpMu.Unlock()
	}
}

// sendAvailable is pump's work, under pumpMu. A replica whose Outbox
// holds linkPending bytes gets no more until it drains (the link's
// goroutine waits for that); one further behind than the backlog holds
// is disconnected, and resyncs.
func (l *replicaLink) sendAvailable() {
	if !l.pumping.Load() {
		return
	}
	durable := l.rc.p.st.Durable()
	for {
		if l.out.Pending() > linkPending {
			select {
			case l.poke <- struct{}{}:
			default:
			}
			return
		}
		data, next, ok := l.bl.ReadFrom(l.buf[:0], l.sent, 1<<20)
		if !ok {
			l.rc.p.log.Warn("replica fell behind the backlog; disconnected", "conn_id", l.rc.ID(), "offset", l.sent, "backlog_start", l.bl.Start())
			l.pumping.Store(false)
			l.rc.Kill()
			return
		}
		if len(data) == 0 {
			return
		}
		l.buf = data[:0]
		var sent bool
		if durable {
			// Its writer sends it once it is on disk here (writeAsync).
			sent = l.out.Push(append([]byte(nil), data...))
		} else {
			sent = l.out.WriteNow(data)
		}
		if !sent {
			l.pumping.Store(false)
			return
		}
		l.sent = next
	}
}

// sendSnapshot sends the RDB of a full resync: streamed between two EOF
// marks to a replica that can read that (capa eof, as Redis's diskless
// sync does), else with its length first, from a temporary file.
//
// On a replica (release not nil) the snapshot must be the store at
// offset off exactly, and the applier waits until it is taken: in memory
// mode until rdb.Save's copy (AtSnapshot), in durable mode, where Save
// walks the disk and is not one instant, until the whole file is written
// to a temporary file; the primary's stream waits meanwhile, in this
// server's socket buffers and the primary's output buffer.
func (l *replicaLink) sendSnapshot(off int64, replid string, eof bool, release func()) error {
	p := l.rc.p
	if testHookBeforeSync != nil {
		testHookBeforeSync()
	}
	opt := p.saveOptions() // the function libraries too (persist.go)
	opt.Aux = [][2]string{{"repl-stream-db", "0"}, {"repl-id", replid}, {"repl-offset", strconv.FormatInt(off, 10)}}
	opt.Flags = true // memcached flags as AUX fields, which Redis ignores (flags.go)
	w := outboxWriter{l: l}
	walkHeld := release != nil && p.st.Durable()
	if release != nil && !walkHeld {
		opt.AtSnapshot = func() [][2]string { release(); return nil }
	}
	if eof && !walkHeld {
		mark := newReplID() // 40 random characters, which the RDB's end is unlikely to hold
		if _, err := io.WriteString(w, "$EOF:"+mark+"\r\n"); err != nil {
			return err
		}
		if _, err := rdb.Save(w, p.st, opt); err != nil {
			return err
		}
		_, err := io.WriteString(w, mark)
		return err
	}
	f, err := os.CreateTemp("", "minikv-sync-*.rdb")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	_, err = rdb.Save(f, p.st, opt)
	if walkHeld {
		release()
	}
	if err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	mark := ""
	if eof {
		mark = newReplID()
		_, err = io.WriteString(w, "$EOF:"+mark+"\r\n")
	} else {
		_, err = io.WriteString(w, "$"+strconv.FormatInt(size, 10)+"\r\n")
	}
	if err != nil {
		return err
	}
	if _, err = io.CopyBuffer(w, f, make([]byte, 256<<10)); err != nil {
		return err
	}
	if mark != "" {
		_, err = io.WriteString(w, mark)
	}
	return err
}

// sendMarkedSnapshot is sendSnapshot for a primary in memory mode: the
// snapshot is the store at one instant, every shard held, and the Source
// marks the stream's offset at that instant (Source.Mark), so the
// snapshot holds exactly the changes before the offset and the replica
// applies exactly those after it. Nothing is applied twice, which the
// commands of a list's change (LPUSH ...) need. +FULLRESYNC with that
// offset goes first, then the RDB; it returns the offset.
func (l *replicaLink) sendMarkedSnapshot(replid string, eof bool) (int64, error) {
	p := l.rc.p
	if testHookBeforeSync != nil {
		testHookBeforeSync()
	}
	opt := p.saveOptions() // the function libraries too (persist.go)
	opt.Aux = [][2]string{{"repl-stream-db", "0"}, {"repl-id", replid}}
	opt.Flags = true // memcached flags as AUX fields, which Redis ignores (flags.go)
	off, marked := int64(0), false
	opt.AtSnapshot = func() [][2]string {
		off, marked = l.mark.Mark()
		return [][2]string{{"repl-offset", strconv.FormatInt(off, 10)}}
	}
	w := outboxWriter{l: l}
	head := func(payload string) error {
		if !marked {
			return errors.New("replication: the stream could not be marked at the snapshot")
		}
		l.ack.Store(off)
		if l.reply {
			payload = "+FULLRESYNC " + replid + " " + strconv.FormatInt(off, 10) + "\r\n" + payload
		}
		_, err := io.WriteString(w, payload)
		return err
	}
	if eof {
		mark := newReplID()
		hw := &headWriter{w: w, head: func() error { return head("$EOF:" + mark + "\r\n") }}
		if _, err := rdb.Save(hw, p.st, opt); err != nil {
			return 0, err
		}
		if err := hw.flushHead(); err != nil {
			return 0, err
		}
		_, err := io.WriteString(w, mark)
		return off, err
	}
	f, err := os.CreateTemp("", "minikv-sync-*.rdb")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := rdb.Save(f, p.st, opt); err != nil {
		return 0, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	if err := head("$" + strconv.FormatInt(size, 10) + "\r\n"); err != nil {
		return 0, err
	}
	_, err = io.CopyBuffer(w, f, make([]byte, 256<<10))
	return off, err
}

// testHookBeforeSync, when a test sets it, runs as a full resync begins
// to take its snapshot: writes made meanwhile are before the snapshot
// and, unless the stream is marked at the snapshot, after the offset too.
var testHookBeforeSync func()

// headWriter writes head (once) before the first bytes written through
// it: the RDB's first bytes come after rdb.Save took its snapshot.
type headWriter struct {
	w    io.Writer
	head func() error
	done bool
}

func (h *headWriter) flushHead() error {
	if h.done {
		return nil
	}
	h.done = true
	return h.head()
}

func (h *headWriter) Write(p []byte) (int, error) {
	if err := h.flushHead(); err != nil {
		return 0, err
	}
	return h.w.Write(p)
}

func replicationCommands() []respCommand {
	adm := []string{"admin", "noscript", "no_async_loading", "no_multi"}
	replicaOfArgs := []docArg{oneOf("args", false,
		docArg{name: "host-port", typ: "block", sub: []docArg{str("host"), integ("port")}},
		docArg{name: "no-one", typ: "block", sub: []docArg{token("NO"), token("ONE")}})}
	return []respCommand{
		{name: "replconf", arity: -1, flags: []string{"admin", "noscript", "loading", "stale", "allow_busy"}, group: "server", since: "3.0.0",
			complexity: "O(1)", summary: "An internal command for configuring the replication stream", run: cmdReplconf},
		{name: "psync", arity: -3, flags: adm, group: "server", since: "2.8.0", summary: "Internal command used for replication",
			args: []docArg{str("replicationid"), integ("offset")}, run: cmdPSync},
		{name: "sync", arity: 1, flags: adm, group: "server", since: "1.0.0", summary: "Internal command used for replication",
			run: cmdSync},
		{name: "replicaof", arity: 3, flags: []string{"admin", "noscript", "stale", "no_async_loading"}, group: "server", since: "5.0.0",
			complexity: "O(1)", summary: "Make the server a replica of another instance, or promote it as master.",
			args: replicaOfArgs, run: cmdReplicaOf},
		{name: "slaveof", arity: 3, flags: []string{"admin", "noscript", "stale", "no_async_loading"}, group: "server", since: "1.0.0",
			complexity: "O(1)", summary: "Make the server a replica of another instance, or promote it as master.",
			args: replicaOfArgs, run: cmdReplicaOf},
		{name: "wait", arity: 3, flags: []string{"noscript"}, group: "generic", since: "3.0.0", complexity: "O(1)",
			summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
			args:    []docArg{integ("numreplicas"), integ("timeout")}, run: cmdWait},
		{name: "waitaof", arity: 4, flags: []string{"blocking"}, group: "generic", since: "7.2.0", complexity: "O(1)",
			summary: "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the primary and/or replicas.",
			args:    []docArg{integ("numlocal"), integ("numreplicas"), integ("timeout")}, run: cmdWaitAOF},
		{name: "shutdown", arity: -1, flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"}, group: "server", since: "1.0.0",
			complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
			summary:    "Synchronously save the dataset to disk and then shut down the server",
			args:       []docArg{opt(oneOf("save-selector", false, token("NOSAVE"), token("SAVE"))), opt(token("NOW")), opt(token("FORCE")), opt(token("ABORT"))},
			run:        cmdShutdown},
		{name: "role", arity: 1, flags: []string{"noscript", "loading", "stale", "fast"}, group: "server", since: "2.8.12",
			complexity: "O(1)", summary: "Return the role of the instance in the context of replication", run: cmdRole},
	}
}

// goodReplicas is how many replicas are online and acknowledged within
// min-replicas-max-lag seconds, counted again once a second.
func (pr *primary) goodReplicas() int64 {
	now := time.Now().Unix()
	if pr.goodAt.Load() == now {
		return pr.good.Load()
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var n int64
	for l := range pr.links {
		if l.state.Load() == linkOnline && now-l.ackAt.Load() <= pr.minLag.Load() {
			n++
		}
	}
	pr.good.Store(n)
	pr.goodAt.Store(now)
	return n
}

// syncStream waits until every change made so far is on the stream, so
// the offset read next counts them all, as Redis's master_repl_offset
// counts every write it ran.
func (p *Protocol) syncStream() {
	p.repl.mu.Lock()
	src := p.repl.src
	p.repl.mu.Unlock()
	if src != nil {
		src.Sync()
	}
}

// cmdWait is WAIT numreplicas timeout: it returns once numreplicas
// replicas have acknowledged every change made before it (the stream up
// to its end when WAIT began), or when timeout ms have passed (0: never),
// with how many have. Redis counts from the client's own last write; the
// whole stream's end is at or after it, so MiniKV's answer never counts
// a replica that lacks one of the client's writes.
func cmdWait(rc *conn, argv [][]byte) {
	if rc.p.masterLink() != nil {
		rc.w.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := rc.parseInt(argv[1])
	if !ok {
		return
	}
	timeout, ok := rc.parseWaitTimeout(argv[2])
	if !ok {
		return
	}
	got, _ := rc.waitReplicas(n, timeout, false)
	if got >= 0 {
		rc.w.Int(got)
	}
}

// cmdWaitAOF is WAITAOF numlocal numreplicas timeout (Redis 7.2): it
// returns once the changes made before it are on this server's disk (if
// numlocal is 1) and on numreplicas replicas' disks, or when timeout ms
// have passed (0: never), with the pair [local, replicas]. This server's
// disk is its durable store (--data-dir), which CONFIG GET appendonly
// reports as yes; its changes are fsynced at once whatever --fsync says
// (Store.SyncData). A replica counts once its REPLCONF ACK's FACK offset
// reaches them: durable MiniKV replicas and Redis 7.2 replicas with an AOF
// send one, others never count.
func cmdWaitAOF(rc *conn, argv [][]byte) {
	numLocal, ok := rc.parseInt(argv[1])
	if !ok {
		return
	}
	if numLocal < 0 || numLocal > 1 {
		rc.w.Error("ERR value is out of range, value must between 0 and 1")
		return
	}
	n, ok := resp.ParseInt(argv[2])
	if !ok || n < 0 {
		rc.w.Error("ERR value is out of range, must be positive")
		return
	}
	timeout, ok := rc.parseWaitTimeout(argv[3])
	if !ok {
		return
	}
	if rc.p.masterLink() != nil {
		rc.w.Error("ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.")
		return
	}
	durable := rc.p.st.Durable()
	if numLocal > 0 && !durable {
		rc.w.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
		return
	}
	local := int64(0)
	if durable && rc.p.st.SyncData() == nil {
		local = 1
	}
	got, _ := rc.waitReplicas(n, timeout, true)
	if got >= 0 {
		rc.w.Array(2)
		rc.w.Int(local)
		rc.w.Int(got)
	}
}

// parseWaitTimeout parses WAIT's and WAITAOF's timeout (ms) with Redis's
// errors.
func (rc *conn) parseWaitTimeout(arg []byte) (int64, bool) {
	timeout, ok := resp.ParseInt(arg)
	if !ok {
		rc.w.Error("ERR timeout is not an integer or out of range")
		return 0, false
	}
	if timeout < 0 {
		rc.w.Error(errTimeoutNegative)
		return 0, false
	}
	if timeoutPastEnd(timeout) {
		rc.w.Error(errTimeoutRange)
		return 0, false
	}
	return timeout, true
}

// waitReplicas waits until n replicas have acknowledged (with aof, on
// their disks: FACK) the whole stream as it stands now, or timeout ms
// (0: never), and returns how many have; -1 if the client or the server
// went away meanwhile. Inside MULTI or a script it does not wait.
func (rc *conn) waitReplicas(n, timeout int64, aof bool) (int64, bool) {
	p := rc.p
	p.syncStream()
	pr := &p.repl
	pr.mu.Lock()
	target := pr.replOffsetLocked()
	src := pr.src
	pr.mu.Unlock()
	acked := func() int64 {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		var c int64
		for l := range pr.links {
			off := l.ack.Load()
			if aof {
				off = l.fack.Load()
			}
			if l.state.Load() == linkOnline && off >= target {
				c++
			}
		}
		return c
	}
	got := acked()
	if got >= n || rc.inExec() {
		return got, true
	}
	if src != nil && !p.failingOver() { // a failover keeps the stream still
		src.GetAck() // replicas answer with their offset at once
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for got < n {
		select {
		case <-deadline:
			return acked(), true
		case <-rc.KillCh():
			return -1, false
		case <-p.quit:
			return -1, false
		case <-tick.C:
			got = acked()
		}
	}
	return got, true
}

// replicationInfo writes INFO replication as a Redis 7.0 primary does.
func (p *Protocol) replicationInfo(field func(k string, v any)) {
	pr := &p.repl
	p.syncStream()
	pr.mu.Lock()
	links := make([]*replicaLink, 0, len(pr.links))
	for l := range pr.links {
		links = append(links, l)
	}
	replid, replid2, second, bl, end := pr.replid, pr.replid2, pr.second, pr.backlog, pr.replOffsetLocked()
	pr.mu.Unlock()
	if l := p.masterLink(); l != nil {
		field("role", "slave")
		p.replicaInfo(l, field) // replica.go
	} else {
		field("role", "master")
	}
	field("connected_slaves", len(links))
	if pr.minReplicas.Load() > 0 && pr.minLag.Load() > 0 {
		field("min_slaves_good_slaves", pr.goodReplicas())
	}
	now := time.Now().Unix()
	for i, l := range links {
		state := [...]string{"wait_bgsave", "send_bulk", "online"}[l.state.Load()]
		var b bytes.Buffer
		b.WriteString("ip=" + l.ip + ",port=" + strconv.Itoa(l.port) + ",state=" + state)
		b.WriteString(",offset=" + strconv.FormatInt(l.ack.Load(), 10) + ",lag=" + strconv.FormatInt(now-l.ackAt.Load(), 10))
		field("slave"+strconv.Itoa(i), b.String())
	}
	field("master_failover_state", p.failoverState())
	field("master_replid", replid)
	field("master_replid2", replid2)
	var first, hist int64 // Redis prints 0 for the first byte while it has no backlog
	if bl != nil {
		first = bl.Start() + 1
		hist = bl.End() - bl.Start()
	}
	field("master_repl_offset", end)
	field("second_repl_offset", second)
	active := 0
	if bl != nil {
		active = 1
	}
	field("repl_backlog_active", active)
	field("repl_backlog_size", pr.backlogSize.Load())
	field("repl_backlog_first_byte_offset", first)
	field("repl_backlog_histlen", hist)
}

// cmdRole is ROLE: "master", the offset, and each replica's address and
// acknowledged offset.
func cmdRole(rc *conn, _ [][]byte) {
	if l := rc.p.masterLink(); l != nil {
		rc.w.Array(5)
		rc.w.Bulk([]byte("slave"))
		rc.w.Bulk([]byte(l.host))
		rc.w.Int(int64(l.port))
		rc.w.Bulk([]byte(linkStateNames[l.state.Load()]))
		off := int64(-1)
		if l.state.Load() == linkConnected {
			off = l.offset.Load()
		}
		rc.w.Int(off)
		return
	}
	pr := &rc.p.repl
	rc.p.syncStream()
	pr.mu.Lock()
	end := pr.replOffsetLocked()
	links := make([]*replicaLink, 0, len(pr.links))
	for l := range pr.links {
		if l.state.Load() == linkOnline {
			links = append(links, l)
		}
	}
	pr.mu.Unlock()
	rc.w.Array(3)
	rc.w.Bulk([]byte("master"))
	rc.w.Int(end)
	rc.w.Array(len(links))
	for _, l := range links {
		rc.w.Array(3)
		rc.w.Bulk([]byte(l.ip))
		rc.w.Bulk(strconv.AppendInt(nil, int64(l.port), 10))
		rc.w.Bulk(strconv.AppendInt(nil, l.ack.Load(), 10))
	}
}
