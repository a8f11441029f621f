package bench

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Client-side key distribution over a pool of servers, as libmemcached
// (and so pylibmc, PHP's memcached, the libmemcached tools) does it, so
// that a benchmark against several servers sends each key where those
// clients would, and `minikv-bench locate` says where they put a key.
//
// Three modes, each checked key by key against pylibmc 1.6.3 (libmemcached
// 1.0.16) by tests/python/test_ketama_pylibmc.py:
//
//	ketama      libmemcached's MEMCACHED_BEHAVIOR_KETAMA (pylibmc
//	            behaviors={"ketama": True}) with its default hash: keys and
//	            continuum points hashed with Jenkins' one-at-a-time, 100
//	            points per server, each the hash of "host:port-N" (N = 0..99;
//	            "host-N" when the port is 11211). A server weight above 1
//	            switches libmemcached to the weighted continuum below while
//	            keys stay one-at-a-time, and so does this.
//	ketama-md5  MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (pylibmc
//	            {"ketama_weighted": True}), which is also last.fm's libketama
//	            and twemproxy's `distribution: ketama` with `hash: md5`: keys
//	            hashed with MD5 (the digest's first 4 bytes, little-endian);
//	            160 points per server at equal weights, four per MD5 digest
//	            of "host:port-N" (N = 0..39), scaled by weight.
//	modula      libmemcached's default distribution: one-at-a-time(key) mod
//	            the number of servers; weights are ignored.
//
// A key goes to the first continuum point at or above its hash, wrapping
// to the first point past the top.

// Hash modes for NewRing.
const (
	HashKetama    = "ketama"
	HashKetamaMD5 = "ketama-md5"
	HashModula    = "modula"
)

// HashModes lists the modes NewRing accepts.
var HashModes = []string{HashKetama, HashKetamaMD5, HashModula}

// PoolServer is one server of a client-side-hashed pool.
type PoolServer struct {
	Host   string // as given: the name the continuum hashes, never resolved
	Port   int
	Weight int // >= 1; only the consistent modes use it
}

// Addr is host:port for dialing.
func (s PoolServer) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// ParsePool parses "host:port[:weight],host:port[:weight],...". An IPv6
// host is written in brackets: [::1]:11211:2.
func ParsePool(list string) ([]PoolServer, error) {
	var out []PoolServer
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		s, err := parsePoolServer(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no server in %q", list)
	}
	return out, nil
}

func parsePoolServer(f string) (PoolServer, error) {
	bad := func(why string) (PoolServer, error) {
		return PoolServer{}, fmt.Errorf("bench: server %q: %s (want host:port or host:port:weight)", f, why)
	}
	var host, rest string
	if strings.HasPrefix(f, "[") {
		end := strings.IndexByte(f, ']')
		if end < 0 || end+1 >= len(f) || f[end+1] != ':' {
			return bad("unclosed [ or no port")
		}
		host, rest = f[1:end], f[end+2:]
	} else {
		var ok bool
		host, rest, ok = strings.Cut(f, ":")
		if !ok {
			return bad("no port")
		}
	}
	portS, weightS, hasWeight := strings.Cut(rest, ":")
	port, err := strconv.Atoi(portS)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return bad("bad host or port")
	}
	s := PoolServer{Host: host, Port: port, Weight: 1}
	if hasWeight {
		w, err := strconv.Atoi(weightS)
		if err != nil || w < 1 {
			return bad("weight must be an integer >= 1")
		}
		s.Weight = w
	}
	return s, nil
}

// Ring maps keys to servers of a pool. It is read-only after NewRing and
// safe for concurrent use.
type Ring struct {
	mode    string
	n       int
	md5Keys bool
	points  []ringPoint // sorted by value; nil for modula
}

type ringPoint struct {
	value  uint32
	server int
}

