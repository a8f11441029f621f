package redis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// TestPubsubGoRedis drives go-redis's PubSub (Subscribe, PSubscribe,
// Channel) over RESP3, its default, and RESP2.
func TestPubsubGoRedis(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			rdb, _ := newGoRedis(t, resp2)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ps := rdb.Subscribe(ctx, "news", "sport")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil { // the first confirmation
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "n*"); err != nil {
				t.Fatal(err)
			}
			// The subscriptions are in place once NUMPAT sees the pattern
			// (PSubscribe does not wait for its confirmation).
			for rdb.PubSubNumPat(ctx).Val() != 1 {
				if ctx.Err() != nil {
					t.Fatal("PSUBSCRIBE never registered")
				}
				runtime.Gosched()
			}
			ch := ps.Channel()
			if n := rdb.Publish(ctx, "news", "hello").Val(); n != 2 {
				t.Errorf("PUBLISH news = %d, want 2", n)
			}
			if n := rdb.Publish(ctx, "sport", "goal").Val(); n != 1 {
				t.Errorf("PUBLISH sport = %d, want 1", n)
			}
			var got []string
			for len(got) < 3 {
				select {
				case m := <-ch:
					got = append(got, m.Pattern+"|"+m.Channel+"|"+m.Payload)
				case <-ctx.Done():
					t.Fatalf("got %q, then nothing", got)
				}
			}
			want := []string{"|news|hello", "n*|news|hello", "|sport|goal"}
			if !slices.Equal(got, want) {
				t.Errorf("messages = %q, want %q", got, want)
			}
			numsub := rdb.PubSubNumSub(ctx, "news", "none").Val()
			if numsub["news"] != 1 || numsub["none"] != 0 {
				t.Errorf("PUBSUB NUMSUB = %v", numsub)
			}
			chans := rdb.PubSubChannels(ctx, "*").Val()
			slices.Sort(chans)
			if !slices.Equal(chans, []string{"news", "sport"}) {
				t.Errorf("PUBSUB CHANNELS * = %q", chans)
			}
			if err := ps.Unsubscribe(ctx, "news"); err != nil {
				t.Fatal(err)
			}
			for rdb.PubSubNumSub(ctx, "news").Val()["news"] != 0 {
				if ctx.Err() != nil {
					t.Fatal("UNSUBSCRIBE never took effect")
				}
				runtime.Gosched()
			}
			if n := rdb.Publish(ctx, "news", "late").Val(); n != 1 { // the pattern still matches
				t.Errorf("PUBLISH after UNSUBSCRIBE = %d, want 1", n)
			}
			if m := <-ch; m.Pattern != "n*" || m.Payload != "late" {
				t.Errorf("after UNSUBSCRIBE got %+v", m)
			}
		})
	}
}

// TestPubsubUnsubscribeAll checks what the differential sessions cannot
// (Redis orders these by its hash tables): UNSUBSCRIBE without arguments
// confirms every channel, the counts falling to 0, and PUBSUB CHANNELS,
// NUMPAT and INFO count what is subscribed across connections.
func TestPubsubUnsubscribeAll(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	a.Send(mb("SUBSCRIBE", "c1", "c2", "c3") + mb("PSUBSCRIBE", "p*", "q*"))
	b.Send(mb("PSUBSCRIBE", "p*"))
	for range 5 {
		a.Reply()
	}
	b.Reply()
	c := dialRESP(t, rs.respAddr)
	if got := c.Do("PUBSUB", "NUMPAT"); got != ":2\r\n" {
		t.Errorf("PUBSUB NUMPAT = %q, want :2 (distinct patterns)", got)
	}
	if got := c.Do("PUBLISH", "pp", "x"); got != ":2\r\n" {
		t.Errorf("PUBLISH pp = %q, want :2 (one per pattern subscription)", got)
	}
	for _, s := range []*servertest.RESPClient{a, b} {
		if got := s.Reply(); got != "*4\r\n$8\r\npmessage\r\n$2\r\np*\r\n$2\r\npp\r\n$1\r\nx\r\n" {
			t.Errorf("pmessage = %q", got)
		}
	}
	info := c.Do("INFO", "stats")
	for _, f := range []string{"pubsub_channels:3\r\n", "pubsub_patterns:2\r\n", "client_output_buffer_limit_disconnections:0\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO stats lacks %q", f)
		}
	}
	a.Send(mb("UNSUBSCRIBE"))
	var names []string
	for i := range 3 {
		r := a.Reply()
		if !strings.HasPrefix(r, "*3\r\n$11\r\nunsubscribe\r\n") || !strings.HasSuffix(r, ":"+strconv.Itoa(4-i)+"\r\n") {
			t.Fatalf("UNSUBSCRIBE reply %d = %q", i, r)
		}
		names = append(names, strings.Split(r, "\r\n")[4])
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"c1", "c2", "c3"}) {
		t.Errorf("UNSUBSCRIBE confirmed %q", names)
	}
	if got := c.Do("PUBSUB", "CHANNELS"); got != "*0\r\n" {
		t.Errorf("PUBSUB CHANNELS after UNSUBSCRIBE = %q", got)
	}
}

