package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Op is the kind of one request.
type Op uint8

// Request kinds. numOps sizes per-operation arrays.
const (
	OpGet Op = iota
	OpSet
	numOps
)

// String returns "get" or "set".
func (o Op) String() string {
	switch o {
	case OpGet:
		return "get"
	case OpSet:
		return "set"
	}
	return "op" + strconv.Itoa(int(o))
}

// Dist is a key distribution.
type Dist uint8

// Key distributions.
const (
	DistUniform    Dist = iota // every key equally likely
	DistZipf                   // YCSB-style Zipfian: low key indexes are hot
	DistSequential             // each connection walks its own stretch of the keyspace in order
)

// String returns the flag spelling of d.
func (d Dist) String() string {
	switch d {
	case DistUniform:
		return "uniform"
	case DistZipf:
		return "zipf"
	case DistSequential:
		return "sequential"
	}
	return "dist" + strconv.Itoa(int(d))
}

// ParseDist parses "uniform", "zipf" or "sequential".
func ParseDist(s string) (Dist, error) {
	switch strings.ToLower(s) {
	case "uniform", "random":
		return DistUniform, nil
	case "zipf", "zipfian":
		return DistZipf, nil
	case "sequential", "seq":
		return DistSequential, nil
	}
	return 0, fmt.Errorf("bench: unknown distribution %q (want uniform, zipf or sequential)", s)
}

// Ratio is the set:get mix, as memtier_benchmark spells it: 1:9 is one set
// for every nine gets.
type Ratio struct{ Set, Get int }

// ParseRatio parses "S:G" with non-negative integers, not both zero.
func ParseRatio(s string) (Ratio, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Ratio{}, fmt.Errorf("bench: ratio %q: want set:get, e.g. 1:9", s)
	}
	set, err1 := strconv.Atoi(strings.TrimSpace(a))
	get, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || set < 0 || get < 0 || set+get == 0 {
		return Ratio{}, fmt.Errorf("bench: ratio %q: want two non-negative integers, not both 0", s)
	}
	return Ratio{Set: set, Get: get}, nil
}

// String returns "S:G".
func (r Ratio) String() string { return strconv.Itoa(r.Set) + ":" + strconv.Itoa(r.Get) }

// SetFraction is the share of requests that are sets.
func (r Ratio) SetFraction() float64 { return float64(r.Set) / float64(r.Set+r.Get) }

// Workload describes what a run sends: which keys, which mix, which values.
// Call Init before NewGenerator; a Workload is read-only afterwards and is
// shared by every connection.
type Workload struct {
	Keys      int     // keyspace size: key indexes are 0..Keys-1
	Dist      Dist    // how key indexes are drawn
	ZipfTheta float64 // Zipf skew, 0 < theta < 1 (YCSB uses 0.99)
	Ratio     Ratio   // set:get mix
	ValueSize int     // bytes per value
	TTL       int     // seconds; 0 stores without expiry
	MultiGet  int     // keys per get (memcached multi-key get, Redis MGET); 0 or 1: single-key GET
	KeyPrefix string  // keys are KeyPrefix + zero-padded index
	Seed      uint64  // makes runs repeatable; connection i uses Seed+i

	width int // digits of the largest index, so every key has one length
	zipf  zipfParams
	value []byte
}

// ErrBadWorkload is returned by Init for unusable settings.
var ErrBadWorkload = errors.New("bench: bad workload")

// Init checks the settings and precomputes what generators share.
func (w *Workload) Init() error {
	if w.Keys < 1 {
		return fmt.Errorf("%w: keys must be >= 1, got %d", ErrBadWorkload, w.Keys)
	}
	if w.ValueSize < 0 || w.ValueSize > 1<<20 {
		return fmt.Errorf("%w: value size %d outside 0..1 MiB", ErrBadWorkload, w.ValueSize)
	}
	if w.Ratio.Set+w.Ratio.Get == 0 {
		w.Ratio = Ratio{Set: 1, Get: 9}
	}
	if w.TTL < 0 {
		return fmt.Errorf("%w: ttl %d < 0", ErrBadWorkload, w.TTL)
	}
	if w.MultiGet < 0 || w.MultiGet > 1000 {
		return fmt.Errorf("%w: multiget %d outside 0..1000", ErrBadWorkload, w.MultiGet)
	}
	if w.KeyPrefix == "" {
		w.KeyPrefix = "key:"
	}
	w.width = len(strconv.Itoa(w.Keys - 1))
	if len(w.KeyPrefix)+w.width > 250 {
		return fmt.Errorf("%w: keys would exceed 250 bytes", ErrBadWorkload)
	}
	if w.Dist == DistZipf {
		if w.ZipfTheta == 0 {
			w.ZipfTheta = 0.99
		}
		if w.ZipfTheta <= 0 || w.ZipfTheta >= 1 {
			return fmt.Errorf("%w: zipf theta %v outside (0,1)", ErrBadWorkload, w.ZipfTheta)
		}
		w.zipf = newZipfParams(w.Keys, w.ZipfTheta)
	}
	// A printable, seed-dependent value: servers that compress or dedupe
	// see nothing special, and a captured stream is readable.
	rng := rand.New(rand.NewPCG(w.Seed, 0x6d696e696b76))
	w.value = make([]byte, w.ValueSize)
	for i := range w.value {
		w.value[i] = 'a' + byte(rng.IntN(26))
	}
	return nil
}

