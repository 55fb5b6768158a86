#!/usr/bin/env python3
"""What tracing costs serve, measured in one run (scripts/bench-tracing).

  bench_tracing.py SECONDS BINARY PHOTOS RESULTS [BASELINE_BINARY]   measure
  bench_tracing.py --write RESULTS BENCHMARKS.md                      write the Tracing section

Each configuration serves the same profile from the same loopback origin: no OTEL endpoint;
an endpoint with OTEL_TRACES_SAMPLER=always_off (spans made, none recorded); an endpoint with
every request exported to a real OTLP/HTTP receiver (Tests/TestSupport/otlp_receiver.py); and,
when given, a baseline binary built before tracing existed. Memory hits (64 clients, one warm
variant) and uncached requests (8 clients, every request a new source) run in rounds that
alternate the configurations, so a noisy neighbour hits them all alike; the median round counts.
CPU is the server's user + system time (its exporter included) per request.
"""
import json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import free_port, origin, replace_section, wait_up, wrk  # noqa: E402
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- tracing: written by scripts/bench-tracing -->", "<!-- /tracing -->"
PROFILE = """profile "thumb" {
  fetch      { block_private = false },
  decode     {},
  downsample { size = 300, fit = "cover" },
  encode     { format = "jpeg", quality = 80 },
  cache      { memory = true },
}
"""
ROUNDS = 3


def receiver(python):
    process = subprocess.Popen([python, "Tests/TestSupport/otlp_receiver.py"], stdout=subprocess.PIPE, text=True)
    port = int(process.stdout.readline().split()[1])
    return process, f"http://127.0.0.1:{port}"


def measure(seconds, binary, photos, results_path, baseline=None):
    base, names, _ = origin(photos)
    work = scratch(prefix="bench-tracing-")
    profile = os.path.join(work, "serve.lua")
    open(profile, "w").write(PROFILE)
    collector, endpoint = receiver(".build/reference-venv/bin/python")
    configs = [("no endpoint", binary, {}),
               ("endpoint, sampler always_off", binary,
                {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "always_off"}),
               ("endpoint, every request exported", binary, {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})]
    if baseline:
        configs.insert(0, ("before tracing (e9ee94d)", baseline, {}))
    results = {"date": time.strftime("%Y-%m-%d"), "seconds": seconds, "machine": f"{os.cpu_count()} cores",
               "rounds": ROUNDS, "runs": {name: {"hits": [], "uncached": []} for name, _, _ in configs}}
    path = lambda source: "/unsafe/thumb/plain/" + source
    distinct = [path(f"{base}/u/{{n}}/{name}") for name in names]
    try:
        for round_number in range(ROUNDS):
            for name, executable, env in configs:
                port = free_port()
                server = subprocess.Popen([executable, "serve", profile, "--port", str(port), "--allow-unsigned",
                                           "--no-access-log"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          env={**os.environ, "MALLOC_ARENA_MAX": "2", **env})
                try:
                    wait_up(f"http://127.0.0.1:{port}")
                    hot = path(f"{base}/hot-{round_number}/{names[0]}")
                    for warm in [hot, path(f"{base}/warm-{round_number}/{names[1]}")]:
                        subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}{warm}"])
                    hits = wrk(f"http://127.0.0.1:{port}", [hot, hot], 64, seconds, hot=1.0, pid=server.pid)
                    uncached = wrk(f"http://127.0.0.1:{port}", ["x"] + [d.replace("/u/", f"/u{round_number}/") for d in distinct],
                                   8, seconds, pid=server.pid)
                    for kind, sample in [("hits", hits), ("uncached", uncached)]:
                        sample.pop("raw", None)
                        results["runs"][name][kind].append(sample)
                    print(f"round {round_number + 1} {name}: hits {hits['rps']:.0f} req/s, "
                          f"uncached {uncached['rps']:.1f} req/s", file=sys.stderr)
                finally:
                    server.terminate()
                    server.wait(30)
        # What arrived: every exported request's spans.
        with urllib_open(endpoint + "/spans") as answer:
            spans = json.load(answer)["spans"]
        results["spans received"] = len(spans)
        traced = results["runs"]["endpoint, every request exported"]
        results["requests exported"] = sum(s["requests"] for kind in traced.values() for s in kind)
    finally:
        collector.terminate()
    results["load"] = os.getloadavg()[0]
    json.dump(results, open(results_path, "w"), indent=1)


