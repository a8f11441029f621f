#!/usr/bin/env python3
"""Server CPU per request of each connection model's null server against
Redis, memcached and MiniKV, with the peers' own load tools (issue 17).

Every round runs every target once, in turn, so a disturbance of the
machine touches all of them alike; the table gives medians over the rounds
of throughput and of server CPU per request (the server's user+system time
from /proc/PID/stat over the run, divided by the requests the tool
completed).

  scripts/bench-netproto.py [--rounds 5] [--requests 200000] [--secs 4]
      [--only resp|memcache] [--pipelines 1,16] [--targets a,b,...]

Targets: null-MODEL[/LOOPS] (goroutine, epoll, gnet, uring), redis,
memcached, PEER (the protocol's peer), minikv[/N] (N: --event-loops N),
minikv[/N]@NAME (the build MINIKV_BINS="NAME=PATH ..." names, to compare
builds in the same rounds), and any Go target +gomaxprocs=N.

Needs bin/minikv (make build), the null servers (built here from
bench/netproto), redis-server, redis-benchmark, memcached and memcaslap.
"""
import argparse, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_seconds(pid):
    """The process's CPU time: the sum of its threads' schedstat run times
    (nanoseconds, where /proc/PID/stat counts 10 ms ticks, too coarse for
    a run of a few seconds at P=16)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def wait_port(port, proc, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.args}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"no listener on {port}: {proc.args}")


def start(target, proto, tmp):
    port = free_port()
    env = dict(os.environ)
    if "+gomaxprocs=" in target:
        # a Go target run with GOMAXPROCS=N: "minikv+gomaxprocs=1"
        target, _, n = target.partition("+gomaxprocs=")
        env["GOMAXPROCS"] = n
    if target.startswith("null-"):
        # null-MODEL or null-MODEL/LOOPS
        model, _, loops = target[5:].partition("/")
        cmd = [os.path.join(tmp, "netproto"), "-model", model, "-proto", proto, "-addr", f"127.0.0.1:{port}"]
        if loops:
            cmd += ["-loops", loops]
    elif target == "redis":
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    elif target == "memcached":
        cmd = ["memcached", "-u", "root", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "2", "-m", "1024"]
    elif target.startswith("minikv"):
        # minikv, or minikv/N: with --event-loops N; minikv...@NAME: the
        # build MINIKV_BINS="NAME=PATH ..." names, for before/after runs
        target, _, name = target.partition("@")
        _, _, loops = target.partition("/")
        binary = os.path.join(ROOT, "bin/minikv")
        if name:
            bins = dict(b.split("=", 1) for b in os.environ.get("MINIKV_BINS", "").split())
            binary = bins[name]
        mport = free_port()
        if proto == "resp":
            cmd = [binary, "-p", str(mport), "--resp-port", str(port), "--admin-addr", "", "-m", "1024"]
        else:
            cmd = [binary, "-p", str(port), "--admin-addr", "", "-m", "1024"]
        if loops:
            cmd += ["--event-loops", loops]
    else:
        raise SystemExit(f"unknown target {target}")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_port(port, p)
    return p, port


def load(proto, port, pipeline, args):
    """Runs the load tool; returns the requests it completed and the wall time."""
    if proto == "resp":
        t0 = time.time()
        out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get,set", "-c", "50", "-P", str(pipeline),
                              "-n", str(args.requests), "-d", "32", "-r", "100000", "-q"],
                             capture_output=True, text=True, timeout=600).stdout
        wall = time.time() - t0
        done = len(re.findall(r"requests per second", out))
        if done != 2:
            raise RuntimeError("redis-benchmark: " + out[-300:])
        return 2 * args.requests, wall
    # memcaslap has no pipelining knob: -w is its window; P is ignored.
    t0 = time.time()
    out = subprocess.run(["memcaslap", "-s", f"127.0.0.1:{port}", "-T", "2", "-c", "50", "-t", f"{args.secs}s",
                          "-F", args.mcs_cfg], capture_output=True, text=True, timeout=600).stdout
    wall = time.time() - t0
    m = re.search(r"Run time: ([\d.]+)s Ops: (\d+)", out)
    if not m:
        raise RuntimeError("memcaslap: " + out[-300:])
    return int(m.group(2)), float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000, help="per redis-benchmark test")
    ap.add_argument("--secs", type=int, default=4, help="per memcaslap run")
    ap.add_argument("--only", choices=["resp", "memcache"])
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--targets", default="null-goroutine,null-epoll,null-gnet,null-uring,minikv,PEER")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="netproto")
    try:
        subprocess.run(["go", "build", "-o", os.path.join(tmp, "netproto"), "."], cwd=os.path.join(ROOT, "bench/netproto"), check=True)
        args.mcs_cfg = os.path.join(tmp, "mcs.cfg")
        with open(args.mcs_cfg, "w") as f:
            f.write("key\n16 16 1\nvalue\n32 32 1\ncmd\n0 0.1\n1 0.9\n")
        runs = []
        for proto in ["resp", "memcache"]:
            if args.only and proto != args.only:
                continue
            peer = "redis" if proto == "resp" else "memcached"
            targets = [t if t != "PEER" else peer for t in args.targets.split(",")]
            pipelines = [int(x) for x in args.pipelines.split(",")] if proto == "resp" else [1]
            for pl in pipelines:
                res = {t: [] for t in targets}
                for rnd in range(args.rounds):
                    for t in targets:
                        p, port = start(t, proto, tmp)
                        try:
                            c0 = cpu_seconds(p.pid)
                            reqs, wall = load(proto, port, pl, args)
                            c1 = cpu_seconds(p.pid)
                        finally:
                            p.kill()
                            p.wait()
                        res[t].append((reqs / wall, (c1 - c0) * 1e6 / reqs))
                        print(f"  {proto} P={pl} round {rnd + 1} {t}: {reqs / wall / 1e3:.1f}k req/s, {(c1 - c0) * 1e6 / reqs:.2f} µs/req", file=sys.stderr)
                runs.append((proto, pl, peer, res))
        tool = {"resp": "redis-benchmark -t get,set -c 50 -d 32", "memcache": "memcaslap -T 2 -c 50, 1:9, 32 B"}
        for proto, pl, peer, res in runs:
            pm = statistics.median(c for _, c in res[peer]) if peer in res else float("nan")
            print(f"\n{tool[proto]}, P={pl} (medians of {args.rounds} rounds)\n")
            print(f"| target | req/s | server CPU per request | ÷ {peer} |")
            print("|---|---|---|---|")
            for t, v in res.items():
                ops = statistics.median(o for o, _ in v)
                cpu = statistics.median(c for _, c in v)
                lo, hi = min(c for _, c in v), max(c for _, c in v)
                print(f"| {t} | {ops / 1e3:.1f}k | {cpu:.2f} µs ({lo:.2f}–{hi:.2f}) | {cpu / pm:.2f}× |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