// Value is the value every set sends.
func (w *Workload) Value() []byte { return w.value }

// AppendKey appends the key with index i to dst.
func (w *Workload) AppendKey(dst []byte, i int) []byte {
	dst = append(dst, w.KeyPrefix...)
	var num [20]byte
	d := strconv.AppendInt(num[:0], int64(i), 10)
	for range w.width - len(d) {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// KeyLen is the length of every key.
func (w *Workload) KeyLen() int { return len(w.KeyPrefix) + w.width }

// Generator draws the requests of one connection. It is not safe for
// concurrent use; each connection has its own.
type Generator struct {
	w      *Workload
	rng    *rand.Rand
	setP   uint64 // a request is a set when rng.Uint64N(total) < setP
	total  uint64
	seq    int // DistSequential: next offset in this connection's stretch
	origin int // DistSequential: where this connection's stretch starts
}

// NewGenerator returns the generator of connection conn out of conns.
// Sequential generators start at evenly spaced origins, so connections do
// not all hammer the same key at the same moment.
func (w *Workload) NewGenerator(conn, conns int) *Generator {
	g := &Generator{
		w:     w,
		rng:   rand.New(rand.NewPCG(w.Seed+uint64(conn), 0x62656e6368)),
		setP:  uint64(w.Ratio.Set),
		total: uint64(w.Ratio.Set + w.Ratio.Get),
	}
	if conns > 0 {
		g.origin = int(int64(w.Keys) * int64(conn) / int64(conns))
	}
	return g
}

// Next returns the next request's kind and key index.
func (g *Generator) Next() (Op, int) {
	op := OpGet
	if g.rng.Uint64N(g.total) < g.setP {
		op = OpSet
	}
	return op, g.key()
}

func (g *Generator) key() int {
	switch g.w.Dist {
	case DistZipf:
		return g.w.zipf.next(g.rng)
	case DistSequential:
		k := (g.origin + g.seq) % g.w.Keys
		g.seq++
		return k
	}
	return g.rng.IntN(g.w.Keys)
}

// zipfParams is the Zipfian generator of Gray et al., "Quickly generating
// billion-record synthetic databases" (SIGMOD 1994), as YCSB uses it. It
// accepts YCSB's usual theta 0.99, which math/rand's Zipf (s > 1) cannot.
type zipfParams struct {
	n          int
	theta      float64
	alpha      float64
	zetan      float64
	eta        float64
	halfPowTh  float64 // 1 + 0.5^theta
	zeta2theta float64
}

func newZipfParams(n int, theta float64) zipfParams {
	zeta := func(m int) float64 {
		s := 0.0
		for i := 1; i <= m; i++ {
			s += 1 / math.Pow(float64(i), theta)
		}
		return s
	}
	p := zipfParams{n: n, theta: theta, alpha: 1 / (1 - theta), zetan: zeta(n), zeta2theta: zeta(2)}
	p.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - p.zeta2theta/p.zetan)
	p.halfPowTh = 1 + math.Pow(0.5, theta)
	return p
}

func (p *zipfParams) next(rng *rand.Rand) int {
	if p.n == 1 {
		return 0
	}
	u := rng.Float64()
	uz := u * p.zetan
	if uz < 1 {
		return 0
	}
	if uz < p.halfPowTh {
		return 1
	}
	k := int(float64(p.n) * math.Pow(p.eta*u-p.eta+1, p.alpha))
	return min(k, p.n-1)
}
