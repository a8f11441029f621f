package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// rule is one arrow of the layering. Patterns are paths relative to the
// module root; "x/..." means x and everything below it. A rule applies to
// the non-test imports of every package matching from, followed
// transitively: a package may not reach a forbidden one through another.
type rule struct {
	name    string
	from    []string
	stdOnly bool     // everything reached must be in the standard library
	deny    []string // module packages that must not be reached
	except  []string // module packages from may reach although deny (or stdOnly) forbids them
	vendors []string // packages outside the module stdOnly lets from reach ("x/..." as above)
	why     string
}

var rules = []rule{
	{
		name:    "codecs are stdlib-only",
		from:    []string{"internal/protocol/..."},
		stdOnly: true,
		except:  []string{"internal/dtoa"},
		why:     "protocol/* are pure codecs: bytes in, typed values out, standard library only",
	},
	{
		name:    "store is stdlib-only",
		from:    []string{"internal/store"},
		stdOnly: true,
		// Its allocator for big collections' slices outside the Go heap
		// is a leaf of its own (below), so the store reaches nothing but
		// the standard library through it either.
		except: []string{"internal/offheap", "internal/dtoa"},
		// One pinned compressor for big lists' interior nodes
		// (quicklist.go, list-compress-depth): S2, a stdlib-only
		// module, measured against an LZF of our own in the commit that
		// brought it (5x faster to decompress, 20x to compress).
		// And one B-tree for streams' pending entries lists
		// (stream_group.go): google/btree, stdlib-only, where Redis
		// keeps a radix tree; a sorted slice made XACK O(n) (300 000
		// pending entries: minutes for 200 000 XACKs).
		vendors: []string{"github.com/klauspost/compress/s2", "github.com/klauspost/compress/internal/...", "github.com/google/btree"},
		why:     "the store uses the standard library only (and internal/offheap, a stdlib-only leaf, the S2 compressor and google/btree) and declares the persistence interface it consumes",
	},
	{
		name:    "dtoa is stdlib-only",
		from:    []string{"internal/dtoa"},
		stdOnly: true,
		why:     "Redis 7.2's double printing is a leaf the codec, the store and the scripts share",
	},
	{
		name:    "offheap is stdlib-only",
		from:    []string{"internal/offheap"},
		stdOnly: true,
		why:     "the off-heap allocator is a leaf under the store: syscall and unsafe, nothing of the module",
	},
	{
		name:    "cluster is stdlib-only",
		from:    []string{"internal/cluster"},
		stdOnly: true,
		why:     "the static slot map (file format, key slots, node ids) is a leaf both cmd/minikv and the Redis commands use",
	},
	{
		name:    "hll is stdlib-only",
		from:    []string{"internal/hll"},
		stdOnly: true,
		why:     "Redis's HyperLogLog string format is a leaf the Redis commands use, like the codecs",
	},
	{
		name:    "script libraries are gopher-lua and stdlib only",
		from:    []string{"internal/script/lib"},
		stdOnly: true,
		// The interpreter Redis's Lua 5.1 is emulated with, pinned in
		// go.mod; the libraries need nothing else.
		vendors: []string{"github.com/yuin/gopher-lua/..."},
		why:     "Redis's cjson, cmsgpack, bit and struct are leaves the scripting core opens in each Lua state",
	},
	{
		name:    "the scripting core is gopher-lua and stdlib only",
		from:    []string{"internal/script"},
		stdOnly: true,
		except:  []string{"internal/dtoa"},
		// The Lua side of EVAL knows nothing of the server: commands reach
		// it through its Host interface, and package lib is plugged in
		// by the server (Config.Open).
		vendors: []string{"github.com/yuin/gopher-lua/..."},
		why:     "scripts run commands through the Host interface; the package must not reach into the server",
	},
	{
		name: "store knows no engine and no wire",
		from: []string{"internal/store"},
		deny: []string{"lsm/...", "internal/durable/...", "internal/protocol/...", "internal/server/...", "internal/admin/...", "cmd/..."},
		why:  "the store is the bottom of the server; engines plug in through its Disk interface (cmd/minikv wires them)",
	},
	{
		name: "lsm stays below everything",
		from: []string{"lsm/..."},
		deny: []string{"..."},
		// The engine's own packages (vfs, vfstest, examples) import each
		// other; nothing else of the module.
		except: []string{"lsm/..."},
		why:    "the durable engine never imports the store, the server, durable or admin: *lsm.DB satisfies the store's interface",
	},
	{
		name:   "vfs below the engine",
		from:   []string{"lsm/vfs/..."},
		deny:   []string{"..."},
		except: []string{"lsm/vfs/..."},
		why:    "the file system layer depends only downward (Pebble's vfs/)",
	},
	{
		name: "nothing imports a command",
		from: []string{"internal/...", "lsm/..."},
		deny: []string{"cmd/..."},
		why:  "cmd/* wire the packages together; no package depends on a main",
	},
	{
		name: "the server knows no persistence",
		from: []string{"internal/server/..."},
		deny: []string{"lsm/...", "internal/durable/...", "internal/admin/..."},
		why:  "the protocol paths talk to the store only; cmd/minikv plugs the engine in under it",
	},
	{
		name: "the server core knows no protocol",
		from: []string{"internal/server"},
		deny: []string{"internal/server/memcache/...", "internal/server/redis/...", "internal/protocol/..."},
		why:  "the core (listeners, the connection loop, limits, auth, counters) serves protocols through its handler interface",
	},
	{
		name: "memcached commands know no Redis",
		from: []string{"internal/server/memcache/..."},
		deny: []string{"internal/server/redis/...", "internal/protocol/resp/..."},
		why:  "one package per protocol; what both need belongs in the core or the store",
	},
	{
		name: "Redis commands know no memcached",
		from: []string{"internal/server/redis/..."},
		deny: []string{"internal/server/memcache/...", "internal/protocol/memcache/..."},
		why:  "one package per protocol; what both need belongs in the core or the store",
	},
	{
		name: "rdb reads and writes the store, nothing more",
		from: []string{"internal/rdb"},
		deny: []string{"lsm/...", "internal/durable/...", "internal/protocol/...", "internal/server/...", "internal/admin/...", "cmd/..."},
		why:  "Redis's RDB format over the store: the Redis commands (DUMP, SAVE), cmd/minikv (loading at start) and replication use it from above",
	},
	{
		name: "durable adapts the engine to the store, nothing more",
		from: []string{"internal/durable/..."},
		deny: []string{"internal/server/...", "internal/protocol/...", "internal/admin/...", "cmd/..."},
		why:  "durable may import store and lsm only",
	},
}

