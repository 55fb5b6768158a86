"""The measuring half of scripts/bench-unseen: Performance 2's batch figures on a corpus the
project never tuned on.

Every command runs over the whole corpus in one process, read locally, with no cache; the
commands alternate within each round, and each figure is the median over the rounds of that
command's whole-process wall time and CPU (user + system), with the ratio taken round by round.

  bench_unseen.py ROUNDS BIN CORPUS RESULTS.json
  bench_unseen.py --write RESULTS.json BENCHMARKS.md
"""
import json, os, resource, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import replace_section  # noqa: E402
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- unseen: written by scripts/bench-unseen -->", "<!-- /unseen -->"
GOALS = {"crop": 0.6, "blur": 1.15}


def timed(command):
    """Wall seconds and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(rounds, binary, corpus, results_path):
    photos = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".jpg"))
    work = scratch(prefix="bench-unseen-")
    quality = os.path.join(work, "thumbnail-quality.lua")
    text = open("examples/thumbnail.lua").read()
    marker = 'downsample { size = 300, fit = "cover" }'
    if marker not in text:
        sys.exit("bench-unseen: examples/thumbnail.lua no longer has " + marker)
    open(quality, "w").write(text.replace(marker, marker[:-2] + ', shrink_on_load = "quality" }'))

    def run(profile, name):
        out = os.path.join(work, name)
        os.makedirs(out, exist_ok=True)
        return [binary, "run", profile, "--no-cache", "--output-dir", out] + photos

    vt_out = os.path.join(work, "vipsthumbnail")
    os.makedirs(vt_out)
    commands = {
        "thumbnail": run("examples/thumbnail.lua", "thumbnail"),
        "equal": run(quality, "equal"),
        "vipsthumbnail": ["vipsthumbnail"] + photos + ["-s", "300x300", "--smartcrop", "centre",
                                                        "-o", vt_out + "/%s.jpg[Q=82,strip]"],
        "blurred": run("examples/blurred-background.lua", "blurred"),
    }
    samples = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(timed(command))

    def ratio(a, b, index):
        return statistics.median(x[index] / y[index] for x, y in zip(samples[a], samples[b]))

    figures = {name: {"wall": statistics.median(s[0] for s in runs), "cpu": statistics.median(s[1] for s in runs)}
               for name, runs in samples.items()}
    sizes = subprocess.run(["vipsheader"] + photos, capture_output=True, text=True).stdout.split("\n")
    largest = sum(1 for line in sizes if " 5120x2880 " in line)
    results = {"date": time.strftime("%Y-%m-%d"), "rounds": rounds, "photos": len(photos), "largest": largest,
               "figures": figures,
               "crop_wall": ratio("thumbnail", "vipsthumbnail", 0), "crop_cpu": ratio("thumbnail", "vipsthumbnail", 1),
               "equal_wall": ratio("equal", "vipsthumbnail", 0), "equal_cpu": ratio("equal", "vipsthumbnail", 1),
               "blur_cpu": ratio("blurred", "thumbnail", 1), "blur_wall": ratio("blurred", "thumbnail", 0)}
    json.dump(results, open(results_path, "w"), indent=1)
    print(json.dumps(results, indent=1))


def write(results_path, benchmarks):
    r = json.load(open(results_path))
    f = r["figures"]

    def met(value, goal):
        return "met" if value <= goal else "**missed**"

    rows = [
        ("pipelinehost, `examples/thumbnail.lua` as it is (300 px cover, speed shrink-on-load)", "thumbnail"),
        ("pipelinehost, the same with `shrink_on_load = \"quality\"` (vipsthumbnail's shrink: equal work)", "equal"),
        ("vipsthumbnail `-s 300x300 --smartcrop centre`", "vipsthumbnail"),
        ("pipelinehost, `examples/blurred-background.lua`", "blurred"),
    ]
    lines = [
        MARK_START,
        "## Batches on photos the project never tuned on",
        "",
        f"Written by `scripts/bench-unseen {r['rounds']}` on {r['date']}: every distinct JPEG in Debian's "
        f"plasma-workspace-wallpapers ({r['photos']} photos, {r['largest']} of them 5120×2880, the rest from 3200×2000 "
        "down to 400 px previews; `scripts/make-plasma-corpus`), read locally, no cache, each command one process "
        f"over the whole set, the commands alternating within each of {r['rounds']} rounds. Medians; the ratios are "
        "taken round by round.",
        "",
        "| command | wall s | CPU s |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {f[key]['wall']:.2f} | {f[key]['cpu']:.2f} |" for label, key in rows]
    lines += [
        "",
        "| target (issue 48, from Performance 2) | measured | |",
        "|---|---|---|",
        f"| 300 px crops: wall ≤ 0.6× vipsthumbnail | {r['crop_wall']:.2f}× (CPU {r['crop_cpu']:.2f}×) | "
        f"{met(r['crop_wall'], GOALS['crop'])} |",
        f"| the same at equal work | {r['equal_wall']:.2f}× (CPU {r['equal_cpu']:.2f}×) | "
        f"{met(r['equal_wall'], GOALS['crop'])} |",
        f"| blurred background: CPU ≤ 1.15× the thumbnail's | {r['blur_cpu']:.2f}× (wall {r['blur_wall']:.2f}×) | "
        f"{met(r['blur_cpu'], GOALS['blur'])} |",
        "",
        MARK_END,
    ]
    replace_section(benchmarks, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4])
