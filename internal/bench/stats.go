package bench

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"time"
)

// evictions asks the target how many items it has evicted so far: "STAT
// evictions" of memcached's stats, or evicted_keys of Redis's INFO stats.
// It returns -1 when the server does not say (the null server, a timeout).
// Run reads it before and after a phase, so a pressure run shows whether
// its writes really evicted.
func evictions(t Target) int64 {
	if t.Pool != nil {
		sum := int64(0)
		for _, addr := range t.Pool.Addrs() {
			n := evictions(Target{Addr: addr, Proto: t.Proto})
			if n < 0 {
				return -1
			}
			sum += n
		}
		return sum
	}
	c, err := net.DialTimeout("tcp", t.Addr, 2*time.Second)
	if err != nil {
		return -1
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	br := bufio.NewReader(c)
	if t.Proto.Name() == "resp" {
		if _, err := c.Write([]byte("*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")); err != nil {
			return -1
		}
		line, err := readLine(br)
		if err != nil || len(line) < 2 || line[0] != '$' {
			return -1
		}
		n, err := strconv.Atoi(string(line[1:]))
		if err != nil || n < 0 || n > 1<<20 {
			return -1
		}
		body := make([]byte, n+2)
		if _, err := readFull(br, body); err != nil {
			return -1
		}
		for l := range bytes.Lines(body) {
			if v, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("evicted_keys:")); ok {
				return parseCount(v)
			}
		}
		return -1
	}
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return -1
	}
	found := int64(-1)
	for {
		line, err := readLine(br)
		if err != nil {
			return -1
		}
		if !bytes.HasPrefix(line, []byte("STAT ")) {
			return found // END, or ERROR from a server without stats
		}
		if v, ok := bytes.CutPrefix(line, []byte("STAT evictions ")); ok {
			found = parseCount(v)
		}
	}
}

func readFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func parseCount(b []byte) int64 {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return -1
	}
	return v
}
