package redis

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/script"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// Functions (function.go). Their replies are compared with redis-server's
// byte for byte by the "function ..." sessions of script_diff_test.go;
// these tests cover what a differential session cannot: running
// functions (BUSY, the kills, FUNCTION STATS), durability across a
// restart, the load timeout, and payloads no Redis would make.

// spinLib registers a function that never returns, and one that writes
// and then runs for 300 ms.
const spinLib = "#!lua name=spin\n" +
	"redis.register_function('spin', function(keys, args) local i = 0 while true do i = i + 1 end end)\n" +
	"redis.register_function('wspin', function(keys, args) redis.call('set', keys[1], 'x')\n" +
	"  local t0 = wall_ms() while wall_ms() - t0 < 300 do end return 'done' end)"

// TestFunctionBusyAndKill: while a function runs, other clients are told
// to use FUNCTION KILL, SCRIPT KILL refuses it, FUNCTION STATS shows it,
// and FUNCTION KILL stops it; the other way round for a script of EVAL.
func TestFunctionBusyAndKill(t *testing.T) {
	withBusyPair(t, func(t *testing.T, a, b *servertest.RESPClient) {
		b.Expect(multibulk("FUNCTION", "LOAD", spinLib), "$4\r\nspin\r\n")
		testFunctionBusyAndKill(t, a, b)
	})
}

// withBusyPair runs fn, with and without an event loop, on two clients
// of one server with a busy-reply-threshold of 20 ms: a runs scripts, b
// watches (TestScriptBusyAndKill too).
func withBusyPair(t *testing.T, fn func(t *testing.T, a, b *servertest.RESPClient)) {
	for _, loops := range []int{0, 1} {
		t.Run(fmt.Sprint("event loops ", loops), func(t *testing.T) {
			rs := startRESP(t, server.Config{EventLoops: loops}, store.Config{})
			a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
			b.Expect(multibulk("CONFIG", "SET", "busy-reply-threshold", "20"), "+OK\r\n")
			fn(t, a, b)
		})
	}
}

