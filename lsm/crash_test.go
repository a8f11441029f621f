package lsm

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
	"github.com/minikv/minikv/lsm/vfs/vfstest"
)

const crashWriters = 4

func crashKey(w, c int) []byte { return fmt.Appendf(nil, "w%d-%08d", w, c) }
func crashValue(w, c int) []byte {
	return fmt.Appendf(nil, "value-%d-%d-%s", w, c, strings.Repeat("x", c%97))
}

// crashOptions keeps tables small so flushes and compactions run while the
// writer is killed.
func crashOptions(mode SyncMode, mapped bool) Options {
	return Options{Sync: mode, MappedWAL: mapped, WriteWAL: !mapped, MemTableSize: 128 << 10, TargetFileSize: 64 << 10, LBaseMaxBytes: 256 << 10}
}

// TestCrashHelper is the writer subprocess of TestCrashKill9; it does nothing
// unless LSM_CRASH_DIR is set. Each writer goroutine puts keys in order and
// deletes every 10th key it wrote five steps earlier, printing "p w c" or
// "d w c" once the call has returned.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv("LSM_CRASH_DIR")
	if dir == "" {
		t.Skip("crash test subprocess only")
	}
	mode, _ := strconv.Atoi(os.Getenv("LSM_CRASH_MODE"))
	start, _ := strconv.Atoi(os.Getenv("LSM_CRASH_START"))
	o := crashOptions(SyncMode(mode), os.Getenv("LSM_CRASH_MAPPED") == "1")
	if os.Getenv("LSM_CRASH_RECYCLE") == "1" {
		o.RecycleWAL = 2
	}
	if stop := os.Getenv("LSM_CRASH_STOP"); stop != "" {
		// Stop the engine's next flush or compaction for good at its nth
		// file operation ("flush 3"); the parent kills on "stopped ...".
		var kind string
		var n int
		fmt.Sscanf(stop, "%s %d", &kind, &n)
		fs := &vfstest.StopFS{FS: vfs.Default, Out: os.Stdout}
		fs.Arm(kind, n)
		o.FS = fs
	}
	db, err := Open(dir, o)
	if err != nil {
		fmt.Println("open error:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	ack := func(s string) {
		mu.Lock()
		out.WriteString(s)
		out.Flush()
		mu.Unlock()
	}
	ack("ready\n")
	var wg sync.WaitGroup
	for w := 0; w < crashWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := start; ; c++ {
				if err := db.Put(crashKey(w, c), crashValue(w, c)); err != nil {
					ack(fmt.Sprintf("error %v\n", err))
					return
				}
				ack(fmt.Sprintf("p %d %d\n", w, c))
				if c%10 == 0 && c-5 >= start {
					if err := db.Delete(crashKey(w, c-5)); err != nil {
						ack(fmt.Sprintf("error %v\n", err))
						return
					}
					ack(fmt.Sprintf("d %d %d\n", w, c-5))
				}
			}
		}()
	}
	wg.Wait()
	os.Exit(3)
}

