#!/usr/bin/env python3
"""The fit-in 512 half of scripts/bench-serve: the workload imgproxy's image-servers-benchmark
publishes (fit-in 512x512, JPEG quality 80, large photos, no result cache), at 2 and 8 clients,
pipelinehost with its profile's defaults against thumbor in its production setting.

  bench_fitin.py SECONDS BINARY THUMBOR PHOTOS RESULTS   measure (run with the thumbor venv's Python: Pillow)
  bench_fitin.py --shrink BINARY PHOTOS RESULTS          only redo what each shrink_on_load costs and buys
  bench_fitin.py --write RESULTS BENCHMARKS.md           write the fit-in section (between markers)

Besides req/s, CPU per request and peak RSS, it reports each server's median PSNR against an
exact reference (scripts/image_quality.py), the decoder's floor (libjpeg-turbo's djpeg at the
DCT scale pipelinehost decodes each photo at) and pipelinehost's time per stage (/metrics)."""
import json, os, platform, re, resource, subprocess, sys, threading, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import THUMBOR_POOL_CONF, free_port, origin, replace_section, wait_up, wrk  # noqa: E402
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- fit-in: written by scripts/bench-serve -->", "<!-- /fit-in -->"
BOX = 512

# The profile's defaults: no shrink_on_load, no cache stage (no result cache, as the benchmark runs).
PROFILE = """profile "fit" {
  fetch      { block_private = false },  -- the origin is on loopback
  decode     {},
  downsample { size = %d },
  encode     { format = "jpeg", quality = 80 },
}
""" % BOX


def jpeg_size(path):
    out = subprocess.run(["vipsheader", "-f", "width", path], capture_output=True, text=True).stdout
    height = subprocess.run(["vipsheader", "-f", "height", path], capture_output=True, text=True).stdout
    return int(out), int(height)


def dct_scale(width, height):
    """The scale the default (shrink_on_load = "speed") decodes at: the smallest of 1/8, 1/4,
    1/2 that still covers the box (ph_vips_thumbnail_buffer_draft)."""
    factor = max(width, height) / BOX
    return 8 if factor >= 8 else 4 if factor >= 4 else 2 if factor >= 2 else 1


def children_cpu(run):
    """CPU seconds the child processes that `run()` starts use."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def decoder_floor(paths, work, rounds=3):
    """CPU ms per image of djpeg decoding each photo at that scale to /dev/null, less djpeg's
    start-up (a run on an 8x8 JPEG), with glibc's huge-page tunable so that its coefficient
    buffers are mapped as pipelinehost maps them (ph_jpeg_memory.c)."""
    scales = {path: dct_scale(*jpeg_size(path)) for path in paths}
    tiny = os.path.join(work, "tiny.jpg")
    subprocess.run(["vips", "black", tiny, "8", "8"], check=True)
    env = {**os.environ, "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}
    djpeg = lambda path, scale: subprocess.run(["djpeg", "-scale", f"1/{scale}", "-outfile", "/dev/null", path], check=True, env=env)
    decodes = children_cpu(lambda: [djpeg(path, scales[path]) for _ in range(rounds) for path in paths])
    starts = children_cpu(lambda: [djpeg(tiny, 1) for _ in range(rounds) for _ in paths])
    return 1000 * (decodes - starts) / (rounds * len(paths))


def profile_shares(pid, seconds, work):
    """Shares of the server's CPU samples (perf, every thread) by what they did."""
    data = os.path.join(work, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "499", "-p", str(pid), "-o", data, "--", "sleep", str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso"],
                            capture_output=True, text=True).stdout
    shares = {}
    for line in report.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)", line)
        if not m:
            continue
        share, dso = float(m.group(1)), m.group(2)
        if dso.startswith("libjpeg"):
            # Its internal functions have no symbols to tell decode from encode; the answer's
            # encode is the encode stage's wall time below.
            part = "libjpeg: the decode, and the answer's encode"
        elif dso.startswith(("libvips", "liborc", "orcexec", "liblcms", "[unknown]")):
            part = "libvips: resize, colour (liborc's code, lcms2)"
        elif dso == "[kernel.kallsyms]":
            part = "kernel: page faults, sockets, scheduling"
        elif dso.startswith(("libc.", "libglib", "libgobject", "libgmodule")):
            part = "libc and GLib: copies, malloc, threads"
        else:
            part = "pipelinehost, Swift runtime, NIO, HTTP"
        shares[part] = shares.get(part, 0) + share
    total = sum(shares.values()) or 1
    return {part: share / total for part, share in shares.items()}