func testFunctionBusyAndKill(t *testing.T, a, b *servertest.RESPClient) {

	a.Send(multibulk("FCALL", "spin", "1", "k", "arg"))
	awaitBusy(t, b, script.ErrBusyFunction)
	b.Expect(multibulk("SCRIPT", "KILL"), "-"+script.ErrBusyFunction.Error()+"\r\n")
	stats := b.Do("FUNCTION", "STATS")
	if want := "*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nspin\r\n$7\r\ncommand\r\n*5\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n1\r\n$1\r\nk\r\n$3\r\narg\r\n$11\r\nduration_ms\r\n:"; !strings.HasPrefix(stats, want) ||
		!strings.HasSuffix(stats, "$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:2\r\n") {
		t.Errorf("FUNCTION STATS while spin runs = %q", stats)
	}
	b.Expect(multibulk("FUNCTION", "KILL"), "+OK\r\n")
	a.Expect("", "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n")
	b.Expect(multibulk("FUNCTION", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n")

	// A function that wrote cannot be killed.
	a.Send(multibulk("FCALL", "wspin", "1", "w"))
	awaitBusy(t, b, script.ErrBusyFunction)
	b.Expect(multibulk("FUNCTION", "KILL"), "-"+script.ErrUnkillable.Error()+"\r\n")
	a.Expect("", "$4\r\ndone\r\n")
	b.Expect(multibulk("GET", "w"), "$1\r\nx\r\n")

	// A script of EVAL: FUNCTION KILL and FUNCTION STATS refuse.
	a.Send(multibulk("EVAL", "while true do end", "0"))
	awaitBusy(t, b, script.ErrBusyScript)
	b.Expect(multibulk("FUNCTION", "KILL"), "-"+script.ErrBusyScript.Error()+"\r\n")
	b.Expect(multibulk("FUNCTION", "STATS"), "-"+script.ErrBusyScript.Error()+"\r\n")
	b.Expect(multibulk("SCRIPT", "KILL"), "+OK\r\n")
	a.Expect("", "-ERR Script killed by user with SCRIPT KILL... script: "+script.SHA1Hex([]byte("while true do end"))+", on @user_script:1.\r\n")
	a.Expect(multibulk("PING"), "+PONG\r\n")
}

// awaitBusy sends PING until the reply is busy.
func awaitBusy(t *testing.T, c *servertest.RESPClient, busy error) {
	t.Helper()
	for {
		got := c.Do("PING")
		if got == "-"+busy.Error()+"\r\n" {
			return
		}
		if got != "+PONG\r\n" {
			t.Fatalf("PING while a script runs = %q, want %q", got, busy)
		}
	}
}

// TestFunctionLoadTimeout: a library whose code runs past 500 ms is
// stopped, with Redis's error, and nothing of it stays.
func TestFunctionLoadTimeout(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=slow\nredis.register_function('a', function() return 1 end)\nwhile true do end"),
		"-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n")
	c.Expect(multibulk("FCALL", "a", "0"), "-ERR Function not found\r\n")
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=slow\nredis.register_function('a', function() return 1 end)"), "$4\r\nslow\r\n")
	c.Expect(multibulk("FCALL", "a", "0"), ":1\r\n")
}

// TestFunctionFailedReplaceKeepsOld: a FUNCTION LOAD REPLACE that fails
// (a compile error, an error at load, a function another library has)
// leaves the library it would have replaced as it was.
func TestFunctionFailedReplaceKeepsOld(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('fa', function() return 'a1' end)"), "$1\r\na\r\n")
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=b\nredis.register_function('fb', function() return 'b1' end)"), "$1\r\nb\r\n")
	for _, code := range []string{
		"#!lua name=a\nreturn +",
		"#!lua name=a\nredis.register_function('fa', function() return 'a2' end)\nerror('late')",
		"#!lua name=a\nredis.register_function('fa', function() return 'a2' end)\nredis.register_function('fb', function() end)",
		"#!lua name=a\nlocal x = 1",
	} {
		if got := c.Do("FUNCTION", "LOAD", "REPLACE", code); !strings.HasPrefix(got, "-ERR ") {
			t.Errorf("FUNCTION LOAD REPLACE %q = %q, want an error", code, got)
		}
		c.Expect(multibulk("FCALL", "fa", "0"), "$2\r\na1\r\n")
		c.Expect(multibulk("FCALL", "fb", "0"), "$2\r\nb1\r\n")
	}
	// A RESTORE whose second library collides restores neither.
	payload := string(rdbSeal(append(rdbAppendString([]byte{245}, []byte("#!lua name=c\nredis.register_function('fc', function() end)")),
		rdbAppendString([]byte{245}, []byte("#!lua name=d\nredis.register_function('fa', function() end)"))...)))
	c.Expect(multibulk("FUNCTION", "RESTORE", payload), "-ERR Function fa already exists\r\n")
	c.Expect(multibulk("FCALL", "fc", "0"), "-ERR Function not found\r\n")
	c.Expect(multibulk("FUNCTION", "RESTORE", payload, "REPLACE"), "-ERR Function fa already exists\r\n")
	c.Expect(multibulk("FUNCTION", "RESTORE", payload, "FLUSH"), "+OK\r\n")
	c.Expect(multibulk("FCALL", "fb", "0"), "-ERR Function not found\r\n")
	c.Expect(multibulk("FCALL", "fa", "0"), "$-1\r\n")
}

// TestFunctionInfo: INFO memory counts the libraries and functions.
func TestFunctionInfo(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("FUNCTION", "LOAD", spinLib), "$4\r\nspin\r\n")
	info := c.Do("INFO", "memory")
	for _, f := range []string{"\r\nnumber_of_functions:2\r\n", "\r\nnumber_of_libraries:1\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO memory lacks %q:\n%s", f, info)
		}
	}
	c.Expect(multibulk("FUNCTION", "FLUSH"), "+OK\r\n")
	if info := c.Do("INFO", "memory"); !strings.Contains(info, "\r\nnumber_of_functions:0\r\n") {
		t.Errorf("after FUNCTION FLUSH, INFO memory:\n%s", info)
	}
}