// TestCrashKill9 kills a writing subprocess with SIGKILL at random moments
// (several times on one directory) and checks after each reopen that every
// acknowledged write — and every acknowledged delete — is there. The
// "flush" and "compaction" subtests kill in the middle of that work
// instead: the child's filesystem (vfstest.StopFS) stops the engine's next
// flush (compaction) for good at a random one of its file operations and
// says so, and the parent kills then; each subtest fails unless one of its
// cycles really killed there.
func TestCrashKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	cycles := 2
	if *soak {
		cycles = 25
	}
	for _, tc := range []struct {
		mode    SyncMode
		mapped  bool
		stop    string // "": kill at a random time; "flush", "compaction": kill inside one
		recycle bool   // Options.RecycleWAL
	}{
		{SyncNone, false, "", false}, {SyncEverySecond, false, "", false}, {SyncAlways, false, "", false}, {SyncNone, true, "", false}, {SyncAlways, true, "", false},
		{SyncNone, false, "flush", false}, {SyncAlways, false, "flush", false}, {SyncNone, false, "compaction", false}, {SyncAlways, false, "compaction", false},
		{SyncEverySecond, false, "", true}, {SyncAlways, false, "", true}, {SyncAlways, false, "flush", true},
	} {
		mode, mapped, stop, recycle := tc.mode, tc.mapped, tc.stop, tc.recycle
		name := mode.String()
		if mapped {
			name += "-mapped"
		}
		if recycle {
			name += "-recycled"
		}
		if stop != "" {
			name += "-" + stop
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
			puts := map[string]bool{} // acknowledged puts, minus acknowledged deletes
			dels := map[string]bool{}
			start := 0
			stopsHit := 0
			for cycle := 0; cycle < cycles; cycle++ {
				arm := ""
				if stop != "" {
					arm = fmt.Sprintf("%s %d", stop, rng.IntN(10))
				}
				acked, maxC, stopped := runCrashChild(t, dir, mode, mapped, recycle, start, 30+rng.IntN(300), arm)
				if stop != "" {
					if stopped != "" {
						stopsHit++
						t.Logf("cycle %d: killed at %q", cycle, stopped)
					} else {
						t.Logf("cycle %d: the %s did not stop in time; killed anyway", cycle, stop)
					}
				}
				var last [crashWriters]*crashAck
				for i, a := range acked {
					k := string(crashKey(a.w, a.c))
					if a.del {
						delete(puts, k)
						dels[k] = true
					} else {
						puts[k] = true
					}
					last[a.w] = &acked[i]
				}
				// The operation after a writer's last ack was in flight when
				// the kill came: if it was a delete, its key may or may not
				// be gone.
				for _, a := range last {
					if a != nil && !a.del && a.c%10 == 0 && a.c-5 >= start {
						delete(puts, string(crashKey(a.w, a.c-5)))
					}
				}
				start = maxC + 100
				// What a kill leaves is healthy to the offline checker too.
				// Without its shared lock: a sibling subtest's child forked
				// while the lock's file is open would hold it until exec,
				// and the Open below would find the directory in use.
				noLock := struct{ vfs.FS }{vfs.Default}
				if r, err := Check(dir, InspectOptions{FS: noLock}); err != nil {
					t.Fatalf("cycle %d: Check after kill: %v (%v)", cycle, err, r)
				}
				o := crashOptions(mode, mapped)
				if recycle {
					o.RecycleWAL = 2
				}
				db, err := Open(dir, o)
				if err != nil {
					t.Fatalf("cycle %d: reopen after kill: %v", cycle, err)
				}
				for k := range puts {
					var w, c int
					fmt.Sscanf(k, "w%d-%d", &w, &c)
					v, err := db.Get([]byte(k))
					if err != nil || string(v) != string(crashValue(w, c)) {
						t.Fatalf("cycle %d: acknowledged Put(%s) lost after kill -9: got %q, %v", cycle, k, v, err)
					}
				}
				for k := range dels {
					if v, err := db.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
						t.Fatalf("cycle %d: acknowledged Delete(%s) lost after kill -9: got %q, %v", cycle, k, v, err)
					}
				}
				m := db.Metrics()
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				t.Logf("cycle %d: %d acks, %d live keys verified; tables %v", cycle, len(acked), len(puts), levelFiles(m))
			}
			if stop != "" && stopsHit == 0 {
				t.Fatalf("no cycle killed the process inside a %s", stop)
			}
		})
	}
}

func levelFiles(m Metrics) []int {
	var out []int
	for _, l := range m.Levels {
		out = append(out, l.Files)
	}
	return out
}

type crashAck struct {
	w, c int
	del  bool
}