def stage_seconds(port):
    """pipelinehost's summed time and count per stage, from /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    sums = {m.group(1): float(m.group(2)) for m in re.finditer(r'pipelinehost_stage_duration_sum\{stage="([^"]+)"\} ([\d.e+-]+)', text)}
    counts = {m.group(1): int(float(m.group(2))) for m in re.finditer(r'pipelinehost_stage_duration_count\{stage="([^"]+)"\} ([\d.e+-]+)', text)}
    return {stage: (sums[stage], counts.get(stage, 0)) for stage in sums}


def quality(port, path_of, base, names, photos):
    """Median PSNR of one answer per photo against the exact reference."""
    from image_quality import median, psnr  # Pillow: only the measuring run has it (the thumbor venv)
    values = []
    for name in names:
        served = urllib.request.urlopen(f"http://127.0.0.1:{port}{path_of(f'{base}/quality/{name}')}", timeout=120).read()
        values.append(psnr(served, os.path.join(photos, name)))
    return median(values)


def shrink_modes(binary, photos, work, rounds=3):
    """What each shrink_on_load costs and buys: `pipelinehost run` over the photos, read locally,
    to fit-in 512 as a quality-80 JPEG and as PNG (no loss after the resize), in each mode. Returns
    the median CPU ms per photo over the rounds and the median PSNR against the exact reference."""
    from image_quality import median, psnr  # Pillow: only the measuring run has it (the thumbor venv)
    paths = sorted(os.path.join(photos, name) for name in os.listdir(photos) if name.endswith(".jpg"))
    modes = {}
    for mode in ["speed", "quality"]:
        for output, encode in [("jpeg q80", 'format = "jpeg", quality = 80'), ("png", 'format = "png"')]:
            profile = os.path.join(work, f"{mode}-{output.split()[0]}.lua")
            open(profile, "w").write('profile "fit" { fetch {}, decode {}, downsample { size = %d, shrink_on_load = "%s" }, '
                                     'encode { %s } }\n' % (BOX, mode, encode))
            out = os.path.join(work, f"out-{mode}-{output.split()[0]}")
            run = lambda: subprocess.run([binary, "run", profile, *paths, "--output-dir", out, "--no-progress"],
                                         stdout=subprocess.DEVNULL, check=True)
            cpu = median([children_cpu(run) for _ in range(rounds)])
            values = []
            for path in paths:
                stem = os.path.basename(path)[:-4]
                served = next(f for f in os.listdir(out) if f.startswith(stem + "-") and f.count("-") == stem.count("-") + 1)
                values.append(psnr(open(os.path.join(out, served), "rb").read(), path))
            modes[f"{mode}, {output}"] = {"cpu_ms": 1000 * cpu / len(paths), "psnr": median(values)}
            print(f"shrink_on_load {mode}, {output}: {modes[f'{mode}, {output}']}", file=sys.stderr)
    return modes


def measure(seconds, binary, thumbor, photos, results_path):
    base, names, _ = origin(photos)
    work = scratch(prefix="bench-fitin-")
    profile = os.path.join(work, "fit.lua")
    open(profile, "w").write(PROFILE)
    conf = os.path.join(work, "thumbor.conf")
    open(conf, "w").write(THUMBOR_POOL_CONF)  # one process, its thread pool: its production setting
    ph_port, tb_port = free_port(), free_port()
    ph = subprocess.Popen([binary, "serve", profile, "--port", str(ph_port), "--allow-unsigned", "--no-access-log"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "MALLOC_ARENA_MAX": "2"})
    tb = subprocess.Popen([thumbor, "-p", str(tb_port), "-i", "127.0.0.1", "-c", conf, "--processes", "1", "-l", "error"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ph_path = lambda source: "/unsafe/fit/plain/" + source
    tb_path = lambda source: f"/unsafe/fit-in/{BOX}x{BOX}/" + source
    paths = [os.path.join(photos, name) for name in names]
    results = {"date": time.strftime("%Y-%m-%d"), "seconds": seconds, "machine": f"{os.cpu_count()} cores, {platform.machine()}",
               "photos": len(names), "progressive": sum(name.endswith("-progressive.jpg") for name in names),
               "sizes": sorted({"%dx%d" % jpeg_size(p) for p in paths})}
    try:
        for port in [ph_port, tb_port]:
            wait_up(f"http://127.0.0.1:{port}")
        time.sleep(2)
        results["thumbor"] = subprocess.run([thumbor, "--version"], capture_output=True, text=True).stdout.strip()
        for name in names[:2]:
            for port, path in [(ph_port, ph_path), (tb_port, tb_path)]:
                subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}{path(f'{base}/warm/{name}')}"])
        distinct = [f"{base}/u/{{n}}/{name}" for name in names]
        stages_before = stage_seconds(ph_port)
        for clients in [2, 8]:
            for tool, port, path, pid in [("pipelinehost", ph_port, ph_path, ph.pid), ("thumbor", tb_port, tb_path, tb.pid)]:
                key = f"{tool}, {clients} clients"
                results[key] = wrk(f"http://127.0.0.1:{port}", ["x"] + [path(d) for d in distinct], clients, seconds, pid=pid)
                results[key].pop("raw")
                print(f"fit-in {key}: {results[key]['rps']:.1f} req/s, {results[key]['cpu_per_request_ms']:.1f} ms CPU per request",
                      file=sys.stderr)
        stages_after = stage_seconds(ph_port)
        # Where pipelinehost's CPU goes: perf samples over one more 2-client run (not timed).
        shares = {}
        sampler = threading.Thread(target=lambda: shares.update(profile_shares(ph.pid, seconds, work)))
        sampler.start()
        wrk(f"http://127.0.0.1:{ph_port}", ["x"] + [ph_path(d) for d in distinct], 2, seconds, pid=ph.pid)
        sampler.join()
        results["cpu shares"] = shares
        results["stages ms"] = {stage: 1000 * (total - stages_before.get(stage, (0, 0))[0]) / max(1, count - stages_before.get(stage, (0, 0))[1])
                                for stage, (total, count) in stages_after.items()}
        results["psnr"] = {"pipelinehost": quality(ph_port, ph_path, base, names, photos),
                           "thumbor": quality(tb_port, tb_path, base, names, photos)}
        print(f"fit-in PSNR: {results['psnr']}", file=sys.stderr)
    finally:
        for process in [ph, tb]:
            process.terminate()
        for process in [ph, tb]:
            process.wait(30)
    results["decoder floor ms"] = decoder_floor(paths, work)
    results["shrink modes"] = shrink_modes(binary, photos, work)
    results["scales"] = sorted({f"1/{dct_scale(*jpeg_size(p))}" for p in paths})
    results["load"] = os.getloadavg()[0]
    json.dump(results, open(results_path, "w"), indent=1)


def write(results_path, report_path):
    r = json.load(open(results_path))
    ok = lambda met: "met" if met else "**missed**"
    floor = r["decoder floor ms"]
    lines = [MARK_START, "## Serve: fit-in 512, the benchmark peers publish", "",
             f"Written by `scripts/bench-serve {r['seconds']}` on {r['date']}. Machine: {r['machine']} (1-minute load "
             f"{r['load']:.1f} at the end). imgproxy's image-servers-benchmark workload: fit inside 512×512, JPEG quality 80, "
             f"no result cache, every request a new source. {r['photos']} photos ({', '.join(r['sizes'])}; {r['progressive']} of them "
             "progressive), fetched from one loopback origin. pipelinehost runs its profile's defaults (no `shrink_on_load`); "
             f"{r['thumbor']} runs one process with `ENGINE_THREADPOOL_SIZE = {r['machine'].split()[0]}`, its documented "
             "production setting. CPU is the server's user + system time over the run.", "",
             "| run | req/s | p50 | p99 | non-2xx | server CPU per request | peak RSS |", "|---|---|---|---|---|---|---|"]
    row = lambda label, s: (f"| {label} | {s['rps']:.1f} | {s['p50']:.1f} ms | {s['p99']:.1f} ms | {s['non2xx'] + s['errors']} | "
                            f"{s['cpu_per_request_ms']:.1f} ms | {s['peak_rss_mb']:.0f} MB |")
    for clients in [2, 8]:
        lines += [row(f"{clients} clients: pipelinehost", r[f"pipelinehost, {clients} clients"]),
                  row(f"{clients} clients: thumbor", r[f"thumbor, {clients} clients"])]
    stages = r["stages ms"]
    ph2 = r["pipelinehost, 2 clients"]
    lines += ["", f"**Quality.** Median PSNR of one answer per photo against an exact reference (the full decode, resized "
              f"with Lanczos to the answer's size in one step; `scripts/image_quality.py`): pipelinehost "
              f"**{r['psnr']['pipelinehost']:.2f} dB**, thumbor **{r['psnr']['thumbor']:.2f} dB**.", ""]
    if "shrink modes" in r:
        lines += ["**What each `shrink_on_load` costs and buys**: `pipelinehost run` over the same photos read locally, "
                  "fit-in 512, as a quality-80 JPEG and as PNG (no loss after the resize); median CPU per photo over 3 "
                  "rounds, with process start-up, and median PSNR against the same reference.", "",
                  "| mode, output | CPU per photo | median PSNR |", "|---|---|---|"]
        lines += [f"| {mode} | {x['cpu_ms']:.1f} ms | {x['psnr']:.2f} dB |" for mode, x in r["shrink modes"].items()]
        lines += [""]
    lines += [
              f"**Where a request's CPU goes** (pipelinehost, 2 clients, {ph2['cpu_per_request_ms']:.1f} ms per request): "
              "`perf` samples of every thread of the server over one more run, by library. The decoder's floor is "
              f"libjpeg-turbo's `djpeg` decoding the same photos at the same DCT scale ({', '.join(r['scales'])}) to /dev/null, "
              "less its start-up, with glibc's huge-page tunable so that it maps its coefficients as pipelinehost does: "
              f"**{floor:.1f} ms** of CPU per photo. Wall time per stage from `/metrics` (`pipelinehost_stage_duration`, "
              "both runs) is beside it; the decode happens inside `downsample` (shrink-on-load).", "",
              "| where | share | ms per request |", "|---|---|---|"]
    shares = r.get("cpu shares", {})
    lines += [f"| {part} | {share * 100:.1f}% | {share * ph2['cpu_per_request_ms']:.1f} |"
              for part, share in sorted(shares.items(), key=lambda item: -item[1])]
    lines += ["", "| stage | wall ms per request |", "|---|---|"]
    lines += [f"| {stage} | {ms:.2f} |" for stage, ms in sorted(stages.items(), key=lambda item: -item[1])]
    lines += ["",
              "| target | result | | where it stands, and why |", "|---|---|---|---|"]
    shares = r.get("cpu shares", {})
    jpeg = next((share for part, share in shares.items() if part.startswith("libjpeg")), 0)
    for clients in [2, 8]:
        ph, tb = r[f"pipelinehost, {clients} clients"], r[f"thumbor, {clients} clients"]
        lines.append(f"| {clients} clients: ≥ 1.1× thumbor's req/s | {ph['rps'] / tb['rps']:.2f}× ({ph['rps']:.1f} vs {tb['rps']:.1f}); "
                     f"CPU per request {ph['cpu_per_request_ms'] / tb['cpu_per_request_ms']:.2f}× thumbor's | {ok(ph['rps'] >= 1.1 * tb['rps'])} | "
                     "Both decode at the same DCT scale. The progressive photos' AC scans, which 1/8 never reads, "
                     "pipelinehost does not decode at all (docs/LIMITS.md); around the decoder it keeps libjpeg's "
                     "coefficient buffers on huge pages (no page faults or kernel zeroing), resizes with liborc, and makes "
                     "no per-request copies. |")
    lines += [f"| median PSNR ≥ thumbor's | {r['psnr']['pipelinehost']:.2f} vs {r['psnr']['thumbor']:.2f} dB | "
              f"{ok(r['psnr']['pipelinehost'] >= r['psnr']['thumbor'])} | Equal: the same DCT scale as thumbor's draft mode, "
              "and where that scale is the answer's size (4096 to 512) the same pixels. `shrink_on_load = \"quality\"` "
              "decodes at twice the box: a little more PSNR after a quality-80 JPEG, more before an encode, for more CPU "
              "(the table above). |",
              f"| CPU per request ≤ 1.25× the decoder's floor (2 clients) | {ph2['cpu_per_request_ms'] / floor:.2f}× "
              f"({ph2['cpu_per_request_ms']:.1f} vs {floor:.1f} ms) | {ok(ph2['cpu_per_request_ms'] <= 1.25 * floor)} | "
              f"libjpeg is {jpeg * 100:.0f}% of the server's CPU. The floor's djpeg reads every scan of the progressive "
              "photos and maps its buffers afresh for each photo; pipelinehost skips the scans 1/8 never reads and keeps "
              "its buffers, so it can go below the floor. |", "", MARK_END]
    replace_section(report_path, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--shrink":
        results = json.load(open(sys.argv[4]))
        results["shrink modes"] = shrink_modes(sys.argv[2], sys.argv[3], scratch(prefix="bench-shrink-"))
        json.dump(results, open(sys.argv[4], "w"), indent=1)
    else:
        measure(int(sys.argv[1]), *sys.argv[2:6])
