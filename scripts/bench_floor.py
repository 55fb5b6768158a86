"""The measuring half of scripts/bench-floor: pipelinehost's CPU per JPEG against the codec floor.

For each corpus: the CPU pipelinehost `run` spends per photo on fit-in 512, JPEG q80 (whole
process, its start-up taken off), against libjpeg-turbo's own tools doing the codec work alone:
djpeg decoding at the DCT scale shrink-on-load picks, plus cjpeg encoding the 512 px answer with
the same quality and optimized Huffman tables. The ratio is how far above that floor the pipeline
runs. perf then splits pipelinehost's CPU by the library it is spent in.

  bench_floor.py BIN RESULTS.json NAME=DIR ...    (DIR holds the corpus' JPEGs)
  bench_floor.py --write RESULTS.json BENCHMARKS.md
"""
import json, os, re, resource, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import replace_section  # noqa: E402

BOX, QUALITY, COPIES, ROUNDS = 512, 80, 5, 5
MARK_START, MARK_END = "<!-- floor: written by scripts/bench-floor -->", "<!-- /floor -->"
PROFILE = """profile "fit" {
  fetch      {},
  decode     {},
  downsample { size = %d },
  encode     { format = "jpeg", quality = %d },
}
""" % (BOX, QUALITY)

# perf's shared objects, by what they are. libjpeg-turbo's SIMD code has no exported symbols,
# so its decode and encode are one bucket; the floor's two figures say how they divide.
BUCKETS = [("libjpeg", "libjpeg"), ("libvips", "libvips"), ("lcms2", "lcms"), ("glib", "libg"),
           ("kernel", "kernel"), ("libc", "libc.so"), ("loader", "ld-linux"), ("Swift", "swift")]


def cpu_of(command, **kwargs):
    """CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def header(path, field):
    return subprocess.run(["vipsheader", "-f", field, path], capture_output=True, text=True).stdout.strip()


def jpeg_scale(width, height):
    """The DCT scale shrink-on-load takes for fit-in BOX: the largest of 1/8, 1/4, 1/2 that
    leaves the image at least BOX on its longer fit."""
    shrink = max(width / BOX, height / BOX)
    return next((s for s in (8, 4, 2) if shrink >= s), 1)


def floor_per_photo(photo, work):
    """djpeg at the chosen scale plus cjpeg of the 512 px answer: the codec's own CPU, median of ROUNDS."""
    width, height = int(header(photo, "width")), int(header(photo, "height"))
    scale = jpeg_scale(width, height)
    small = os.path.join(work, "answer.ppm")
    subprocess.run(["vips", "thumbnail", photo, small, str(BOX), "--height", str(BOX)], check=True)
    times = []
    for _ in range(ROUNDS):
        decode = cpu_of(["djpeg", "-scale", f"1/{scale}", "-ppm", photo], stdout=subprocess.DEVNULL)
        encode = cpu_of(["cjpeg", "-quality", str(QUALITY), "-optimize", small], stdout=subprocess.DEVNULL)
        times.append((decode, encode))
    times.sort(key=sum)
    return times[len(times) // 2], scale


def pipeline_per_photo(binary, profile, photos, work):
    """pipelinehost run over COPIES copies of every photo (distinct names, so nothing is shared),
    no cache; CPU per photo with the start-up (a run of one tiny image) taken off."""
    copies = os.path.join(work, "copies")
    os.makedirs(copies)
    names = []
    for k in range(COPIES):
        for photo in photos:
            name = os.path.join(copies, f"c{k}-{os.path.basename(photo)}")
            shutil.copyfile(photo, name)
            names.append(name)
    listing = os.path.join(work, "list.txt")
    open(listing, "w").write("\n".join(names) + "\n")
    tiny = os.path.join(work, "tiny.jpg")
    subprocess.run(["vips", "black", tiny + "[Q=80]", "16", "16"], check=True)
    out = os.path.join(work, "out")
    run = [binary, "run", profile, "--no-cache", "--output-dir", out]
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    startup = statistics.median(cpu_of(run + [tiny], **quiet) for _ in range(ROUNDS))
    batch = statistics.median(cpu_of(run + ["--input-list", listing], **quiet) for _ in range(ROUNDS))
    return (batch - startup) / len(names), run + ["--input-list", listing]


def where(command, work):
    """perf's split of a run's CPU by shared object, in percent."""
    data = os.path.join(work, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "999", "-o", data, "--"] + command, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso", "--stdio",
                             "--percent-limit", "0"], capture_output=True, text=True).stdout
    shares = {name: 0.0 for name, _ in BUCKETS} | {"rest": 0.0}
    for line in report.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+(.+?)\s*$", line)
        if not match:
            continue
        percent, dso = float(match[1]), match[2]
        shares[next((name for name, part in BUCKETS if part in dso), "rest")] += percent
    return shares


def measure(binary, results, corpora):
    rows = []
    for spec in corpora:
        name, directory = spec.split("=", 1)
        photos = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".jpg"))
        with tempfile.TemporaryDirectory() as work:
            profile = os.path.join(work, "fit.lua")
            open(profile, "w").write(PROFILE)
            floors = [floor_per_photo(photo, work) for photo in photos]
            decode = statistics.mean(f[0][0] for f in floors)
            encode = statistics.mean(f[0][1] for f in floors)
            ph, command = pipeline_per_photo(binary, profile, photos, work)
            shares = where(command, work)
        scales = sorted({f[1] for f in floors})
        rows.append({"corpus": name, "photos": len(photos), "scales": scales, "ph_ms": ph * 1000,
                     "floor_decode_ms": decode * 1000, "floor_encode_ms": encode * 1000,
                     "ratio": ph / (decode + encode), "shares": shares})
        print(f"{name}: pipelinehost {ph * 1000:.1f} ms CPU per photo, floor {1000 * (decode + encode):.1f} "
              f"(decode {decode * 1000:.1f} + encode {encode * 1000:.1f}): {ph / (decode + encode):.2f}x", file=sys.stderr)
    json.dump(rows, open(results, "w"), indent=1)


def write(results, page):
    rows = sorted(json.load(open(results)), key=lambda r: -r["ratio"])
    lines = [MARK_START, "",
             "| corpus | photos | DCT scale | pipelinehost CPU ms/photo | floor: djpeg + cjpeg ms | ratio | "
             "where pipelinehost's CPU goes (perf): " + " / ".join(name for name, _ in BUCKETS) + " / rest |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        split = " / ".join(f"{r['shares'][name]:.0f}%" for name, _ in BUCKETS + [("rest", "")])
        lines.append(f"| {r['corpus']} | {r['photos']} | {', '.join('1/%d' % x for x in r['scales'])} | {r['ph_ms']:.1f} | "
                     f"{r['floor_decode_ms'] + r['floor_encode_ms']:.1f} ({r['floor_decode_ms']:.1f} + {r['floor_encode_ms']:.1f}) | "
                     f"**{r['ratio']:.2f}×** | {split} |")
    worst = rows[0]
    lines += ["", f"Worst: {worst['corpus']}, {worst['ratio']:.2f}× the floor (goal ≤ 1.5×).", "", MARK_END]
    replace_section(page, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(sys.argv[1], sys.argv[2], sys.argv[3:])
