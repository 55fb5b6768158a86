"""AVIF effort against bytes, PSNR and CPU (see scripts/bench-avif-effort).

Each photo is shrunk to 512 px and made sRGB once (the reference); each quality and effort
encodes it with `vips heifsave` (the best CPU of two runs, less libvips' start-up) and decodes it
back for PSNR over R, G and B against the reference."""
import math, os, statistics, subprocess, sys, tempfile

import numpy

corpus, qualities, efforts = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
photos = sorted(os.path.join(corpus, name) for name in os.listdir(corpus) if name.endswith(".jpg"))
work = tempfile.mkdtemp()


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

print(f"{len(photos)} photos from {corpus}, 512 px, libvips heifsave (aom)")
print("| quality | effort | CPU ms (median) | KB (median) | PSNR dB (median) | PSNR dB (worst) |")
print("|---|---|---|---|---|---|")
for (quality, effort), found in sorted(rows.items()):
    print(
        f"| {quality} | {effort} | {statistics.median(r[0] for r in found) * 1000:.0f} "
        f"| {statistics.median(r[1] for r in found) / 1024:.1f} | {statistics.median(r[2] for r in found):.2f} "
        f"| {min(r[2] for r in found):.2f} |")