// TestPubsubUnsubscribeListedOnceItRan guards Redis's pubsub.tcl test
// "PUBLISH/SUBSCRIBE after UNSUBSCRIBE without arguments": the client does
// not read the confirmations, but waits until CLIENT LIST shows the
// subscriber's cmd=unsubscribe, then expects PUBLISH to reach nobody. So
// CLIENT LIST must not show a command to others before it has taken
// effect. The test holds the hub's lock, so the UNSUBSCRIBE stops inside,
// with nothing left yet, and looks at CLIENT LIST then.
func TestPubsubUnsubscribeListedOnceItRan(t *testing.T) {
	var p *Protocol
	rs := startRESPWith(t, server.Config{}, store.Config{}, func(sp server.Protocol) server.Protocol {
		p = sp.(*Protocol)
		return sp
	})
	sub, c := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	sub.Send(mb("CLIENT", "SETNAME", "sub") + mb("SUBSCRIBE", "chan1", "chan2", "chan3"))
	for range 4 {
		sub.Reply()
	}
	subLine := func() string {
		for _, l := range strings.Split(c.Do("CLIENT", "LIST"), "\n") {
			if strings.Contains(l, " name=sub ") {
				return l
			}
		}
		t.Fatal("CLIENT LIST does not list the subscriber")
		return ""
	}

	p.pubsub.mu.Lock()
	sub.Send(mb("UNSUBSCRIBE"))
	for deadline := time.Now().Add(time.Minute); !waitsInUnsubscribe(); runtime.Gosched() {
		if time.Now().After(deadline) { // a bound for a broken server, not a timing
			p.pubsub.mu.Unlock()
			t.Fatal("the UNSUBSCRIBE never waited for the hub's lock")
		}
	}
	if l := subLine(); !strings.Contains(l, " cmd=subscribe ") {
		t.Errorf("an UNSUBSCRIBE under way is listed:\n%s", l)
	}
	p.pubsub.mu.Unlock()

	for range 3 {
		if r := sub.Reply(); !strings.HasPrefix(r, "*3\r\n$11\r\nunsubscribe\r\n") {
			t.Fatalf("UNSUBSCRIBE reply %q", r)
		}
	}
	if l := subLine(); !strings.Contains(l, " cmd=unsubscribe ") {
		t.Errorf("after the UNSUBSCRIBE:\n%s", l)
	}
	for _, ch := range []string{"chan1", "chan2", "chan3"} {
		if got := c.Do("PUBLISH", ch, "hello"); got != ":0\r\n" {
			t.Errorf("PUBLISH %s after UNSUBSCRIBE = %q, want :0", ch, got)
		}
	}
}

// waitsInUnsubscribe reports whether some goroutine waits for the hub's
// lock in (P)UNSUBSCRIBE.
func waitsInUnsubscribe() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "sync.(*RWMutex).Lock") && strings.Contains(g, "redis.(*conn).unsubscribe(") {
			return true
		}
	}
	return false
}

// TestPubsubIdleTimeoutSparesSubscribers: as in Redis, a subscribed
// connection is not idle-kicked (it waits for messages, not commands),
// while a plain one opened after it is.
func TestPubsubIdleTimeoutSparesSubscribers(t *testing.T) {
	rs := startRESP(t, server.Config{IdleTimeout: 200 * time.Millisecond}, store.Config{})
	sub := dialRESP(t, rs.respAddr)
	sub.Expect(mb("SUBSCRIBE", "c"), "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n")
	plain := dialRESP(t, rs.respAddr)
	plain.Expect(mb("PING"), "+PONG\r\n")
	if !plain.Closed(10 * time.Second) {
		t.Fatal("the plain connection was not idle-kicked")
	}
	pub := dialRESP(t, rs.respAddr)
	if got := pub.Do("PUBLISH", "c", "still here"); got != ":1\r\n" {
		t.Fatalf("PUBLISH = %q, want :1", got)
	}
	if got := sub.Reply(); got != "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$10\r\nstill here\r\n" {
		t.Errorf("subscriber got %q", got)
	}
}