// NewRing builds the distribution of mode over servers.
func NewRing(mode string, servers []PoolServer) (*Ring, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("bench: a pool needs at least one server")
	}
	r := &Ring{mode: mode, n: len(servers)}
	weighted := false
	switch mode {
	case HashModula:
		return r, nil
	case HashKetama:
		// libmemcached turns the weighted continuum on as soon as a
		// server is added with a weight above 1.
		for _, s := range servers {
			weighted = weighted || s.Weight > 1
		}
	case HashKetamaMD5:
		weighted, r.md5Keys = true, true
	default:
		return nil, fmt.Errorf("bench: unknown hash %q (want %s)", mode, strings.Join(HashModes, ", "))
	}
	total := 0
	for _, s := range servers {
		if s.Weight < 1 {
			return nil, fmt.Errorf("bench: server %s: weight %d < 1", s.Addr(), s.Weight)
		}
		total += s.Weight
	}
	var name []byte
	for i, s := range servers {
		// libmemcached's sort_host: the port is left out when it is
		// memcached's default, for compatibility with older clients.
		prefix := s.Host
		if s.Port != 11211 {
			prefix += ":" + strconv.Itoa(s.Port)
		}
		prefix += "-"
		if !weighted {
			for j := range 100 { // MEMCACHED_POINTS_PER_SERVER
				name = strconv.AppendInt(append(name[:0], prefix...), int64(j), 10)
				r.points = append(r.points, ringPoint{OneAtATime(name), i})
			}
			continue
		}
		for j := range weightedPoints(s.Weight, total, len(servers)) / 4 {
			name = strconv.AppendInt(append(name[:0], prefix...), int64(j), 10)
			d := md5.Sum(name)
			for a := range 4 {
				r.points = append(r.points, ringPoint{binary.LittleEndian.Uint32(d[4*a:]), i})
			}
		}
	}
	// libmemcached qsorts by value alone; among equal values (a 32-bit
	// collision) the order is qsort's. Ties are broken by insertion order.
	slices.SortStableFunc(r.points, func(a, b ringPoint) int {
		switch {
		case a.value < b.value:
			return -1
		case a.value > b.value:
			return 1
		}
		return 0
	})
	return r, nil
}

// weightedPoints is libmemcached's (and libketama's, twemproxy's) point
// count of one server of the weighted continuum, computed in float32 as
// the C does: floor(weight/total * 160/4 * servers) * 4.
func weightedPoints(weight, total, servers int) int {
	// Each step converts explicitly: Go may fuse float operations
	// otherwise, and the C rounds to float after every one.
	pct := float32(float32(weight) / float32(total))
	v := float32(float32(float32(pct*160)/4) * float32(servers))
	return int(math.Floor(float64(float32(float64(v)+0.0000000001)))) * 4
}

// Mode is the hash mode the Ring was built with.
func (r *Ring) Mode() string { return r.mode }

// Len is the number of servers.
func (r *Ring) Len() int { return r.n }

// Points is the size of the continuum (0 for modula).
func (r *Ring) Points() int { return len(r.points) }

// KeyHash is the hash of key the Ring places.
func (r *Ring) KeyHash(key []byte) uint32 {
	if r.md5Keys {
		d := md5.Sum(key)
		return binary.LittleEndian.Uint32(d[:4])
	}
	return OneAtATime(key)
}

// Pick returns the index of the server key belongs to.
func (r *Ring) Pick(key []byte) int {
	if r.n == 1 {
		return 0
	}
	h := r.KeyHash(key)
	if r.points == nil {
		return int(h % uint32(r.n))
	}
	i, _ := slices.BinarySearchFunc(r.points, h, func(p ringPoint, h uint32) int {
		switch {
		case p.value < h:
			return -1
		case p.value > h:
			return 1
		}
		return 0
	})
	// BinarySearchFunc finds the first point >= h, as libmemcached's
	// dispatch_host does; past the last point the ring wraps.
	if i == len(r.points) {
		i = 0
	}
	return r.points[i].server
}

// OneAtATime is Bob Jenkins' one-at-a-time hash as libhashkit computes it,
// libmemcached's default (MEMCACHED_HASH_DEFAULT). libhashkit reads the
// key through a plain char, signed on x86, so bytes >= 0x80 are added sign
// extended; that is kept, so non-ASCII keys land where libmemcached puts
// them.
func OneAtATime(key []byte) uint32 {
	var v uint32
	for _, c := range key {
		v += uint32(int32(int8(c)))
		v += v << 10
		v ^= v >> 6
	}
	v += v << 3
	v ^= v >> 11
	v += v << 15
	return v
}
