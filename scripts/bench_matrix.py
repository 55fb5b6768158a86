#!/usr/bin/env python3
"""The measuring half of scripts/bench-matrix: imgproxy's image-servers-benchmark matrix (fit-in
512x512, the answer in the input's format: JPEG q80, PNG, WebP q75, AVIF q65, 2 clients, no
result cache) on several corpora, pipelinehost against thumbor in its production setting, each
format side by side in one run.

  bench_matrix.py SECONDS BINARY THUMBOR RESULTS NAME=DIR...   measure (the thumbor venv's Python)
  bench_matrix.py --write RESULTS BENCHMARKS.md                write the matrix section

Each DIR holds jpeg/, png/, webp/ and avif/, the same photos in each format (scripts/bench-matrix
makes them). Per corpus, format and server it reports req/s and the server's CPU per request
(wrk, every source new), and over one answer per photo the median bytes and median PSNR against
an exact reference (scripts/image_quality.py). AVIF runs twice: each server at its default
speed, then both at their fastest (pipelinehost effort 0, thumbor AVIF_SPEED 10)."""
import json, os, platform, statistics, subprocess, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import THUMBOR_POOL_CONF, free_port, origin, replace_section, wait_up, wrk  # noqa: E402
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- matrix: written by scripts/bench-matrix -->", "<!-- /matrix -->"
BOX = 512
FORMATS = [("jpeg", ".jpg"), ("png", ".png"), ("webp", ".webp"), ("avif", ".avif")]
# The benchmark's qualities, per output format (imgproxy's published settings).
QUALITY = {"jpeg": 80, "webp": 75, "avif": 65}

# One profile for the whole matrix: the output in the input's format, no result cache.
PROFILE = """profile "fit" {
  fetch      { block_private = false },  -- the origin is on loopback
  decode     {},
  downsample { size = %d },
  encode     { format = "source", quality = 80, webp_quality = 75, avif_quality = 65 },
}
profile "fastest" {
  fetch      { block_private = false },
  decode     {},
  downsample { size = %d },
  encode     { format = "source", quality = 80, webp_quality = 75, avif_quality = 65, effort = 0 },
}
""" % (BOX, BOX)

THUMBOR_MATRIX_CONF = THUMBOR_POOL_CONF + "WEBP_QUALITY = 75\nAVIF_QUALITY = 65\n"


def answers(port, path_of, base, names):
    """One answer per photo (not timed)."""
    return {name: urllib.request.urlopen(f"http://127.0.0.1:{port}{path_of(f'{base}/quality/{name}')}", timeout=300).read()
            for name in names}


def combined(halves):
    """One figure set from timed halves: requests, CPU and failures summed, req/s averaged."""
    total = sum(h["requests"] for h in halves)
    cpu = sum(h["cpu"] for h in halves)
    return {"rps": statistics.mean(h["rps"] for h in halves), "requests": total, "cpu": cpu,
            "cpu_per_request_ms": 1000 * cpu / max(1, total), "non2xx": sum(h["non2xx"] for h in halves),
            "errors": sum(h["errors"] for h in halves), "halves_rps": [round(h["rps"], 1) for h in halves]}


def quality(served, photos):
    """Median bytes and median PSNR of the answers against the exact reference, and each photo's."""
    from image_quality import psnr  # Pillow: only the measuring run has it (the thumbor venv)
    each = {name: psnr(body, os.path.join(photos, name)) for name, body in served.items()}
    return {"bytes": statistics.median(len(body) for body in served.values()), "psnr": statistics.median(each.values()),
            "psnr_each": each}


