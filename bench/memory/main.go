// Command memory measures what an item costs each server in resident
// memory: it starts minikv, memcached and redis-server side by side (the
// same fleet minikv-bench --compare uses), loads N keys with V-byte values
// into each over its own protocol, and reports
//
//	overhead per item = (RSS loaded - RSS empty - N*(len(key)+V)) / N
//
// which is the figure DESIGN §8 sets a target for (≤ 32 B at 1 M × 100 B).
// Keys are "key:%010d" (14 bytes). Each server gets a memory limit large
// enough that nothing is evicted; the run checks the item count.
//
//	go run ./bench/memory -n 1000000 -d 100
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minikv/minikv/internal/bench"
)

func main() {
	n := flag.Int("n", 1_000_000, "items to load")
	d := flag.Int("d", 100, "value size in bytes")
	targets := flag.String("targets", "minikv,memcached,redis", "servers to measure")
	minikvBin := flag.String("minikv-bin", "", "minikv binary (default: bin/minikv)")
	flag.Parse()
	bin := *minikvBin
	if bin == "" {
		bin, _ = filepath.Abs("bin/minikv")
	}
	keyLen := len(key(0))
	mem := max(64, (*n*(keyLen+*d+200))>>20*2)
	fleet := bench.NewFleet(bench.ServerOptions{MemoryMB: mem, MinikvBin: bin})
	defer fleet.Close()
	fmt.Printf("items=%d key=%dB value=%dB payload=%.1f MiB memory limit=%d MiB\n", *n, keyLen, *d,
		float64(*n*(keyLen+*d))/(1<<20), mem)
	fmt.Printf("%-10s %12s %12s %12s %14s %10s\n", "server", "RSS empty", "RSS loaded", "items", "overhead/item", "load time")
	for _, name := range strings.Split(*targets, ",") {
		if err := measure(fleet, name, *n, *d, keyLen); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func key(i int) string { return fmt.Sprintf("key:%010d", i) }

func measure(fleet *bench.Fleet, name string, n, d, keyLen int) error {
	srv, err := fleet.Start(context.Background(), name)
	if err != nil {
		return err
	}
	defer srv.Stop()
	time.Sleep(500 * time.Millisecond)
	empty, err := rss(srv.PID())
	if err != nil {
		return err
	}
	start := time.Now()
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp := name == bench.NameRedis || name == bench.NameMinikvRESP
	if err := load(conn, resp, n, d); err != nil {
		return err
	}
	took := time.Since(start)
	items, err := count(conn, resp)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let a collection or a lazy free settle
	full, err := rss(srv.PID())
	if err != nil {
		return err
	}
	per := float64(full-empty-int64(n)*int64(keyLen+d)) / float64(n)
	fmt.Printf("%-10s %9.1f MiB %9.1f MiB %12d %12.1f B %10s\n", name,
		float64(empty)/(1<<20), float64(full)/(1<<20), items, per, took.Round(time.Millisecond))
	if items != int64(n) {
		return fmt.Errorf("holds %d items, want %d (evicted?)", items, n)
	}
	return nil
}

// load sets n keys in batches of 256 pipelined requests, reading every reply.
func load(conn net.Conn, resp bool, n, d int) error {
	w := bufio.NewWriterSize(conn, 64<<10)
	r := bufio.NewReaderSize(conn, 64<<10)
	value := strings.Repeat("v", d)
	const batch = 256
	for i := 0; i < n; i += batch {
		m := min(batch, n-i)
		for j := range m {
			k := key(i + j)
			if resp {
				fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, d, value)
			} else {
				fmt.Fprintf(w, "set %s 0 0 %d\r\n%s\r\n", k, d, value)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for range m {
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if line != "STORED\r\n" && line != "+OK\r\n" {
				return fmt.Errorf("set: %q", line)
			}
		}
	}
	return nil
}

// count asks the server how many items it holds.
func count(conn net.Conn, resp bool) (int64, error) {
	r := bufio.NewReader(conn)
	if resp {
		if _, err := io.WriteString(conn, "*1\r\n$6\r\nDBSIZE\r\n"); err != nil {
			return 0, err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, ":")), 10, 64)
	}
	if _, err := io.WriteString(conn, "stats\r\n"); err != nil {
		return 0, err
	}
	var items int64 = -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		if line == "END\r\n" {
			return items, nil
		}
		if f := strings.Fields(line); len(f) == 3 && f[1] == "curr_items" {
			items, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
}

// rss reads VmRSS of pid from /proc.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
