#!/usr/bin/env python3
"""The measuring half of scripts/bench-serve.

  bench_serve.py SECONDS BINARY THUMBOR PHOTOS RESULTS   measure
  bench_serve.py --cluster BINARY PHOTOS RESULTS         add the 3-node run, with and without Redis
  bench_serve.py --tiers SECONDS BINARY PHOTOS RESULTS   add hits behind nginx (1 and 2 nodes) and
                                                         shared-tier hits against disk hits
  bench_serve.py --write RESULTS BENCHMARKS.md           write the Serve section (between markers)
"""
import concurrent.futures, http.server, json, os, platform, random, re, socket, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- serve: written by scripts/bench-serve -->", "<!-- /serve -->"


CONTENT_TYPES = {".jpg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".avif": "image/avif"}


def origin(photos, suffixes=(".jpg",)):
    """A keep-alive HTTP/1.1 origin: /u/<anything>/<name>.jpg serves <name>.jpg, so every
    <anything> is a distinct source with the same work. Counts requests per path."""
    bodies = {name: open(os.path.join(photos, name), "rb").read() for name in os.listdir(photos) if name.endswith(suffixes)}
    counts, lock = {}, threading.Lock()

    class Origin(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def do_GET(self):
            with lock:
                counts[self.path] = counts.get(self.path, 0) + 1
            body = bodies.get(self.path.rsplit("/", 1)[-1])
            if body is None:
                self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPES[os.path.splitext(self.path)[1]])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", sorted(bodies), counts


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0])), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"bench-serve: {url} did not come up")


def tree_cpu(pid):
    """User + system seconds of a process and its children (thumbor forks one per core)."""
    total, ticks = 0.0, os.sysconf("SC_CLK_TCK")
    pids = [pid]
    while pids:
        p = pids.pop()
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
            for task in os.listdir(f"/proc/{p}/task"):
                pids += [int(c) for c in open(f"/proc/{p}/task/{task}/children").read().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def tree_rss_mb(pid):
    total, pids = 0, [pid]
    while pids:
        p = pids.pop()
        try:
            total += int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{p}/status").read()).group(1))
            for task in os.listdir(f"/proc/{p}/task"):
                pids += [int(c) for c in open(f"/proc/{p}/task/{task}/children").read().split()]
        except (FileNotFoundError, AttributeError):
            pass
    return total / 1024


WRK_SCRIPT = """
-- Paths from a list; "{n}" in a path becomes a number no other request of the run used, so
-- such a path is a new source every time. hot: the share of requests for the first path.
local counter, paths, hot = 0, {}, 0
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end
function init(args)
  for i = 2, #args do paths[#paths + 1] = args[i] end
  hot = tonumber(args[1])
  n = id * 100000000
end
function request()
  n = n + 1
  local path
  if math.random() < hot then path = paths[1] else path = paths[2 + (n % (#paths - 1))] end
  return wrk.format("GET", (path:gsub("{n}", tostring(n))))
end
"""


def wrk(base, paths, connections, seconds, hot=0.0, pid=None):
    """Runs wrk; returns req/s, latency percentiles (ms), non-2xx count, errors, server CPU
    seconds and the peak RSS sampled every 0.2 s."""
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write(WRK_SCRIPT)
    script.close()
    peak, stop = [0.0], threading.Event()
    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss_mb(pid))
            time.sleep(0.2)
    sampler = threading.Thread(target=sample, daemon=True)
    cpu0 = tree_cpu(pid)
    sampler.start()
    out = subprocess.run(["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", "--latency", "--timeout", "30s",
                          "-s", script.name, base, "--", str(hot)] + paths, capture_output=True, text=True).stdout
    stop.set(); sampler.join()
    cpu = tree_cpu(pid) - cpu0
    os.unlink(script.name)
    def latency(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", out, re.M)
        return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else float("nan")
    total = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), "requests": total,
            "p50": latency(50), "p99": latency(99), "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "errors": sum(int(x) for x in errors.groups()) if errors else 0, "cpu": cpu,
            "cpu_per_request_ms": 1000 * cpu / max(1, total), "peak_rss_mb": peak[0], "raw": out}