def measure_corpus(seconds, binary, thumbor, corpus, work):
    """The matrix rows of one corpus."""
    rows = {}
    profile = os.path.join(work, "matrix.lua")
    open(profile, "w").write(PROFILE)
    confs = {}
    for label, extra in [("default", ""), ("fastest", "AVIF_SPEED = 10\n")]:
        confs[label] = os.path.join(work, f"thumbor-{label}.conf")
        open(confs[label], "w").write(THUMBOR_MATRIX_CONF + extra)
    for fmt, suffix in FORMATS:
        photos = os.path.join(corpus, fmt)
        base, names, _ = origin(photos, (suffix,))
        speeds = ["default", "fastest"] if fmt == "avif" else ["default"]
        for speed in speeds:
            ph_port, tb_port = free_port(), free_port()
            ph = subprocess.Popen([binary, "serve", profile, "--port", str(ph_port), "--allow-unsigned", "--no-access-log"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "MALLOC_ARENA_MAX": "2"})
            tb = subprocess.Popen([thumbor, "-p", str(tb_port), "-i", "127.0.0.1", "-c", confs[speed], "--processes", "1", "-l", "error"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ph_profile = "fit" if speed == "default" else "fastest"
            ph_path = lambda source: f"/unsafe/{ph_profile}/plain/" + source
            tb_path = lambda source: f"/unsafe/fit-in/{BOX}x{BOX}/" + source
            try:
                for port in [ph_port, tb_port]:
                    wait_up(f"http://127.0.0.1:{port}")
                for name in names[:2]:
                    for port, path in [(ph_port, ph_path), (tb_port, tb_path)]:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}{path(f'{base}/warm/{name}')}", timeout=300).read()
                distinct = [f"{base}/u/{{n}}/{name}" for name in names]
                servers = {"pipelinehost": (ph_port, ph_path, ph.pid), "thumbor": (tb_port, tb_path, tb.pid)}
                # Timed in halves, A B B A: a machine that speeds up or slows down during the row
                # weighs on both servers alike.
                halves = {tool: [] for tool in servers}
                for tool in ["pipelinehost", "thumbor", "thumbor", "pipelinehost"]:
                    port, path, pid = servers[tool]
                    halves[tool].append(wrk(f"http://127.0.0.1:{port}", ["x"] + [path(d) for d in distinct], 2,
                                            max(1, seconds // 2), pid=pid))
                row = {}
                for tool, (port, path, pid) in servers.items():
                    run = combined(halves[tool])
                    served = answers(port, path, base, names)
                    # Kept for a look at what each server answered (its path is printed at the start).
                    kept = os.path.join(work, os.path.basename(corpus), f"{fmt}-{speed}", tool)
                    os.makedirs(kept, exist_ok=True)
                    for name, body in served.items():
                        open(os.path.join(kept, name), "wb").write(body)
                    kinds = {body[:12] for body in served.values()}
                    row[tool] = {**run, **quality(served, photos), "signatures": sorted(k.hex() for k in kinds)}
                    print(f"matrix {os.path.basename(corpus)} {fmt} {speed} {tool}: {run['rps']:.1f} req/s, "
                          f"{run['cpu_per_request_ms']:.1f} ms CPU, {row[tool]['bytes'] / 1024:.1f} KB, "
                          f"{row[tool]['psnr']:.2f} dB, {run['non2xx'] + run['errors']} failed", file=sys.stderr)
                rows[fmt if speed == "default" else f"{fmt}, both fastest"] = row
            finally:
                for process in [ph, tb]:
                    process.terminate()
                for process in [ph, tb]:
                    process.wait(30)
    return rows


def describe(corpus):
    """Sizes, progressive JPEGs and embedded profiles of a corpus' JPEG set."""
    jpegs = sorted(os.path.join(corpus, "jpeg", n) for n in os.listdir(os.path.join(corpus, "jpeg")) if n.endswith(".jpg"))
    field = lambda path, name: subprocess.run(["vipsheader", "-f", name, path], capture_output=True, text=True).stdout.strip()
    sizes = sorted({f"{field(p, 'width')}×{field(p, 'height')}" for p in jpegs})
    progressive = sum(field(p, "interlaced") == "1" for p in jpegs)
    icc = sum(subprocess.run(["vipsheader", "-f", "icc-profile-data", p], capture_output=True).returncode == 0 for p in jpegs)
    return {"photos": len(jpegs), "sizes": sizes, "progressive": progressive, "icc": icc}


def measure(seconds, binary, thumbor, results_path, corpora):
    results = {"date": time.strftime("%Y-%m-%d"), "seconds": seconds, "machine": f"{os.cpu_count()} cores, {platform.machine()}",
               "thumbor": subprocess.run([thumbor, "--version"], capture_output=True, text=True).stdout.strip(),
               "pipelinehost": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip(),
               "corpora": {}}
    # The answers are in work until the run ends (BENCH_KEEP=1 keeps them after).
    work = scratch(prefix="bench-matrix-")
    for name, corpus in corpora:
        results["corpora"][name] = {"about": describe(corpus), "rows": measure_corpus(seconds, binary, thumbor, corpus, work)}
        json.dump(results, open(results_path, "w"), indent=1)
    results["load"] = os.getloadavg()[0]
    json.dump(results, open(results_path, "w"), indent=1)


TARGETS = {"jpeg": 1.6, "png": 2.2, "webp": 1.7, "avif": 1.5, "avif, both fastest": 1.5}


def difference(ph, tb):
    """ph's PSNR less thumbor's, photo by photo (the median of the differences: the medians of the
    two sides can be different photos); thumbor's PNG is the reference's own pixels (Pillow's
    Lanczos, losslessly), an infinite PSNR."""
    if tb["psnr"] == float("inf"):
        return "thumbor's is the reference (∞)"
    pairs = [(ph["psnr_each"][n], tb["psnr_each"][n]) for n in ph.get("psnr_each", {}) if n in tb.get("psnr_each", {})]
    finite = [a - b for a, b in pairs if a != float("inf") and b != float("inf")]
    if not finite:
        return f"{ph['psnr'] - tb['psnr']:+.2f} dB"
    better = sum(1 for d in finite if d >= 0)
    return f"{statistics.median(finite):+.2f} dB (ph ≥ thumbor on {better} of {len(finite)})"


def write(results_path, report_path):
    r = json.load(open(results_path))
    corpora = r["corpora"]
    about = lambda a: (f"{a['photos']} photos, {', '.join(a['sizes'])}; {a['progressive']} progressive JPEGs; "
                       f"{a['icc']} with an embedded ICC profile")
    lines = [MARK_START, "## Serve: imgproxy's format matrix, on three corpora", "",
             f"Written by `scripts/bench-matrix {r['seconds']}` on {r['date']}. Machine: {r['machine']} (1-minute load "
             f"{r.get('load', 0):.1f} at the end). The workload of imgproxy's image-servers-benchmark: fit inside 512×512, "
             "the answer in the input's format (`encode { format = \"source\" }`), JPEG quality 80, WebP 75, AVIF 65, PNG "
             "at each server's default compression, 2 clients, every request a new source, no result cache. "
             f"pipelinehost runs its defaults; {r['thumbor']} runs one process with `ENGINE_THREADPOOL_SIZE` = cores, its "
             "production setting. Each format's two servers run side by side in one run, each timed in two halves in the "
             "order pipelinehost, thumbor, thumbor, pipelinehost, so that a machine that drifts weighs on both alike. "
             "CPU is the server's user + "
             "system time per request. Bytes and PSNR are medians over one answer per photo; PSNR is against an exact "
             "reference (the input's full decode in sRGB, resized with Lanczos in one step; `scripts/image_quality.py`).", ""]
    for name, corpus in corpora.items():
        lines += [f"- **{name}**: {about(corpus['about'])}; each set converted from them to 2040 px wide (DIV2K's width)."]
    lines += ["", "| corpus | input → output | req/s ph / thumbor | ratio | CPU ms per request ph / thumbor | "
              "KB ph / thumbor | PSNR dB ph / thumbor |", "|---|---|---|---|---|---|---|"]
    worst = {}
    for name, corpus in corpora.items():
        for fmt, row in corpus["rows"].items():
            ph, tb = row["pipelinehost"], row["thumbor"]
            ratio = ph["rps"] / tb["rps"]
            if fmt not in worst or ratio < worst[fmt][0]:
                worst[fmt] = (ratio, name, ph, tb)
            failed = ph["non2xx"] + ph["errors"] + tb["non2xx"] + tb["errors"]
            lines.append(f"| {name} | {fmt} | {ph['rps']:.1f} / {tb['rps']:.1f} | **{ratio:.2f}×** | "
                         f"{ph['cpu_per_request_ms']:.1f} / {tb['cpu_per_request_ms']:.1f} | {ph['bytes'] / 1024:.1f} / "
                         f"{tb['bytes'] / 1024:.1f} | {ph['psnr']:.2f} / {'∞' if tb['psnr'] == float('inf') else format(tb['psnr'], '.2f')} |"
                         + (f" ({failed} failed)" if failed else ""))
    lines += ["", "**The worst corpus per format**, which is the figure to quote, against issue 48's goals:", "",
              "| input → output | worst ratio (corpus) | goal | | bytes ph / thumbor | PSNR ph − thumbor, per photo (median) |",
              "|---|---|---|---|---|---|"]
    for fmt, (ratio, name, ph, tb) in worst.items():
        goal = TARGETS.get(fmt, 1.0)
        lines.append(f"| {fmt} | {ratio:.2f}× ({name}) | ≥ {goal}× | {'met' if ratio >= goal else '**missed**'} | "
                     f"{ph['bytes'] / tb['bytes']:.2f}× | {difference(ph, tb)} |")
    lines += ["", MARK_END]
    replace_section(report_path, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], [a.split("=", 1) for a in sys.argv[5:]])