def urllib_open(url):
    import urllib.request
    return urllib.request.urlopen(url, timeout=60)


def median(samples, field):
    return statistics.median(sample[field] for sample in samples)


def write(results_path, report_path):
    r = json.load(open(results_path))
    runs = r["runs"]
    reference = "no endpoint"
    lines = [MARK_START, "## Tracing: what spans cost serve", "",
             f"Written by `scripts/bench-tracing {r['seconds']}` on {r['date']}. Machine: {r['machine']} "
             f"(1-minute load {r['load']:.1f} at the end). One `serve` at a time, the same profile (fetch, decode, "
             "300 px cover, JPEG q80, memory cache) and loopback origin; memory hits with 64 clients on one warm "
             "variant, uncached with 8 clients and a new source each request. The configurations take turns over "
             f"{r['rounds']} rounds of {r['seconds']} s each; the median round is shown. CPU is the server's user + "
             "system time per request, its exporter threads included; the receiver is a Python OTLP/HTTP server "
             "on the same two cores.", "",
             "| configuration | memory hits req/s | p99 | CPU per hit | uncached req/s | CPU per uncached request |",
             "|---|---|---|---|---|---|"]
    for name, kinds in runs.items():
        hits, uncached = kinds["hits"], kinds["uncached"]
        lines.append(f"| {name} | {median(hits, 'rps'):.0f} | {median(hits, 'p99'):.1f} ms | "
                     f"{1000 * median(hits, 'cpu_per_request_ms'):.0f} µs | {median(uncached, 'rps'):.1f} | "
                     f"{median(uncached, 'cpu_per_request_ms'):.1f} ms |")
    lines.append("")
    ref_hits = median(runs[reference]["hits"], "cpu_per_request_ms")
    ref_uncached = median(runs[reference]["uncached"], "cpu_per_request_ms")
    exported = runs["endpoint, every request exported"]
    extra_hit = 1000 * (median(exported["hits"], "cpu_per_request_ms") - ref_hits)
    extra_uncached = median(exported["uncached"], "cpu_per_request_ms") - ref_uncached
    lines.append(f"Exporting every request costs {extra_hit:.0f} µs of CPU per memory hit (3 spans: the server span, "
                 f"`pipeline.image` and `cache memory`) and {extra_uncached:.2f} ms per uncached request (about a dozen), "
                 f"against no endpoint. {r['spans received']} spans arrived for {r['requests exported']} exported "
                 "requests: at these rates the batch processor's queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048 spans) is "
                 "full at times, and spans that find it full are dropped, as the specification has it, rather than "
                 "held. A sampler such as `parentbased_traceidratio` at 0.1 pays the export on a tenth of the new "
                 "traces; `always_off` still makes the spans, unrecorded, for the cost in its row.")
    if "before tracing (e9ee94d)" in runs:
        before = runs["before tracing (e9ee94d)"]
        ratio = median(runs[reference]["hits"], "rps") / median(before["hits"], "rps")
        lines.append("")
        lines.append(f"With no endpoint, memory hits run at {ratio:.2f}× the rate of the build before tracing "
                     f"({median(runs[reference]['hits'], 'rps'):.0f} against {median(before['hits'], 'rps'):.0f} "
                     "req/s); the rounds of one configuration spread by "
                     f"{spread(runs[reference]['hits']):.0f}% among themselves.")
    lines += ["", MARK_END]
    replace_section(report_path, MARK_START, MARK_END, "\n".join(lines))


def spread(samples):
    values = [s["rps"] for s in samples]
    return 100 * (max(values) - min(values)) / statistics.median(values)


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], *(sys.argv[5:6]))