// pkg is what go list says about one package.
type pkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// graph is every package the module's packages reach, by import path.
type graph struct {
	module string
	pkgs   map[string]*pkg
	own    []string // the module's packages, sorted
}

func loadGraph(t *testing.T) *graph {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the module's imports: %v", err)
	}
	mod, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	path, dir, _ := strings.Cut(strings.TrimSpace(string(mod)), " ")
	cmd := exec.Command(goCmd, "list", "-deps", "-json=ImportPath,Standard,Imports", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.Bytes())
	}
	g := &graph{module: path, pkgs: make(map[string]*pkg)}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		g.pkgs[p.ImportPath] = p
		if _, ok := g.rel(p.ImportPath); ok {
			g.own = append(g.own, p.ImportPath)
		}
	}
	slices.Sort(g.own)
	if len(g.own) == 0 {
		t.Fatalf("go list found no package of %s", path)
	}
	return g
}

// rel is path relative to the module root, and whether path is in the module.
func (g *graph) rel(path string) (string, bool) {
	if path == g.module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, g.module+"/")
	return r, ok
}

// matches reports whether the module package path matches one of patterns.
func (g *graph) matches(path string, patterns []string) bool {
	r, ok := g.rel(path)
	if !ok {
		return false
	}
	for _, p := range patterns {
		if p == "..." {
			return true
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if r == base || strings.HasPrefix(r, base+"/") {
				return true
			}
		} else if r == p {
			return true
		}
	}
	return false
}

// vendored reports whether the import path matches one of patterns,
// import paths where "x/..." means x and everything below it.
func vendored(path string, patterns []string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok && (path == base || strings.HasPrefix(path, base+"/")) || path == p {
			return true
		}
	}
	return false
}

// forbidden reports whether r forbids reaching the package to.
func (g *graph) forbidden(r rule, to string) bool {
	if r.stdOnly && !g.matches(to, r.except) && !vendored(to, r.vendors) {
		if info := g.pkgs[to]; info == nil || !info.Standard {
			return true
		}
	}
	return g.matches(to, r.deny) && !g.matches(to, r.except)
}