// startDurableFunctions starts a server over a durable store in dir and
// returns its RESP address and a function that stops it and closes the
// store and its log, as a shutdown does.
func startDurableFunctions(t *testing.T, dir string) (addr string, stop func()) {
	t.Helper()
	l, err := durable.Open(dir, lsm.Options{Sync: lsm.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Config{MaxItemSize: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, l)
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.StartOn(t, server.Config{}, st)
	addr = s.Listen(t, New(s.Server))
	return addr, func() {
		s.Stop(t)
		if err := l.Close(); err != nil {
			t.Errorf("closing the log: %v", err)
		}
	}
}

// TestFunctionsSurviveRestart: in durable mode the libraries FUNCTION
// LOAD, DELETE, FLUSH and RESTORE leave are there after a restart, as
// Redis keeps them in its RDB and AOF; FLUSHALL does not touch them.
func TestFunctionsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	addr, stop := startDurableFunctions(t, dir)
	c := dialRESP(t, addr)
	c.Expect(multibulk("FUNCTION", "LOAD", lib1), "$4\r\nlib1\r\n")
	c.Expect(multibulk("FUNCTION", "LOAD", libFlags), "$8\r\nlibflags\r\n")
	c.Expect(multibulk("FLUSHALL"), "+OK\r\n")
	dump := c.Do("FUNCTION", "DUMP")
	stop()

	addr, stop = startDurableFunctions(t, dir)
	c = dialRESP(t, addr)
	c.Expect(multibulk("FCALL", "f1", "1", "k", "after restart"), "+OK\r\n")
	c.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "$13\r\nafter restart\r\n")
	c.Expect(multibulk("FUNCTION", "DUMP"), dump)
	c.Expect(multibulk("FUNCTION", "DELETE", "libflags"), "+OK\r\n")
	stop()

	addr, stop = startDurableFunctions(t, dir)
	c = dialRESP(t, addr)
	c.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "-ERR Function not found\r\n")
	c.Expect(multibulk("FUNCTION", "LIST", "LIBRARYNAME", "lib*"), "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$4\r\nlib1\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"+
		"$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n")
	c.Expect(multibulk("FUNCTION", "FLUSH"), "+OK\r\n")
	c.Expect(multibulk("FUNCTION", "RESTORE", functionDumpPayload(libFlags)), "+OK\r\n")
	stop()

	addr, stop = startDurableFunctions(t, dir)
	defer stop()
	c = dialRESP(t, addr)
	c.Expect(multibulk("FCALL", "f1", "0"), "-ERR Function not found\r\n")
	c.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "$13\r\nafter restart\r\n")
}

// TestFunctionsInCluster: in cluster mode FCALL is routed by its declared
// keys as EVAL is, a function's commands may touch only this node's keys,
// and a no-cluster function is refused.
func TestFunctionsInCluster(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	c := dialRESP(t, nodes[0].addr)
	local, remote := keyOn(m, m.Nodes[0], "k"), keyOn(m, m.Nodes[2], "k")
	lib := "#!lua name=cl\n" +
		"redis.register_function('get', function(keys, args) return redis.call('get', keys[1]) end)\n" +
		"redis.register_function('getarg', function(keys, args) return redis.call('get', args[1]) end)\n" +
		"redis.register_function{function_name='nc', callback=function() return 1 end, flags={'no-cluster'}}"
	c.Expect(multibulk("FUNCTION", "LOAD", lib), "$2\r\ncl\r\n")
	c.Expect(multibulk("SET", local, "v"), "+OK\r\n")
	c.Expect(multibulk("FCALL", "get", "1", local), "$1\r\nv\r\n")
	c.Expect(multibulk("FCALL_RO", "get", "1", remote), "-MOVED "+fmt.Sprint(cluster.KeySlot([]byte(remote)))+" "+m.Nodes[2].Addr+"\r\n")
	c.Expect(multibulk("FCALL", "get", "2", local, remote), "-"+errCrossSlot+"\r\n")
	c.Expect(multibulk("FCALL", "getarg", "0", remote),
		"-ERR Script attempted to access a non local key in a cluster node script: getarg, on @user_function:3.\r\n")
	c.Expect(multibulk("FCALL", "nc", "0"), "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n")
}

