"""A shared-tier hit through a Redis Cluster against one through a single Redis: the same 300
variants, made on node A and asked for one at a time on node B (which finds each in the shared
tier), with the two set-ups alternating over rounds. Writes its own section of BENCHMARKS.md.
  python3 scripts/bench_shared.py ROUNDS BINARY PHOTOS REPORT"""
import datetime
import os
import socket
import statistics
import subprocess
import sys
import time
import concurrent.futures
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_scratch import scratch  # noqa: E402
from bench_serve import (NODE_PROFILE, free_port, origin, replace_section, start_node, start_redis, stop,  # noqa: E402
                         timed_gets, wait_up)

MARK, END = "<!-- shared-cluster: from scripts/bench-shared -->", "<!-- /shared-cluster -->"


def redis_cli(port, *words):
    return subprocess.run(["redis-cli", "-p", str(port), *words], capture_output=True, text=True).stdout


def start_single():
    port = free_port()
    process = start_redis(port)
    wait_for(lambda: "PONG" in redis_cli(port, "PING"))
    return [process], [port], f"redis://127.0.0.1:{port}"


def start_cluster(work):
    """3 masters and 3 replicas, as scripts/cluster --redis-cluster runs them, with node files
    of their own (a port used again must not find an old cluster's)."""
    work = scratch(dir=work)
    # Twelve distinct ports (each node's and its cluster bus'), all held until all are chosen.
    held = [socket.socket() for _ in range(12)]
    for each in held:
        each.bind(("127.0.0.1", 0))
    ports, buses = [each.getsockname()[1] for each in held[:6]], [each.getsockname()[1] for each in held[6:]]
    for each in held:
        each.close()
    processes = []
    for port, bus in zip(ports, buses):
        processes.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru", "--cluster-enabled", "yes",
             "--cluster-config-file", os.path.join(work, f"nodes-{port}.conf"), "--cluster-port", str(bus),
             "--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "no", "--dir", work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for port in ports:
        wait_for(lambda: "PONG" in redis_cli(port, "PING"))
    created = subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports], "--cluster-replicas", "1",
                              "--cluster-yes"], capture_output=True, text=True)
    if created.returncode != 0:
        stop(processes)
        raise SystemExit(f"bench-shared: redis-cli --cluster create failed: {created.stdout[-500:]}")
    wait_for(lambda: all("cluster_state:ok" in redis_cli(p, "CLUSTER", "INFO") for p in ports))
    return processes, ports, "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports[:3])


def wait_for(condition, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit("bench-shared: timed out waiting for Redis")


def keys(ports):
    """Entries over every master (replicas hold copies)."""
    return sum(int(redis_cli(p, "DBSIZE") or 0) for p in ports if redis_cli(p, "ROLE").startswith("master"))


def one_round(binary, profile, base, names, setup, work):
    processes, ports, shared = start_single() if setup == "single" else start_cluster(work)
    sources = [f"/unsafe/thumb/plain/{base}/{setup}-{time.time_ns()}/{i}/{names[i % len(names)]}" for i in range(300)]
    port_a, port_b = free_port(), free_port()
    # Only variants go to the shared tier (originals stay on each node's disk), so that all 300
    # fit in every set-up's memory and the wait below knows what to count.
    nodes = [start_node(binary, profile, p, os.path.join(work, f"{setup}-{p}"), 0, shared=shared, extra=["--shared-max-entry", "64K"])
             for p in (port_a, port_b)]
    try:
        wait_up(f"http://127.0.0.1:{port_a}"); wait_up(f"http://127.0.0.1:{port_b}")
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda p: urllib.request.urlopen(f"http://127.0.0.1:{port_a}{p}", timeout=120).read(), sources))
        # The stores are off the request path: wait until Redis holds every variant.
        wait_for(lambda: keys(ports) >= 300)
        return timed_gets(port_b, sources)
    finally:
        stop(nodes + processes)


def main(rounds, binary, photos, report):
    base, names, _ = origin(photos)
    work = scratch(prefix="bench-shared-")
    profile = os.path.join(work, "serve.lua")
    open(profile, "w").write(NODE_PROFILE)
    results = {"single": [], "cluster": []}
    for index in range(rounds):
        for setup in (["single", "cluster"] if index % 2 == 0 else ["cluster", "single"]):
            result = one_round(binary, profile, base, names, setup, work)
            results[setup].append(result)
            print(f"round {index + 1}, {setup}: p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms, {result['answers']}", file=sys.stderr)
    spread = lambda values: f"{min(values):.2f} / **{statistics.median(values):.2f}** / {max(values):.2f} ms"
    answers = lambda runs: ", ".join(f"{kind} {sum(r['answers'].get(kind, 0) for r in runs)}"
                                     for kind in sorted({k for r in runs for k in r["answers"]}))
    version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v=")
    load = os.getloadavg()[0]
    single, cluster = results["single"], results["cluster"]
    ratio = statistics.median(r["p50"] for r in cluster) / statistics.median(r["p50"] for r in single)
    lines = [MARK, "## A shared-tier hit: through a Redis Cluster against one Redis", "",
             f"Written by `scripts/bench-shared {rounds}` on {datetime.date.today()} (1-minute load {load:.1f} at the end); "
             f"redis-server {version}, everything on loopback. Each round starts the shared tier afresh: one redis-server, or "
             "a cluster of 3 masters and 3 replicas (`redis-cli --cluster create`, as `scripts/cluster --redis-cluster`); "
             "node A makes 300 variants of the corpus' 2560×1600 JPEGs (`--shared-max-entry 64K`: only variants are shared), then node B asks for each once, one after another "
             "on one keep-alive connection, and finds it in the shared tier. The two set-ups alternate; "
             "min / median / max over the rounds of each round's p50 and p99, as the client sees the whole request.", "",
             "| shared tier | p50 | p99 | answers (X-Cache) |", "|---|---|---|---|",
             f"| one Redis | {spread([r['p50'] for r in single])} | {spread([r['p99'] for r in single])} | {answers(single)} |",
             f"| Redis Cluster, 3+3 | {spread([r['p50'] for r in cluster])} | {spread([r['p99'] for r in cluster])} | {answers(cluster)} |", "",
             f"The cluster's median p50 is {ratio:.2f}× the single Redis'. A hit is one `GET` to the master of the entry's "
             "slot, whichever set-up, so the cluster costs no extra round trip once the client knows the map.", END]
    replace_section(report, MARK, END, "\n".join(lines))


if __name__ == "__main__":
    main(int(sys.argv[1]), *sys.argv[2:5])