// walk follows the imports of from breadth first and returns the chains
// from it to the forbidden packages it reaches first: a walk stops at a
// forbidden package (what it imports is that arrow's consequence), at the
// standard library (which imports nothing else), and at another package
// the rule applies to (which is checked, and reported, on its own).
func (g *graph) walk(r rule, from string) [][]string {
	chains := map[string][]string{from: {from}}
	queue := []string{from}
	var bad [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range g.pkgs[p].Imports {
			if _, seen := chains[imp]; seen {
				continue
			}
			chain := append(slices.Clip(chains[p]), imp)
			chains[imp] = chain
			switch info := g.pkgs[imp]; {
			case g.forbidden(r, imp):
				bad = append(bad, chain)
			case info == nil || info.Standard || g.matches(imp, r.from):
			default:
				queue = append(queue, imp)
			}
		}
	}
	return bad
}

// short shortens the module's paths in a chain for messages.
func (g *graph) short(chain []string) string {
	out := make([]string, len(chain))
	for i, p := range chain {
		if r, ok := g.rel(p); ok {
			out[i] = r
		} else {
			out[i] = p
		}
	}
	return strings.Join(out, " -> ")
}

// violations returns one message per forbidden package that a package r
// applies to reaches (walk), and whether r applies to any package at all.
func (g *graph) violations(r rule) (msgs []string, applies bool) {
	for _, from := range g.own {
		if !g.matches(from, r.from) {
			continue
		}
		applies = true
		for _, chain := range g.walk(r, from) {
			msg := g.short(chain[:1]) + " imports " + g.short(chain[len(chain)-1:])
			if len(chain) > 2 {
				msg += " (via " + g.short(chain) + ")"
			}
			msgs = append(msgs, msg)
		}
	}
	slices.Sort(msgs)
	return msgs, applies
}

// TestImportRules checks the layering: each rule's forbidden imports,
// direct or through other packages, are reported with the chain that
// reaches them. A rule that matches no package fails too, so that moving a
// package cannot switch its rule off unnoticed.
func TestImportRules(t *testing.T) {
	g := loadGraph(t)
	for _, r := range rules {
		msgs, applies := g.violations(r)
		if !applies {
			t.Errorf("rule %q: no package matches %v; a package was moved or renamed: update the rule", r.name, r.from)
		}
		for _, m := range msgs {
			t.Errorf("rule %q broken: %s\n\t(%s)", r.name, m, r.why)
		}
	}
}

// TestImportRulesCatchABadImport runs the rules over a graph with forbidden
// arrows added, so that a rule that can never fail is noticed.
func TestImportRulesCatchABadImport(t *testing.T) {
	g := loadGraph(t)
	m := g.module + "/"
	add := func(from, imp string) {
		p := g.pkgs[m+from]
		if p == nil {
			t.Fatalf("no package %s", from)
		}
		cp := *p
		cp.Imports = append(slices.Clip(p.Imports), m+imp)
		g.pkgs[m+from] = &cp
	}
	add("internal/store", "internal/durable") // an engine under the store
	add("lsm/vfs", "internal/protocol/resp")  // the bottom layer reaching up
	add("internal/server/redis", "internal/server/memcache")
	// Each arrow is reported once, by the package that makes it (lsm/vfs,
	// not also lsm above it), or through the chain that reaches it.
	want := map[string]string{
		"store is stdlib-only":              "internal/store imports internal/durable",
		"store knows no engine and no wire": "internal/store imports internal/durable",
		"lsm stays below everything":        "lsm/vfs imports internal/protocol/resp",
		"vfs below the engine":              "lsm/vfs imports internal/protocol/resp",
		"Redis commands know no memcached":  "internal/server/redis imports internal/server/memcache",
		"the server knows no persistence":   "internal/server imports internal/durable (via internal/server -> internal/store -> internal/durable)",
	}
	for _, r := range rules {
		w, ok := want[r.name]
		if !ok {
			continue
		}
		msgs, _ := g.violations(r)
		if !slices.Contains(msgs, w) {
			t.Errorf("rule %q: messages %q lack %q", r.name, msgs, w)
		}
	}
}