// TestFunctionsInRDBFile: SAVE writes the libraries into the RDB file as
// Redis does: redis-server loads MiniKV's file and calls its functions,
// and MiniKV loads redis-server's (LoadRDB).
func TestFunctionsInRDBFile(t *testing.T) {
	dir := t.TempDir()
	s := servertest.Start(t, server.Config{}, store.Config{})
	p := New(s.Server)
	if err := p.ConfigureRDB(RDBConfig{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	c := dialRESP(t, s.Listen(t, p))
	c.Expect(multibulk("FUNCTION", "LOAD", lib1), "$4\r\nlib1\r\n")
	c.Expect(multibulk("FUNCTION", "LOAD", libFlags), "$8\r\nlibflags\r\n")
	c.Expect(multibulk("SET", "k", "from minikv"), "+OK\r\n")
	c.Expect(multibulk("SAVE"), "+OK\r\n")

	r := dialRESP(t, startRedisServer(t, "--dir", dir, "--dbfilename", "dump.rdb"))
	r.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "$11\r\nfrom minikv\r\n")
	r.Expect(multibulk("FCALL", "f1", "1", "k", "from redis"), "+OK\r\n")
	r.Expect(multibulk("FUNCTION", "DELETE", "libflags"), "+OK\r\n")
	r.Expect(multibulk("SAVE"), "+OK\r\n")

	s2 := servertest.Start(t, server.Config{}, store.Config{})
	p2 := New(s2.Server)
	stats, err := p2.LoadRDB(filepath.Join(dir, "dump.rdb"))
	if err != nil || stats.Functions != 1 {
		t.Fatalf("LoadRDB of redis-server's file: %+v, %v; want 1 library", stats, err)
	}
	c2 := dialRESP(t, s2.Listen(t, p2))
	c2.Expect(multibulk("FCALL", "f1", "1", "k2", "x"), "+OK\r\n")
	c2.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "-ERR Function not found\r\n")
	c2.Expect(multibulk("GET", "k"), "$10\r\nfrom redis\r\n")
}

// TestFunctionsWhileDiskFails: while the data directory's disk fails,
// the FUNCTION subcommands that change the libraries and functions
// without no-writes are refused with MISCONF, read-only ones run, and a
// library whose record the failure cut off is written again once the
// disk is back (store.RecoverDisk), so memory and disk agree.
func TestFunctionsWhileDiskFails(t *testing.T) {
	mem := vfs.NewMem()
	st, _, respAddr := startDurableOnMem(t, mem)
	c := dialRESP(t, respAddr)
	c.Expect(multibulk("FUNCTION", "LOAD", libFlags), "$8\r\nlibflags\r\n")
	c.Expect(multibulk("SET", "k", "v"), "+OK\r\n")

	diskFull(mem, true)
	trigger := dialRESP(t, respAddr)
	trigger.Send(multibulk("FUNCTION", "LOAD", lib1))
	if !trigger.Closed(10 * time.Second) {
		t.Fatal("the connection whose FUNCTION LOAD met the failure got a reply")
	}
	waitFor(t, "the failure seen", func() bool { return st.WriteErr() != nil && st.DiskMark()%2 == 0 })
	for _, cmd := range [][]string{{"FUNCTION", "LOAD", "REPLACE", lib1}, {"FUNCTION", "DELETE", "libflags"}, {"FUNCTION", "FLUSH"},
		{"FUNCTION", "RESTORE", functionDumpPayload(lib1)}} {
		c.Expect(multibulk(cmd...), misconf)
	}
	c.Expect(multibulk("FCALL", "f1", "1", "k", "x"), misconf)
	c.Expect(multibulk("FCALL_RO", "ro", "1", "k"), "$1\r\nv\r\n")

	diskFull(mem, false)
	waitFor(t, "writes resumed", func() bool { return st.WriteErr() == nil })
	c.Expect(multibulk("FCALL", "f1", "1", "k", "x"), "+OK\r\n") // lib1 stayed in memory
	rec, err := st.Aux(functionsAux)
	if err != nil {
		t.Fatal(err)
	}
	c.Expect(multibulk("FUNCTION", "DUMP"), bulk(string(rec)))
}