// runCrashChild runs the writer subprocess and kills it killAfterMs after
// it is ready, or, with stop set ("flush 3"), once it reports that its
// filesystem stopped that work (within 20 s, else it kills anyway). It
// returns the acknowledged operations, the highest counter acknowledged
// and the child's "stopped ..." report ("" if none).
func runCrashChild(t *testing.T, dir string, mode SyncMode, mapped, recycle bool, start, killAfterMs int, stop string) ([]crashAck, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		"LSM_CRASH_DIR="+dir,
		"LSM_CRASH_MODE="+strconv.Itoa(int(mode)),
		"LSM_CRASH_START="+strconv.Itoa(start),
		"LSM_CRASH_STOP="+stop,
		"LSM_CRASH_MAPPED="+map[bool]string{true: "1", false: "0"}[mapped],
		"LSM_CRASH_RECYCLE="+map[bool]string{true: "1", false: "0"}[recycle])
	if stop != "" {
		killAfterMs = 20000 // the fallback: the kill normally follows "stopped"
	}
	var stopped string
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acks []crashAck
	maxC := start
	sc := bufio.NewScanner(stdout)
	var killed atomic.Bool
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready":
			time.AfterFunc(time.Duration(killAfterMs)*time.Millisecond, func() {
				killed.Store(true)
				_ = cmd.Process.Kill() // SIGKILL
			})
		case strings.HasPrefix(line, "stopped "):
			if stopped == "" && !killed.Load() {
				stopped = line
				killed.Store(true)
				_ = cmd.Process.Kill() // SIGKILL, inside the stopped work
			}
		case strings.HasPrefix(line, "p "), strings.HasPrefix(line, "d "):
			var a crashAck
			if _, err := fmt.Sscanf(line[2:], "%d %d", &a.w, &a.c); err != nil {
				continue // a line cut by the kill
			}
			a.del = line[0] == 'd'
			acks = append(acks, a)
			maxC = max(maxC, a.c)
		default:
			if !killed.Load() {
				t.Fatalf("crash child: %s", line)
			}
		}
	}
	_ = cmd.Wait()
	if !killed.Load() {
		t.Fatalf("crash child exited before it was killed")
	}
	return acks, maxC, stopped
}

// TestPowerLossGroupCommit runs concurrent writers in SyncAlways on the
// in-memory filesystem, takes a power-loss image (only synced bytes, only
// synced directory entries) while they run, and checks that every write
// acknowledged before the image was taken is in it.
func TestPowerLossGroupCommit(t *testing.T) {
	rounds := 3
	if *soak {
		rounds = 40
	}
	for round := 0; round < rounds; round++ {
		fs := vfs.NewMem()
		o := crashOptions(SyncAlways, false)
		o.FS = fs
		db, err := Open("/db", o)
		if err != nil {
			t.Fatal(err)
		}
		var acked [crashWriters]atomic.Int64 // highest acknowledged counter + 1
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := 0; w < crashWriters; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := 0; !stop.Load(); c++ {
					if err := db.Put(crashKey(w, c), crashValue(w, c)); err != nil {
						return
					}
					acked[w].Store(int64(c + 1))
				}
			}()
		}
		time.Sleep(time.Duration(20+round*7%80) * time.Millisecond)
		var snapshot [crashWriters]int64
		for w := range acked {
			snapshot[w] = acked[w].Load()
		}
		image := fs.CrashClone(false)
		stop.Store(true)
		wg.Wait()
		_ = db.Close()

		o.FS = image
		db, err = Open("/db", o)
		if err != nil {
			t.Fatalf("round %d: open after power loss: %v", round, err)
		}
		total := int64(0)
		for w := 0; w < crashWriters; w++ {
			for c := 0; c < int(snapshot[w]); c++ {
				v, err := db.Get(crashKey(w, c))
				if err != nil || string(v) != string(crashValue(w, c)) {
					t.Fatalf("round %d: acknowledged Put(%s) lost in power loss: %q, %v", round, crashKey(w, c), v, err)
				}
			}
			total += snapshot[w]
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged writes survived", round, total)
	}
}