// TestPubsubSlowSubscriberIsCutOff: a subscriber that never reads, while
// a publisher sends 64 times its output limit, is disconnected and
// counted; PUBLISH never waits for it (the publisher gets every reply
// while the subscriber reads nothing), a subscriber that reads gets every
// message, and the server's heap stays within a few limits' worth
// however much is published.
func TestPubsubSlowSubscriberIsCutOff(t *testing.T) {
	const limit = 1 << 20
	rs := startRESP(t, server.Config{
		WriteTimeout:      -1, // only the output limit may cut the subscriber off
		PubsubOutputLimit: server.OutputLimit{Hard: limit, Soft: -1},
	}, store.Config{})

	stuck, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := io.WriteString(stuck, mb("SUBSCRIBE", "firehose")); err != nil {
		t.Fatal(err)
	}
	stuckR := bufio.NewReader(stuck)
	if r, err := readRESPReply(stuckR); err != nil || !strings.Contains(r, "subscribe") {
		t.Fatalf("SUBSCRIBE: %q, %v", r, err)
	}

	// A healthy subscriber reads everything, concurrently.
	const msgs, size = 1024, 64 << 10 // 64 MiB in all
	healthy := dialRESP(t, rs.respAddr)
	healthy.Expect(mb("SUBSCRIBE", "firehose"), "*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n")
	// It acknowledges each batch, and the publisher waits for that, so
	// its own queue never holds more than a batch (half the limit).
	const batch = 8
	batches := make(chan int)
	go func() {
		defer close(batches)
		for range msgs / batch {
			for range batch {
				if r := healthy.Reply(); len(r) < size {
					return
				}
			}
			batches <- batch
		}
	}()

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	pub := dialRESP(t, rs.respAddr)
	payload := strings.Repeat("x", size)
	req := mb("PUBLISH", "firehose", payload)
	received := 0
	for i := 0; i < msgs; i += batch {
		pub.Send(strings.Repeat(req, batch))
		for range batch {
			if r := pub.Reply(); r != ":2\r\n" && r != ":1\r\n" {
				t.Fatalf("PUBLISH = %q", r)
			}
		}
		received += <-batches
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	if received != msgs {
		t.Errorf("the reading subscriber got %d messages, want %d", received, msgs)
	}
	if kicks := rs.srv.Stats().Count[server.StatOutputLimitKicks]; kicks != 1 {
		t.Errorf("output_limit_kicks = %d, want 1", kicks)
	}
	// The stuck subscriber's socket was closed: once it reads what the
	// kernel buffered, it sees the end.
	_ = stuck.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, stuckR); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Errorf("the stuck subscriber's connection did not end: %v", err)
	}
	grown := int64(peak) - int64(base)
	t.Logf("published %d MiB; heap grew by at most %.1f MiB (limit %d MiB)", msgs*size>>20, float64(grown)/(1<<20), limit>>20)
	if grown > 16*limit {
		t.Errorf("heap grew by %d bytes publishing %d MiB to a stuck subscriber, want it bounded near the %d-byte limit", grown, msgs*size>>20, limit)
	}
	if got := pub.Do("PUBSUB", "NUMSUB", "firehose"); got != "*2\r\n$8\r\nfirehose\r\n:1\r\n" {
		t.Errorf("PUBSUB NUMSUB after the cut = %q, want only the healthy subscriber", got)
	}
}

// TestPubsubNoGoroutineLeak: every way a subscriber's connection ends
// (QUIT, the client closing, RESET then close, the output limit, server
// shutdown) leaves its channels and stops its writer goroutine.
func TestPubsubNoGoroutineLeak(t *testing.T) {
	// Registered first, so it runs last: after the server has stopped.
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	rs := startRESP(t, server.Config{PubsubOutputLimit: server.OutputLimit{Hard: 64 << 10, Soft: -1}}, store.Config{})
	sub := func(channel string) net.Conn {
		nc, err := net.Dial("tcp", rs.respAddr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(nc, mb("SUBSCRIBE", channel)+mb("PSUBSCRIBE", channel+"*"))
		br := bufio.NewReader(nc)
		for range 2 {
			if _, err := readRESPReply(br); err != nil {
				t.Fatal(err)
			}
		}
		return nc
	}
	quit := sub("c")
	_, _ = io.WriteString(quit, mb("QUIT"))
	closed := sub("c")
	closed.Close()
	reset := sub("c")
	_, _ = io.WriteString(reset, mb("RESET"))
	reset.Close()
	stuck := sub("s")
	defer stuck.Close()
	open := sub("c")
	defer open.Close()

	pub := dialRESP(t, rs.respAddr)
	big := mb("PUBLISH", "s", strings.Repeat("m", 32<<10))
	for rs.srv.Stats().Count[server.StatOutputLimitKicks] == 0 {
		pub.Send(big)
		pub.Reply()
	}
	// Every subscriber but the open one leaves; then shutdown ends it.
	deadline := time.Now().Add(20 * time.Second)
	for pub.Do("PUBSUB", "NUMSUB", "c", "s") != "*4\r\n$1\r\nc\r\n:1\r\n$1\r\ns\r\n:0\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("subscribers left: PUBSUB NUMSUB c s = %q, want 1 and 0", pub.Do("PUBSUB", "NUMSUB", "c", "s"))
		}
		runtime.Gosched()
	}
	if got := pub.Do("PUBSUB", "NUMPAT"); got != ":1\r\n" {
		t.Errorf("PUBSUB NUMPAT = %q, want :1", got)
	}
}

