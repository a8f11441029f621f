// Command lsmbench runs the seed workload against MiniKV's LSM engine,
// Pebble, goleveldb and Badger, one process per engine and run:
//
//	write    N × Put("key_%d", 128 random bytes), in order or shuffled
//	close    Close
//	reopen   Open (including log replay)
//	read     R × Get of a uniformly random written key (every value checked)
//	missing  R × Get of a key that was never written
//	compact  full compaction
//	read2    R × Get of a random written key
//	missing2 R × Get of an absent key
//
// For each phase it records wall time, CPU time (getrusage), peak RSS
// (VmHWM, reset before each phase through /proc/self/clear_refs) and bytes
// on disk (allocated blocks, not apparent size).
//
// Usage:
//
//	go run . -runs 3                       # every engine, both orders; prints a table
//	go run . -engine minikv -order random  # one run, one JSON line
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	engineFlag  = flag.String("engine", "", "run one engine in this process: minikv, minikv-mmap, minikv-write, minikv-sync, minikv-sync-pipe, minikv-mmap-sync, pebble, pebble-bloom, pebble-sync, goleveldb, badger")
	enginesFlag = flag.String("engines", "minikv,minikv-write,pebble,pebble-bloom,goleveldb,badger", "engines for the comparison")
	ordersFlag  = flag.String("orders", "seq,random", "key orders for the comparison")
	orderFlag   = flag.String("order", "seq", "write order for one run: seq or random")
	nFlag       = flag.Int("n", 1_000_000, "keys written")
	readsFlag   = flag.Int("reads", 250_000, "Gets per read phase")
	runsFlag    = flag.Int("runs", 3, "runs per engine and order (median reported)")
	writersFlag = flag.Int("writers", 1, "goroutines sharing the write phase (the seed's shape is 1; the -sync engines need many to group-commit)")
	dirFlag     = flag.String("dir", "", "parent directory for the databases (default: a temp dir)")
	cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile per phase to this prefix (one run only)")
	metricsFlag = flag.Bool("metrics", false, "log engine metrics at close (minikv, pebble)")
)

var testMetrics bool

var phases = []string{"write", "close", "reopen", "read", "missing", "compact", "read2", "missing2"}

type phaseResult struct {
	WallMs  float64 `json:"wall_ms"`
	CPUMs   float64 `json:"cpu_ms"`
	PeakRSS int64   `json:"peak_rss"`
	Disk    int64   `json:"disk"`
}

type runResult struct {
	Engine string                 `json:"engine"`
	Order  string                 `json:"order"`
	Phases map[string]phaseResult `json:"phases"`
	Load   string                 `json:"load"`
}

