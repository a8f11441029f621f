package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ServerOptions are the settings every server started for a comparison
// gets, translated into each one's own flags so that they match.
type ServerOptions struct {
	MemoryMB       int    // item memory: minikv/memcached -m, redis maxmemory (allkeys-lru)
	Threads        int    // minikv -t (GOMAXPROCS), memcached -t; Redis see RedisIOThreads
	RedisIOThreads int    // redis io-threads; 0 means 1 (see below)
	MaxConns       int    // minikv/memcached -c, redis maxclients
	MinikvBin      string // path of bin/minikv
	MemcachedBin   string // default: memcached on PATH
	RedisBin       string // default: redis-server on PATH
	NullCmd        []string
	NullValueSize  int // the value size the null server returns for every get
	// Durable, when set (always, everysec or no), starts MiniKV in durable
	// mode (--data-dir in a temporary directory, --fsync Durable) and Redis
	// with its append-only file (appendonly yes, appendfsync Durable), so
	// the two persist writes under the same promise.
	Durable      string
	StartTimeout time.Duration // how long a server may take to accept connections
}

// Known target names for --compare.
const (
	NameMinikv     = "minikv"
	NameMinikvRESP = "minikv-resp"
	NameMemcached  = "memcached"
	NameRedis      = "redis"
	NameNull       = "null"
)

// Server is a server process this process started.
type Server struct {
	Name  string
	Addr  string
	Proto Proto
	Args  []string // the full command line, for the report

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been reaped
	dir    string        // scratch directory (Redis's --dir), removed on Stop
	log    *tailBuffer
	once   sync.Once
}

// Target returns the load target of s.
func (s *Server) Target() Target {
	return Target{Name: s.Name, Addr: s.Addr, Proto: s.Proto, PID: s.PID()}
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Running reports whether the process has not exited.
func (s *Server) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Stop ends the server: SIGTERM, then SIGKILL if it is still there after
// three seconds. It waits until the process is reaped, so no zombie or
// orphan is left, and is safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.Running() {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(3 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
		}
		if s.dir != "" {
			_ = os.RemoveAll(s.dir)
		}
	})
}

// Fleet owns every server started for a run and stops them all on Close.
type Fleet struct {
	opt ServerOptions

	mu      sync.Mutex // protects servers and hasRESP
	servers []*Server
	help    map[string]string // minikv binary -> its -h output
}

// NewFleet returns a Fleet that starts servers with opt.
func NewFleet(opt ServerOptions) *Fleet {
	if opt.StartTimeout == 0 {
		opt.StartTimeout = 10 * time.Second
	}
	if opt.MemoryMB == 0 {
		opt.MemoryMB = 1024
	}
	if opt.Threads == 0 {
		opt.Threads = 2
	}
	if opt.MaxConns == 0 {
		opt.MaxConns = 4096
	}
	return &Fleet{opt: opt}
}

// Servers returns the servers started so far.
func (f *Fleet) Servers() []*Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Server(nil), f.servers...)
}

// Close stops every server the Fleet started, in parallel, and waits.
func (f *Fleet) Close() {
	var wg sync.WaitGroup
	for _, s := range f.Servers() {
		wg.Go(s.Stop)
	}
	wg.Wait()
}

// ErrUnknownTarget is returned by Start for a name it cannot start.
var ErrUnknownTarget = errors.New("bench: unknown target")