// TestFunctionsGoRedis: go-redis's function API over RESP3 and RESP2.
func TestFunctionsGoRedis(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			rdb, _ := newGoRedis(t, resp2)
			ctx := context.Background()
			if name, err := rdb.FunctionLoad(ctx, libFlags).Result(); err != nil || name != "libflags" {
				t.Fatalf("FunctionLoad = %q, %v", name, err)
			}
			if name, err := rdb.FunctionLoadReplace(ctx, lib1).Result(); err != nil || name != "lib1" {
				t.Fatalf("FunctionLoadReplace = %q, %v", name, err)
			}
			if err := rdb.FCall(ctx, "f1", []string{"k"}, "v").Err(); err != nil {
				t.Fatalf("FCall: %v", err)
			}
			if got, err := rdb.FCallRO(ctx, "ro", []string{"k"}).Text(); err != nil || got != "v" {
				t.Errorf("FCallRO = %q, %v", got, err)
			}
			if err := rdb.FCallRO(ctx, "f1", []string{"k"}, "w").Err(); err == nil ||
				err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
				t.Errorf("FCallRO of a writing function: %v", err)
			}
			libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "libf*", WithCode: true}).Result()
			want := []redis.Library{{Name: "libflags", Engine: "LUA", Code: libFlags,
				Functions: []redis.Function{{Name: "ro", Description: "reads a key", Flags: []string{"no-writes", "allow-stale"}}}}}
			if err != nil || !reflect.DeepEqual(libs, want) {
				t.Errorf("FunctionList = %+v, %v; want %+v", libs, err, want)
			}
			stats, err := rdb.FunctionStats(ctx).Result()
			if err != nil || stats.Running() || len(stats.Engines) != 1 || stats.Engines[0].LibrariesCount != 2 || stats.Engines[0].FunctionsCount != 2 {
				t.Errorf("FunctionStats = %+v, %v", stats, err)
			}
			dump, err := rdb.FunctionDump(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := rdb.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.FunctionRestore(ctx, dump).Err(); err != nil {
				t.Fatalf("FunctionRestore: %v", err)
			}
			if err := rdb.FunctionDelete(ctx, "lib1").Err(); err != nil {
				t.Fatalf("FunctionDelete: %v", err)
			}
			if err := rdb.FCall(ctx, "f1", []string{"k"}, "v").Err(); err == nil || err.Error() != "ERR Function not found" {
				t.Errorf("FCall of a deleted function: %v", err)
			}
			if err := rdb.FunctionFlushAsync(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFunctionNamesDifferingInCase: a library may register functions
// whose names differ only in case, as Redis's per-library check allows;
// FCALL finds the first registered (Redis: either, by dict order), and
// deleting the library works (it crashes redis-server 7.0.15).
func TestFunctionNamesDifferingInCase(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=n\nredis.register_function('x', function() return 'x' end)\n"+
		"redis.register_function('X', function() return 'X' end)"), "$1\r\nn\r\n")
	c.Expect(multibulk("FCALL", "X", "0"), "$1\r\nx\r\n")
	if stats := c.Do("FUNCTION", "STATS"); !strings.HasSuffix(stats, "$15\r\nfunctions_count\r\n:2\r\n") {
		t.Errorf("FUNCTION STATS = %q, want 2 functions", stats)
	}
	if info := c.Do("INFO", "memory"); !strings.Contains(info, "\r\nnumber_of_functions:1\r\n") {
		t.Errorf("INFO memory: number_of_functions is not 1 (one name):\n%s", info)
	}
	c.Expect(multibulk("FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('X', function() end)"), "-ERR Function X already exists\r\n")
	c.Expect(multibulk("FUNCTION", "DELETE", "n"), "+OK\r\n")
	c.Expect(multibulk("FCALL", "x", "0"), "-ERR Function not found\r\n")
}
