"""AVIF effort against bytes, PSNR and CPU on several corpora (see scripts/bench-avif-effort).

Each photo is shrunk to 512 px and made sRGB once (the reference); each quality and effort
encodes it with `vips heifsave` (the best CPU of two runs, less libvips' start-up) and decodes it
back for PSNR over R, G and B against the reference."""
import math, os, statistics, subprocess, sys

import numpy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scratch import scratch  # noqa: E402

qualities, efforts = sys.argv[1].split(","), sys.argv[2].split(",")
corpora = [argument.split("=", 1) for argument in sys.argv[3:]]
work = scratch()


def cpu(args):
    """CPU seconds (user and system) of one run."""
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert status == 0, args
    return usage.ru_utime + usage.ru_stime


def samples(path):
    raw = path + ".raw"
    subprocess.run(["vips", "rawsave", path, raw], check=True, stderr=subprocess.DEVNULL)
    return numpy.fromfile(raw, dtype=numpy.uint8).astype(numpy.float64)


def measure(photos):
    """Per (quality, effort): a (CPU seconds, bytes, PSNR) row for each photo."""
    rows = {}
    for index, photo in enumerate(photos):
        small, reference = f"{work}/small.v", f"{work}/ref{index}.v"
        subprocess.run(["vips", "thumbnail", photo, small, "512"], check=True, stderr=subprocess.DEVNULL)
        subprocess.run(["vips", "colourspace", small, reference, "srgb"], check=True, stderr=subprocess.DEVNULL)
        expected = samples(reference)
        startup = min(cpu(["vips", "copy", reference, f"{work}/copy.v"]) for _ in range(2))
        for quality in qualities:
            for effort in efforts:
                out = f"{work}/out.avif"
                args = ["vips", "heifsave", reference, out, "--Q", quality, "--effort", effort, "--compression", "av1"]
                spent = min(cpu(args) for _ in range(2)) - startup
                error = ((samples(out) - expected) ** 2).mean()
                rows.setdefault((int(quality), int(effort)), []).append(
                    (spent, os.path.getsize(out), 10 * math.log10(255**2 / error)))
    return rows


medians = {}
for name, corpus in corpora:
    photos = sorted(os.path.join(corpus, file) for file in os.listdir(corpus) if file.endswith(".jpg"))
    rows = measure(photos)
    print(f"\n{name}: {len(photos)} photos from {corpus}, 512 px, libvips heifsave (aom)\n")
    print("| quality | effort | CPU ms (median) | KB (median) | PSNR dB (median) | PSNR dB (worst) |")
    print("|---|---|---|---|---|---|")
    for (quality, effort), found in sorted(rows.items()):
        cpu_ms = statistics.median(r[0] for r in found) * 1000
        kb = statistics.median(r[1] for r in found) / 1024
        db = statistics.median(r[2] for r in found)
        medians.setdefault(name, {})[(quality, effort)] = (cpu_ms, kb, db)
        print(f"| {quality} | {effort} | {cpu_ms:.0f} | {kb:.1f} | {db:.2f} | {min(r[2] for r in found):.2f} |")

# Effort 2 against libvips' default, effort 4, per corpus: CPU at the same quality, and bytes
# at equal PSNR (the effort-2 quality whose PSNR is nearest effort 4's at quality 82).
print("\n| corpus | CPU, effort 4 / effort 2 at q82 | effort 2 at equal PSNR: quality, bytes against effort 4 q82 |")
print("|---|---|---|")
for name, table in medians.items():
    four = table.get((82, 4))
    two = table.get((82, 2))
    if not four or not two:
        continue
    nearest = min((q for (q, e) in table if e == 2), key=lambda q: abs(table[(q, 2)][2] - four[2]))
    match = table[(nearest, 2)]
    print(f"| {name} | {four[0] / two[0]:.1f}x | q{nearest} ({match[2]:.2f} dB against {four[2]:.2f}): "
          f"{match[1] / four[1]:.2f}x the bytes, {four[0] / match[0]:.1f}x less CPU |")