// BenchmarkPublishFanout publishes 64-byte messages to 1, 10 and 100
// subscribers of one channel, MiniKV in process and redis-server beside
// it (skipped without it), and reports deliveries per second: an
// iteration is one PUBLISH (pipelined 32 deep), and the timer stops once
// every subscriber has read every message. It loops over b.N rather than
// b.Loop: the subscribers, started first, must know how many messages
// to wait for.
//
//	go test -run '^$' -bench PublishFanout -benchtime 100000x ./internal/server/redis
func BenchmarkPublishFanout(b *testing.B) {
	targets := []struct{ name, addr string }{{"minikv", startRESP(b, server.Config{}, store.Config{}).respAddr}}
	if addr := startRedisServerIfAny(b); addr != "" {
		targets = append(targets, struct{ name, addr string }{"redis", addr})
	}
	for _, subs := range []int{1, 10, 100} {
		for _, tg := range targets {
			b.Run(fmt.Sprintf("subs=%d/%s", subs, tg.name), func(b *testing.B) {
				benchFanout(b, tg.addr, subs)
			})
		}
	}
}

func benchFanout(b *testing.B, addr string, subs int) {
	channel := fmt.Sprintf("fan:%d:%d", subs, b.N)
	msg := multibulk("PUBLISH", channel, strings.Repeat("m", 64))
	var wg sync.WaitGroup
	counts := make([]int, subs)
	conns := make([]net.Conn, subs)
	for i := range subs {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = nc
		br := bufio.NewReaderSize(nc, 64<<10)
		_, _ = io.WriteString(nc, multibulk("SUBSCRIBE", channel))
		if _, err := readRESPReply(br); err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := readRESPReply(br); err != nil {
					return
				}
				counts[i]++
				if counts[i] == b.N {
					return
				}
			}
		}()
	}
	pub, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	bw, br := bufio.NewWriterSize(pub, 64<<10), bufio.NewReaderSize(pub, 64<<10)
	const depth = 32
	inflight := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		_, _ = bw.WriteString(msg)
		if inflight++; inflight == depth {
			_ = bw.Flush()
			for ; inflight > 0; inflight-- {
				if _, err := readRESPReply(br); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	_ = bw.Flush()
	for ; inflight > 0; inflight-- {
		if _, err := readRESPReply(br); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	for _, nc := range conns {
		nc.Close()
	}
	for i, n := range counts {
		if n != b.N {
			b.Fatalf("subscriber %d read %d messages, want %d", i, n, b.N)
		}
	}
	b.ReportMetric(float64(b.N)*float64(subs)/elapsed.Seconds(), "deliveries/s")
}

// startRedisServerIfAny starts redis-server for a benchmark, which runs
// without it too: it returns "" when there is none. The process is
// stopped by its PID when the benchmark ends.
func startRedisServerIfAny(b *testing.B) string {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir())
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	b.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return addr
		}
		select {
		case <-exited:
			b.Fatal("redis-server exited at start")
		case <-time.After(20 * time.Millisecond):
		}
	}
	b.Fatal("redis-server did not start")
	return ""
}

// TestPubsubSoftLimitCutsOff: a subscriber over the soft limit for
// SoftFor (here a nanosecond: the second message over it) is cut off
// although the hard limit is off.
func TestPubsubSoftLimitCutsOff(t *testing.T) {
	rs := startRESP(t, server.Config{
		WriteTimeout:      -1,
		PubsubOutputLimit: server.OutputLimit{Hard: -1, Soft: 64 << 10, SoftFor: time.Nanosecond},
	}, store.Config{})
	stuck := dialRESP(t, rs.respAddr)
	stuck.Expect(mb("SUBSCRIBE", "s"), "*3\r\n$9\r\nsubscribe\r\n$1\r\ns\r\n:1\r\n")
	pub := dialRESP(t, rs.respAddr)
	req := mb("PUBLISH", "s", strings.Repeat("m", 32<<10))
	for n := 0; rs.srv.Stats().Count[server.StatOutputLimitKicks] == 0; n++ {
		if n == 100_000 { // 3 GiB: the kernel's buffers cannot hold that
			t.Fatal("the subscriber over its soft limit was never cut off")
		}
		pub.Send(req)
		pub.Reply()
	}
	// Once it reads what the kernel buffered, it sees the end.
	_ = stuck.Conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, stuck.R); err != nil && !servertest.IsRESPReset(err) {
		t.Errorf("the subscriber's connection did not end: %v", err)
	}
}