// Start starts the server called name on free loopback ports and waits
// until it accepts connections.
func (f *Fleet) Start(ctx context.Context, name string) (*Server, error) {
	o := f.opt
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := strconv.Itoa(port)
	mem := strconv.Itoa(o.MemoryMB)
	threads := strconv.Itoa(o.Threads)
	maxc := strconv.Itoa(o.MaxConns)
	s := &Server{Name: name, Addr: net.JoinHostPort("127.0.0.1", p), Proto: Memcache{}}
	var bin string
	var args []string
	switch name {
	case NameMinikv, NameMinikvRESP:
		bin = o.MinikvBin
		if bin == "" {
			return nil, fmt.Errorf("bench: no minikv binary (build it with make build, or pass --minikv-bin)")
		}
		args = []string{"-p", p, "-l", "127.0.0.1", "-m", mem, "-t", threads, "-c", maxc, "-U", "0"}
		hasRESP := f.minikvHas(bin, "resp-port")
		if f.minikvHas(bin, "admin-addr") {
			// Its admin port defaults to 127.0.0.1:9150: off, so runs in
			// parallel (and a MiniKV already running) never collide.
			args = append(args, "--admin-addr", "")
		}
		if o.Durable != "" {
			dir, err := os.MkdirTemp("", "minikv-bench-data-")
			if err != nil {
				return nil, err
			}
			s.dir = dir
			args = append(args, "--data-dir", dir, "--fsync", o.Durable)
		}
		switch {
		case name == NameMinikv && hasRESP:
			// Its RESP port defaults to 6379: turn it off, or two MiniKVs
			// (or a real Redis on 6379) would collide.
			args = append(args, "--resp-port", "0")
		case name == NameMinikvRESP:
			if !hasRESP {
				return nil, fmt.Errorf("bench: %s has no --resp-port yet, so %s cannot be measured", bin, NameMinikvRESP)
			}
			rport, err := freePort()
			if err != nil {
				return nil, err
			}
			args = append(args, "--resp-port", strconv.Itoa(rport))
			s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(rport))
			s.Proto = RESP{}
		}
	case NameMemcached:
		bin = orDefault(o.MemcachedBin, "memcached")
		args = []string{"-p", p, "-l", "127.0.0.1", "-m", mem, "-t", threads, "-c", maxc, "-U", "0"}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "root") // memcached refuses to run as root otherwise
		}
	case NameRedis:
		bin = orDefault(o.RedisBin, "redis-server")
		dir, err := os.MkdirTemp("", "minikv-bench-redis-")
		if err != nil {
			return nil, err
		}
		s.dir = dir
		// Redis executes commands on one thread whatever io-threads says;
		// its I/O threads busy-poll, and on a machine whose cores the
		// client shares they steal the client's CPU (measured here, c=50
		// P=1: 15-18k ops/s with io-threads 2, 78-85k with 1). Redis's own
		// default, 1, is therefore the matched setting unless asked.
		io := max(o.RedisIOThreads, 1)
		aof := []string{"--appendonly", "no"}
		if o.Durable != "" {
			aof = []string{"--appendonly", "yes", "--appendfsync", o.Durable}
		}
		args = []string{
			"--port", p, "--bind", "127.0.0.1", "--save", "", aof[0], aof[1],
			"--maxmemory", mem + "mb", "--maxmemory-policy", "allkeys-lru",
			"--maxclients", maxc, "--io-threads", strconv.Itoa(max(io, 1)),
			"--dir", dir, "--daemonize", "no", "--logfile", "", "--protected-mode", "no",
		}
		args = append(args, aof[2:]...)
		s.Proto = RESP{}
	case NameNull:
		if len(o.NullCmd) == 0 {
			return nil, fmt.Errorf("bench: no command to start the null server")
		}
		bin = o.NullCmd[0]
		args = append(append([]string(nil), o.NullCmd[1:]...), "-p", p, "-d", strconv.Itoa(o.NullValueSize))
	default:
		return nil, fmt.Errorf("%w %q (want %s, %s, %s, %s or %s)", ErrUnknownTarget, name,
			NameMinikv, NameMinikvRESP, NameMemcached, NameRedis, NameNull)
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if s.dir != "" {
			_ = os.RemoveAll(s.dir)
		}
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	s.log = &tailBuffer{max: 4 << 10}
	s.cmd = exec.Command(path, args...)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	s.cmd.SysProcAttr = procAttr()
	s.Args = append([]string{path}, args...)
	if err := s.cmd.Start(); err != nil {
		if s.dir != "" {
			_ = os.RemoveAll(s.dir)
		}
		return nil, fmt.Errorf("bench: starting %s: %w", name, err)
	}
	s.exited = make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	f.mu.Lock()
	f.servers = append(f.servers, s)
	f.mu.Unlock()
	if err := waitAccepting(ctx, s, o.StartTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// freePort asks the kernel for a free loopback port by binding :0. The
// port is released before the server binds it; another process could take
// it in between, in which case the server fails to start and says so.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitAccepting dials s until it accepts, it exits, or timeout passes.
func waitAccepting(ctx context.Context, s *Server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if !s.Running() {
			return fmt.Errorf("bench: %s exited before accepting connections: %s", s.Name, s.log.String())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s did not accept connections on %s within %v: %s", s.Name, s.Addr, timeout, s.log.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// minikvHas reports whether bin's help mentions the flag --name, asking
// each binary once.
func (f *Fleet) minikvHas(bin, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	help, ok := f.help[bin]
	if !ok {
		out, _ := exec.Command(bin, "-h").CombinedOutput()
		help = string(out)
		if f.help == nil {
			f.help = map[string]string{}
		}
		f.help[bin] = help
	}
	return strings.Contains(help, "-"+name)
}

// FindMinikv looks for the minikv binary next to exe (bin/minikv-bench's
// sibling), then on PATH. It returns "" when there is none.
func FindMinikv(exe string) string {
	if exe != "" {
		p := filepath.Join(filepath.Dir(exe), "minikv")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("minikv"); err == nil {
		return p
	}
	return ""
}

// tailBuffer keeps the last max bytes written to it: a server's final
// complaint, for an error message, without unbounded growth.
type tailBuffer struct {
	mu  sync.Mutex // protects b
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