# thumbor from a loopback origin, quality 80, no storage and no result storage.
THUMBOR_CONF = """LOADER = 'thumbor.loaders.http_loader'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
ALLOW_UNSAFE_URL = True
QUALITY = 80
AUTO_WEBP = False
HTTP_LOADER_MAX_CLIENTS = 64
"""
# thumbor's documented production setting: transformations on a thread pool, one thread per
# core. Left at 0 (its default), every transformation runs on the IOLoop and blocks it.
THUMBOR_POOL_CONF = THUMBOR_CONF + f"ENGINE_THREADPOOL_SIZE = {os.cpu_count()}\n"


def measure(seconds, binary, thumbor, photos, results_path):
    base, names, counts = origin(photos)
    work = scratch(prefix="bench-serve-")
    profile = os.path.join(work, "serve.lua")
    open(profile, "w").write("""profile "thumb" {
  fetch      { block_private = false },  -- the origin is on loopback
  decode     {},
  -- The default shrink_on_load ("speed") decodes a JPEG at the smallest DCT scale that covers
  -- the box, as thumbor's PIL engine does (draft mode), so both do the same work.
  downsample { size = 300, fit = "cover" },
  encode     { format = "jpeg", quality = 80 },
  cache      { memory = true },
}
""")
    conf = os.path.join(work, "thumbor.conf")
    open(conf, "w").write(THUMBOR_CONF)
    pool_conf = os.path.join(work, "thumbor-pool.conf")
    open(pool_conf, "w").write(THUMBOR_POOL_CONF)
    results = {"date": time.strftime("%Y-%m-%d"), "seconds": seconds, "machine": f"{os.cpu_count()} cores, {platform.machine()}",
               "photos": len(names), "versions": {}}
    ph_port, tb_port, tb1_port, tbp_port = free_port(), free_port(), free_port(), free_port()
    ph = subprocess.Popen([binary, "serve", profile, "--port", str(ph_port), "--allow-unsigned", "--no-access-log"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "MALLOC_ARENA_MAX": "2"})
    # thumbor twice: as it starts by default (one process), and with one process per core, its
    # best use of this machine.
    # best use of this machine; and one process with the engine thread pool.
    thumbor_at = lambda port, processes, config=conf: subprocess.Popen(
        [thumbor, "-p", str(port), "-i", "127.0.0.1", "-c", config, "--processes", str(processes), "-l", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tb, tb1, tbp = thumbor_at(tb_port, os.cpu_count()), thumbor_at(tb1_port, 1), thumbor_at(tbp_port, 1, pool_conf)
    try:
        for port in [ph_port, tb_port, tb1_port, tbp_port]:
            wait_up(f"http://127.0.0.1:{port}")
        time.sleep(2)
        results["versions"]["thumbor"] = subprocess.run([thumbor, "--version"], capture_output=True, text=True).stdout.strip()
        ph_path = lambda source: "/unsafe/thumb/plain/" + source
        tb_path = lambda source: "/unsafe/300x300/" + source
        distinct = [f"{base}/u/{{n}}/{name}" for name in names]
        # Warm each (first requests pay for imports and libvips start) before anything is timed.
        for name in names[:2]:
            for port, path in [(ph_port, ph_path), (tb_port, tb_path), (tb1_port, tb_path), (tbp_port, tb_path), (tb_port, tb_path)]:
                subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}{path(f'{base}/warm/{name}')}"])
        # 1. Uncached processing, 8 clients, every request a new source.
        for tool, port, path, pid in [("pipelinehost", ph_port, ph_path, ph.pid), ("thumbor", tb_port, tb_path, tb.pid),
                                      ("thumbor, 1 process", tb1_port, tb_path, tb1.pid),
                                      ("thumbor, 1 process, engine thread pool", tbp_port, tb_path, tbp.pid)]:
            results[f"uncached: {tool}"] = wrk(f"http://127.0.0.1:{port}", ["x"] + [path(d) for d in distinct], 8, seconds, pid=pid)
            print(f"uncached {tool}: {results[f'uncached: {tool}']['rps']:.1f} req/s", file=sys.stderr)
        tb1.terminate()
        tbp.terminate()
        # Equal output: the same crop size from both.
        out = subprocess.run(["curl", "-s", f"http://127.0.0.1:{tb_port}{tb_path(f'{base}/warm/{names[0]}')}"], capture_output=True).stdout
        results["thumbor output bytes"] = len(out)
        # 2. Memory hits, 64 clients, one warm variant.
        hot = ph_path(f"{base}/hot/{names[0]}")
        subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{ph_port}{hot}"])
        results["hits: pipelinehost"] = wrk(f"http://127.0.0.1:{ph_port}", [hot, hot], 64, seconds, hot=1.0, pid=ph.pid)
        print(f"hits: {results['hits: pipelinehost']['rps']:.0f} req/s", file=sys.stderr)
        # 3. Dedup: 100 identical uncached requests at once.
        source = f"{base}/dedup/{names[1]}"
        statuses = subprocess.run(["curl", "-s", "--parallel", "--parallel-immediate", "--parallel-max", "100"]
                                  + ["-o", "/dev/null", "-w", "%{http_code}\\n", f"http://127.0.0.1:{ph_port}{ph_path(source)}"] * 100,
                                  capture_output=True, text=True).stdout.split()
        results["dedup"] = {"requests": len(statuses), "ok": statuses.count("200"), "transfers": counts.get(f"/dedup/{names[1]}", 0)}
        # 4. Mixed: 64 clients for 3x the run length, 80% one hot variant, 20% new sources.
        results["mixed: pipelinehost"] = wrk(f"http://127.0.0.1:{ph_port}", [hot] + [ph_path(d) for d in distinct], 64,
                                             3 * seconds, hot=0.8, pid=ph.pid)
        print(f"mixed: {results['mixed: pipelinehost']['rps']:.0f} req/s, peak RSS {results['mixed: pipelinehost']['peak_rss_mb']:.0f} MB",
              file=sys.stderr)
    finally:
        for process in [ph, tb, tb1, tbp]:
            process.terminate()
        for process in [ph, tb, tb1, tbp]:
            process.wait(30)
    results["load"] = os.getloadavg()[0]
    for sample in results.values():
        if isinstance(sample, dict): sample.pop("raw", None)
    json.dump(results, open(results_path, "w"), indent=1)

# The multi-node runs' profile: originals on disk, variants in memory and on disk (and in Redis
# when a node has --shared-cache).
NODE_PROFILE = """profile "thumb" {
  fetch      { block_private = false },
  cache      { disk = true },
  decode     {},
  downsample { size = 300, fit = "cover" },
  encode     { format = "jpeg", quality = 80 },
  cache      { memory = true, disk = true },
}
"""


def cluster(binary, photos, results_path):
    """1,000 requests over 100 distinct sources (Zipf-skewed, seeded), spread round-robin over
    3 cold nodes, 32 at a time: origin transfers with the shared tier on Redis and without."""
    base, names, counts = origin(photos)
    work = scratch(prefix="bench-cluster-")
    profile = os.path.join(work, "serve.lua")
    open(profile, "w").write(NODE_PROFILE)
    rng = random.Random(1)
    weights = [1 / (i + 1) for i in range(100)]
    picks = rng.choices(range(100), weights=weights, k=1000)
    out = {}
    for label, shared in [("with Redis", True), ("without", False)]:
        redis_port, processes, ports = free_port(), [], []
        if shared:
            processes.append(subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                               "--appendonly", "no", "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for node in range(3):
            port = free_port()
            ports.append(port)
            extra = ["--shared-cache", f"redis://127.0.0.1:{redis_port}"] if shared else []
            processes.append(subprocess.Popen([binary, "serve", profile, "--port", str(port), "--allow-unsigned", "--no-access-log",
                                               "--cache-dir", os.path.join(work, f"{label}-{node}")] + extra,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            for port in ports:
                wait_up(f"http://127.0.0.1:{port}")
            prefix = "/shared" if shared else "/alone"
            def fetch(index):
                source = f"{base}{prefix}/{picks[index]}/{names[picks[index] % len(names)]}"
                url = f"http://127.0.0.1:{ports[index % 3]}/unsafe/thumb/plain/{source}"
                try:
                    with urllib.request.urlopen(url, timeout=120) as response:
                        response.read()
                        return response.status
                except urllib.error.HTTPError as error:
                    return error.code
            started = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(32) as pool:
                statuses = list(pool.map(fetch, range(1000)))
            wall = time.perf_counter() - started
            transfers = sum(n for path, n in counts.items() if path.startswith(prefix + "/"))
            out[label] = {"transfers": transfers, "ok": statuses.count(200), "wall": wall}
            print(f"cluster {label}: {transfers} transfers, {statuses.count(200)} ok, {wall:.1f} s", file=sys.stderr)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(30)
    results = json.load(open(results_path))
    results["cluster"] = {"distinct": len(set(picks)), **out}
    json.dump(results, open(results_path, "w"), indent=1)


def start_redis(port):
    return subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_node(binary, profile, port, cache_dir, redis_port, shared=None, extra=(), env=None):
    """A serve node on `port` sharing the Redis on `redis_port` (none when it is None), or the
    tier at `shared` (a URL)."""
    tier = [] if redis_port is None and shared is None else ["--shared-cache", shared or f"redis://127.0.0.1:{redis_port}"]
    return subprocess.Popen([binary, "serve", profile, "--port", str(port), "--allow-unsigned", "--no-access-log",
                             "--cache-dir", cache_dir, *tier, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "MALLOC_ARENA_MAX": "2", **(env or {})})


def start_s3():
    """moto's S3 server with authentication on (the venv scripts/setup test makes), an IAM user made
    through its IAM API (Tests/TestSupport/s3tool.py), and a bucket "bench": the process and
    the AWS environment a node reaches it with."""
    venv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build", "reference-venv", "bin")
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "TestSupport", "s3tool.py")
    port = free_port()
    process = subprocess.Popen([os.path.join(venv, "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"})
    endpoint = f"http://127.0.0.1:{port}"
    wait_up(endpoint)
    run = lambda *args: subprocess.run([os.path.join(venv, "python"), tool, endpoint, *args],
                                       check=True, capture_output=True, text=True).stdout.split()
    key, secret = run("setup")
    run("mkbucket", key, secret, "bench")
    return process, {"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_ENDPOINT_URL": endpoint,
                     "AWS_REGION": "us-east-1"}


def stop(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(30)


def start_nginx(work, ports):
    """nginx round-robin over `ports` with keep-alive upstreams, as scripts/cluster runs it."""
    port = free_port()
    upstreams = "".join(f"    server 127.0.0.1:{p};\n" for p in ports)
    conf = os.path.join(work, f"nginx-{port}.conf")
    open(conf, "w").write(f"""worker_processes auto;
pid {work}/nginx-{port}.pid;
error_log {work}/nginx-{port}-error.log;
daemon off;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  upstream nodes {{
{upstreams}    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{ proxy_pass http://nodes; proxy_http_version 1.1; proxy_set_header Connection ""; }}
  }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}")
    return process, port


def timed_gets(port, paths):
    """Each path once, one after another on one keep-alive connection: per-request latency (ms)
    and the X-Cache answers."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, kinds = [], {}
    for path in paths:
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        latencies.append(1000 * (time.perf_counter() - started))
        kind = response.getheader("X-Cache", "?") if response.status == 200 else f"status {response.status}"
        kinds[kind] = kinds.get(kind, 0) + 1
    connection.close()
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    return {"requests": len(paths), "p50": pick(0.50), "p99": pick(0.99), "answers": kinds}


def tiers(seconds, binary, photos, results_path):
    """Memory hits through nginx in front of 1 and of 2 nodes (wrk, 64 clients, one hot
    variant); then what a hit costs from each lower tier: 300 variants made on node A are asked
    for one by one on node B, which finds them in Redis (shared hits), and on node A after a
    restart, which finds them on its disk (disk hits)."""
    base, names, counts = origin(photos)
    work = scratch(prefix="bench-tiers-")
    profile = os.path.join(work, "serve.lua")
    open(profile, "w").write(NODE_PROFILE)
    path = lambda source: "/unsafe/thumb/plain/" + source
    out = {}
    redis_port = free_port()
    redis = start_redis(redis_port)
    try:
        # 1. Memory hits behind nginx, 1 node and 2 nodes.
        for count in [1, 2]:
            ports = [free_port() for _ in range(count)]
            nodes = [start_node(binary, profile, p, os.path.join(work, f"hits-{count}-{i}"), redis_port) for i, p in enumerate(ports)]
            nginx = None
            try:
                for p in ports:
                    wait_up(f"http://127.0.0.1:{p}")
                nginx, front = start_nginx(work, ports)
                hot = path(f"{base}/nginx-hot/{names[0]}")
                for p in ports:  # every node holds the hot variant in memory before the timed run
                    subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{p}{hot}"])
                result = wrk(f"http://127.0.0.1:{front}", [hot, hot], 64, seconds, hot=1.0, pid=nodes[0].pid)
                result.pop("raw", None)
                out[f"nginx, {count} node{'s' if count > 1 else ''}"] = result
                print(f"memory hits behind nginx, {count} node(s): {result['rps']:.0f} req/s, p99 {result['p99']:.1f} ms", file=sys.stderr)
            finally:
                stop(nodes + ([nginx] if nginx else []))
        # 2. Shared-tier hits against disk hits and object-store hits, for the same 300 variants.
        port_a, port_b, port_c = free_port(), free_port(), free_port()
        sources = [path(f"{base}/tier/{i}/{names[i % len(names)]}") for i in range(300)]
        s3, aws = start_s3()
        store = ["--object-store", "s3://bench/tiers"]
        node_a = start_node(binary, profile, port_a, os.path.join(work, "tier-a"), redis_port, extra=store, env=aws)
        node_b = start_node(binary, profile, port_b, os.path.join(work, "tier-b"), redis_port)
        try:
            wait_up(f"http://127.0.0.1:{port_a}"); wait_up(f"http://127.0.0.1:{port_b}")
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda p: urllib.request.urlopen(f"http://127.0.0.1:{port_a}{p}", timeout=120).read(), sources))
            time.sleep(2)  # the stores to Redis and to disk are off the request path
            out["shared hits"] = timed_gets(port_b, sources)
        finally:
            stop([node_a, node_b])  # node A's stop drains its writes to the object store
        node_a = start_node(binary, profile, port_a, os.path.join(work, "tier-a"), redis_port)
        try:
            wait_up(f"http://127.0.0.1:{port_a}")
            out["disk hits"] = timed_gets(port_a, sources)
        finally:
            stop([node_a])
        # Node C: an empty disk and no Redis, so each variant comes from the object store.
        node_c = start_node(binary, profile, port_c, os.path.join(work, "tier-c"), None, extra=store, env=aws)
        try:
            wait_up(f"http://127.0.0.1:{port_c}")
            out["store hits"] = timed_gets(port_c, sources)
        finally:
            stop([node_c, s3])
        out["tiers date"] = time.strftime("%Y-%m-%d")
        for label in ["shared hits", "disk hits", "store hits"]:
            print(f"{label}: p50 {out[label]['p50']:.2f} ms, p99 {out[label]['p99']:.2f} ms, {out[label]['answers']}", file=sys.stderr)
    finally:
        stop([redis])
    results = json.load(open(results_path))
    results["tiers"] = out
    json.dump(results, open(results_path, "w"), indent=1)


def write(results_path, report_path):
    r = json.load(open(results_path))
    ph, tb, tb1 = r["uncached: pipelinehost"], r["uncached: thumbor"], r["uncached: thumbor, 1 process"]
    tbp = r["uncached: thumbor, 1 process, engine thread pool"]
    cores = r['machine'].split()[0]
    hits, mixed, dedup = r["hits: pipelinehost"], r["mixed: pipelinehost"], r["dedup"]
    ok = lambda met: "met" if met else "**missed**"
    lines = [MARK_START, "## Serve: `pipelinehost serve` against thumbor", "",
             f"Written by `scripts/bench-serve {r['seconds']}` on {r['date']}. Machine: {r['machine']} (1-minute load "
             f"{r['load']:.1f} at the end); {r['versions']['thumbor']}, no result storage, three ways: as it starts (one process, "
             f"transformations on its IOLoop); with `ENGINE_THREADPOOL_SIZE = {cores}`, its documented production setting, "
             f"which moves them to a pool of one thread per core; and with {cores} processes (one per core). The headline "
             "ratio is against the thread pool setting. "
             f"Both fetch the same {r['photos']} 2560×1600 JPEGs from one loopback origin (a Python keep-alive server) and make "
             "the same 300×300 centre crop at quality 80; wrk, the origin and the server share the two cores. CPU is the "
             "server's user + system time over the run (thumbor: all its processes).", "",
             "| run | req/s | p50 | p99 | non-2xx | server CPU per request | peak RSS |", "|---|---|---|---|---|---|---|"]
    row = lambda label, s: (f"| {label} | {s['rps']:.1f} | {s['p50']:.1f} ms | {s['p99']:.1f} ms | {s['non2xx'] + s['errors']} | "
                            f"{s['cpu_per_request_ms']:.1f} ms | {s['peak_rss_mb']:.0f} MB |")
    lines += [row("uncached, 8 clients: pipelinehost", ph), row("uncached, 8 clients: thumbor, 1 process (default)", tb1),
              row(f"uncached, 8 clients: thumbor, 1 process, ENGINE_THREADPOOL_SIZE = {cores}", tbp),
              row(f"uncached, 8 clients: thumbor, {r['machine'].split()[0]} processes", tb),
              row("memory hits, 64 clients: pipelinehost", hits), row(f"mixed {3 * r['seconds']} s, 64 clients (80% hits): pipelinehost", mixed), "",
              "| target | result | |", "|---|---|---|",
              f"| **headline**: uncached ≥ 3× thumbor's req/s, thumbor with its engine thread pool | {ph['rps'] / tbp['rps']:.1f}× ({ph['rps']:.1f} vs {tbp['rps']:.1f} req/s); CPU per request {tbp['cpu_per_request_ms'] / ph['cpu_per_request_ms']:.1f}× less | {ok(ph['rps'] >= 3 * tbp['rps'])} |",
              f"| Performance 3: the same stays ≥ 2× thumbor with its engine thread pool | {ph['rps'] / tbp['rps']:.1f}× | {ok(ph['rps'] >= 2 * tbp['rps'])} |",
              f"| the same, thumbor as it starts (1 process, no pool) | {ph['rps'] / tb1['rps']:.1f}× ({ph['rps']:.1f} vs {tb1['rps']:.1f} req/s) | {ok(ph['rps'] >= 3 * tb1['rps'])} |",
              f"| the same, thumbor with one process per core | {ph['rps'] / tb['rps']:.1f}× ({ph['rps']:.1f} vs {tb['rps']:.1f} req/s); CPU per request {tb['cpu_per_request_ms'] / ph['cpu_per_request_ms']:.1f}× less | {ok(ph['rps'] >= 3 * tb['rps'])} |",
              f"| memory hits ≥ 5,000 req/s, p99 ≤ 20 ms | {hits['rps']:.0f} req/s, p99 {hits['p99']:.1f} ms | {ok(hits['rps'] >= 5000 and hits['p99'] <= 20)} |",
              f"| 100 identical uncached requests make 1 transfer | {dedup['transfers']} transfer(s), {dedup['ok']} of {dedup['requests']} answered 200 | {ok(dedup['transfers'] == 1 and dedup['ok'] == 100)} |",
              f"| mixed run: peak RSS ≤ 400 MB, 0 non-2xx | {mixed['peak_rss_mb']:.0f} MB, {mixed['non2xx'] + mixed['errors']} non-2xx or errors | {ok(mixed['peak_rss_mb'] <= 400 and mixed['non2xx'] + mixed['errors'] == 0)} |",
              "", "Against thumbor using both cores (its thread pool, or a process per core), throughput is bounded by "
              "CPU per request, so the ratio follows the CPU ratio, not 3×.",
              ""]
    if "cluster" in r:
        c = r["cluster"]
        shared, alone = c["with Redis"], c["without"]
        lines += ["### Three nodes, cold: the shared tier on Redis", "",
                  f"1,000 requests over 100 sources ({c['distinct']} of them asked for at least once; Zipf-skewed, seeded), "
                  "round-robin over 3 `serve` nodes, 32 at a time, every cache empty at the start.", "",
                  "| nodes | origin transfers | answered 200 | wall |", "|---|---|---|---|",
                  f"| with `--shared-cache` (one Redis) | **{shared['transfers']}** | {shared['ok']} | {shared['wall']:.1f} s |",
                  f"| without | {alone['transfers']} | {alone['ok']} | {alone['wall']:.1f} s |", "",
                  f"Target: transfers equal to the distinct sources ({c['distinct']}) with the shared tier: "
                  f"{ok(shared['transfers'] == c['distinct'])}.", ""]
    if "tiers" in r:
        t = r["tiers"]
        answers = lambda s: ", ".join(f"{n} {kind}" for kind, n in sorted(s["answers"].items()))
        one, two, shared_hits, disk_hits = t["nginx, 1 node"], t["nginx, 2 nodes"], t["shared hits"], t["disk hits"]
        lines += ["### Memory hits behind nginx, and what a lower tier's hit costs", "",
                  "nginx round-robin (keep-alive upstreams, as `scripts/cluster` runs it) in front of 1 and of 2 nodes "
                  "sharing one Redis; wrk with 64 clients asks for one variant every node holds in memory. nginx, wrk and "
                  "the nodes share the two cores, so a second node adds no CPU here: the rows show what the hop through nginx costs.", "",
                  "| run | req/s | p50 | p99 | non-2xx |", "|---|---|---|---|---|",
                  f"| memory hits, straight to one node (above) | {hits['rps']:.0f} | {hits['p50']:.1f} ms | {hits['p99']:.1f} ms | {hits['non2xx'] + hits['errors']} |",
                  f"| memory hits, nginx + 1 node | {one['rps']:.0f} | {one['p50']:.1f} ms | {one['p99']:.1f} ms | {one['non2xx'] + one['errors']} |",
                  f"| memory hits, nginx + 2 nodes | {two['rps']:.0f} | {two['p50']:.1f} ms | {two['p99']:.1f} ms | {two['non2xx'] + two['errors']} |", "",
                  f"300 variants made on node A, then asked for one at a time on one keep-alive connection: on node B, "
                  "which finds each in Redis (a shared hit), on node A after a restart, which finds each on its "
                  "disk (a disk hit; the files are in the page cache), and, where the run had an object store, on node C, "
                  "which has neither and finds each in the bucket node A wrote (a store hit). The latency is the whole "
                  "request, as the client sees it.", "",
                  "| hit | p50 | p99 | answers (X-Cache) |", "|---|---|---|---|",
                  f"| disk | {disk_hits['p50']:.2f} ms | {disk_hits['p99']:.2f} ms | {answers(disk_hits)} |",
                  f"| shared (Redis on loopback) | {shared_hits['p50']:.2f} ms | {shared_hits['p99']:.2f} ms | {answers(shared_hits)} |"]
        if "store hits" in t:
            store_hits = t["store hits"]
            lines += [f"| store (moto's S3 server on loopback, on node C: an empty disk, no Redis) | {store_hits['p50']:.2f} ms | "
                      f"{store_hits['p99']:.2f} ms | {answers(store_hits)} |", "",
                      f"(The nginx rows and these three: `scripts/bench_serve.py --tiers`, {t['tiers date']}. moto is a Python server "
                      "made for tests; a real bucket adds its own network round trip to each store hit.)"]
        lines += [""]
    lines += [MARK_END]
    replace_section(report_path, MARK_START, MARK_END, "\n".join(lines))


def replace_section(report_path, mark, end, block):
    """Writes `block` (which starts with `mark` and ends with `end`) over the report's section
    between those markers, or appends it when the report has none."""
    text = open(report_path).read() if os.path.exists(report_path) else ""
    if mark in text:
        text = text[:text.index(mark)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(report_path, "w").write(text)


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--cluster":
        cluster(*sys.argv[2:5])
    elif sys.argv[1] == "--tiers":
        tiers(int(sys.argv[2]), *sys.argv[3:6])
    else:
        measure(int(sys.argv[1]), *sys.argv[2:6])