func main() {
	flag.Parse()
	testMetrics = *metricsFlag
	if *engineFlag != "" {
		res, err := runOne(*engineFlag, *orderFlag)
		if err != nil {
			log.Fatalf("%s: %v", *engineFlag, err)
		}
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	compare()
}

// value fills v with the 128-byte value of key i: a splitmix64 stream
// seeded by a hash of i, so values are incompressible within and across
// keys (a stream seeded by i itself would make key i+1's value key i's
// shifted by 8 bytes, which block compression would exploit).
func value(v []byte, i int) []byte {
	v = v[:128]
	x := mix64(uint64(i) + 0x632be59bd9b4e019)
	for j := 0; j < 128; j += 8 {
		x += 0x9e3779b97f4a7c15
		z := mix64(x)
		for b := 0; b < 8; b++ {
			v[j+b] = byte(z >> (8 * b))
		}
	}
	return v
}

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func key(dst []byte, i int) []byte {
	return strconv.AppendInt(append(dst[:0], "key_"...), int64(i), 10)
}

func runOne(name, order string) (*runResult, error) {
	e, err := newEngine(name)
	if err != nil {
		return nil, err
	}
	parent := *dirFlag
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "lsmbench-"+name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	load, _ := os.ReadFile("/proc/loadavg")
	res := &runResult{Engine: name, Order: order, Phases: map[string]phaseResult{},
		Load: strings.Join(strings.Fields(string(load))[:3], " ")}
	n, reads := *nFlag, *readsFlag

	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	if order == "random" {
		rand.New(rand.NewPCG(7, 7)).Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	}
	var kb []byte
	vb := make([]byte, 128)
	want := make([]byte, 128)
	readPhase := func(seed uint64, present bool) error {
		rng := rand.New(rand.NewPCG(seed, seed))
		for r := 0; r < reads; r++ {
			i := rng.IntN(n)
			if !present {
				i += n // never written
			}
			kb = key(kb, i)
			want = value(want, i)
			found, err := e.get(kb, func(v []byte) bool { return bytes.Equal(v, want) })
			if err != nil {
				return err
			}
			if found != present {
				return fmt.Errorf("Get(%s): found=%v, want %v", kb, found, present)
			}
		}
		return nil
	}
	steps := map[string]func() error{
		"write": func() error {
			if *writersFlag <= 1 {
				for _, i := range ids {
					if err := e.put(key(kb, i), value(vb, i)); err != nil {
						return err
					}
				}
				return nil
			}
			// Writer w puts ids[w], ids[w+W], ...: the same keys in the
			// same overall order, interleaved.
			errs := make(chan error, *writersFlag)
			for w := range *writersFlag {
				go func() {
					var kb []byte
					vb := make([]byte, 128)
					for j := w; j < len(ids); j += *writersFlag {
						if err := e.put(key(kb, ids[j]), value(vb, ids[j])); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			var err error
			for range *writersFlag {
				err = errors.Join(err, <-errs)
			}
			return err
		},
		"close":    e.close,
		"reopen":   func() error { return e.open(dir) },
		"read":     func() error { return readPhase(1, true) },
		"missing":  func() error { return readPhase(2, false) },
		"compact":  e.compact,
		"read2":    func() error { return readPhase(3, true) },
		"missing2": func() error { return readPhase(4, false) },
	}
	if err := e.open(dir); err != nil {
		return nil, err
	}
	for _, p := range phases {
		runtime.GC()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		var prof *os.File
		if *cpuProfile != "" {
			prof, _ = os.Create(fmt.Sprintf("%s.%s.%s.pprof", *cpuProfile, name, p))
			pprof.StartCPUProfile(prof)
		}
		cpu0 := cpuTime()
		t0 := time.Now()
		err := steps[p]()
		wall := time.Since(t0)
		cpu := cpuTime() - cpu0
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", p, err)
		}
		res.Phases[p] = phaseResult{
			WallMs:  float64(wall.Microseconds()) / 1000,
			CPUMs:   float64(cpu.Microseconds()) / 1000,
			PeakRSS: peakRSS(),
			Disk:    diskUsage(dir),
		}
	}
	return res, e.close()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func diskUsage(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil {
			total += st.Blocks * 512
		}
		return nil
	})
	return total
}

// compare runs every engine and order -runs times, each run in its own
// process, interleaving engines so background load hits them alike.
func compare() {
	engines := strings.Split(*enginesFlag, ",")
	orders := strings.Split(*ordersFlag, ",")
	results := map[string][]*runResult{}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	for run := 0; run < *runsFlag; run++ {
		for _, order := range orders {
			for _, name := range engines {
				args := []string{"-engine", name, "-order", order, "-n", strconv.Itoa(*nFlag),
					"-reads", strconv.Itoa(*readsFlag), "-writers", strconv.Itoa(*writersFlag)}
				if *dirFlag != "" {
					args = append(args, "-dir", *dirFlag)
				}
				cmd := exec.Command(self, args...)
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					log.Fatalf("%s %s: %v", name, order, err)
				}
				var r runResult
				if err := json.Unmarshal(out, &r); err != nil {
					log.Fatalf("%s %s: %v: %s", name, order, err, out)
				}
				log.Printf("run %d %s %s (load %s): %s", run+1, order, name, r.Load, brief(&r))
				results[order+"/"+name] = append(results[order+"/"+name], &r)
			}
		}
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "\nMedian (min) of %d runs; %d keys by %d writer(s), %d Gets per read phase; peak RSS and disk are maxima over phases and runs.\n",
		*runsFlag, *nFlag, *writersFlag, *readsFlag)
	for _, order := range orders {
		fmt.Fprintf(w, "\n%s order, wall ms:\n\n| engine | %s | peak RSS | disk |\n|---|%s---|---|\n",
			order, strings.Join(phases, " | "), strings.Repeat("---|", len(phases)))
		for _, name := range engines {
			rs := results[order+"/"+name]
			fmt.Fprintf(w, "| %s |", name)
			var rss, disk int64
			for _, p := range phases {
				var ws []float64
				for _, r := range rs {
					ws = append(ws, r.Phases[p].WallMs)
					rss = max(rss, r.Phases[p].PeakRSS)
					disk = max(disk, r.Phases[p].Disk)
				}
				slices.Sort(ws)
				fmt.Fprintf(w, " %.0f (%.0f) |", ws[len(ws)/2], ws[0])
			}
			fmt.Fprintf(w, " %d MiB | %d MiB |\n", rss>>20, disk>>20)
		}
		fmt.Fprintf(w, "\n%s order, CPU ms (user+system, all threads):\n\n| engine | %s |\n|---|%s\n",
			order, strings.Join(phases, " | "), strings.Repeat("---|", len(phases)))
		for _, name := range engines {
			fmt.Fprintf(w, "| %s |", name)
			for _, p := range phases {
				var cs []float64
				for _, r := range results[order+"/"+name] {
					cs = append(cs, r.Phases[p].CPUMs)
				}
				slices.Sort(cs)
				fmt.Fprintf(w, " %.0f (%.0f) |", cs[len(cs)/2], cs[0])
			}
			fmt.Fprintln(w)
		}
	}
}

func brief(r *runResult) string {
	var parts []string
	for _, p := range phases {
		ph := r.Phases[p]
		parts = append(parts, fmt.Sprintf("%s=%.0fms/cpu%.0f", p, ph.WallMs, ph.CPUMs))
	}
	return strings.Join(parts, " ")
}
