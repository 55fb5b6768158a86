"""The measuring half of scripts/bench-animation: issue 54's animation figures.

Animations are pans across real photos, made here with Pillow. Every tool resizes each one to
200 px (fit: within 200 x 200; cover: a centred 200 x 200 crop) in a process of its own, read
from and written to local files; pipelinehost also runs BATCH copies in one process, as serve would. A run cut short (RESULTS.json holds its rows) is resumed. The commands alternate within each round; each figure is the
median over the rounds, and the ratios are taken round by round. Quality: each output frame's
PSNR (RGB, composited on black) against the source frame resized by Pillow's Lanczos from the
decoded source, before any palette, in floats (a channel at a time, clipped once: Pillow's 8-bit
resize rounds between its passes, which favours a tool whose passes run in its order): the
median over frames, then the worst over animations.

  bench_animation.py ROUNDS BIN CORPUS RESULTS.json     (with Pillow and numpy: thumbor's venv)
  bench_animation.py --write RESULTS.json BENCHMARKS.md
"""
import json, os, re, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import replace_section  # noqa: E402
from bench_unseen import timed  # noqa: E402
from bench_scratch import scratch  # noqa: E402

MARK_START, MARK_END = "<!-- animation: written by scripts/bench-animation -->", "<!-- /animation -->"
SHAPES = [(24, 480, 270), (120, 480, 270), (250, 640, 360)]
SIZE = 200
BATCH = 4  # animations a process runs for the "in one process" columns
IMAGEMAGICK = "convert-im6.q16"
# Each kind of input and the tool that writes it: GIFs by Pillow (every frame a full screen with
# a table of its own), by ImageMagick and by ffmpeg (frames cut to what changed), a screen
# recording written by ffmpeg, and WebP by Pillow.
MAKERS = {"gif": "pillow", "gif-im": "imagemagick", "gif-ff": "ffmpeg", "gif-screen": "ffmpeg", "webp": "pillow"}
KINDS = list(MAKERS)


def make_pan(photo, frames, width, height, path, maker="pillow"):
    """`frames` windows of `width` x `height` moving left to right across `photo` (scaled so the
    pan fits), 40 ms each, looping for ever. Pillow's GIF frames each cover the screen with a
    table of their own; `maker` "imagemagick" or "ffmpeg" writes the other common shapes
    (write_gif)."""
    from PIL import Image
    image = Image.open(photo).convert("RGB")
    scale = max(height / image.height, (width + frames * 2) / image.width)
    if scale > 1 or image.height > 2 * height:
        image = image.resize((round(image.width * scale * 1.5), round(image.height * scale * 1.5)), Image.LANCZOS)
    step = max(1, (image.width - width) // max(1, frames - 1))
    top = (image.height - height) // 2
    pictures = [image.crop((k * step, top, k * step + width, top + height)) for k in range(frames)]
    if maker == "pillow":
        pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=40, loop=0,
                         **({"quality": 80} if path.endswith(".webp") else {}))
    else:
        write_gif(pictures, path, maker)


def make_screen(seed, frames, width, height, path):
    """A screen recording: a terminal window where text is typed, several characters a frame, with
    a blinking cursor and a scroll when the window fills; flat colours and sharp text, little of
    the screen changing from frame to frame. Written by ffmpeg, as screen recorders do. `seed`
    picks the theme and the text."""
    from PIL import Image, ImageDraw, ImageFont
    themes = [((30, 30, 36), [(220, 220, 220), (120, 200, 120), (230, 180, 90), (110, 160, 240)]),
              ((250, 250, 245), [(30, 30, 30), (170, 40, 60), (20, 110, 60), (40, 70, 170)]),
              ((0, 43, 54), [(147, 161, 161), (181, 137, 0), (42, 161, 152), (211, 54, 130)])]
    background, inks = themes[seed % len(themes)]
    source = open("/usr/share/common-licenses/GPL-3").read().splitlines()[seed * 40:]  # fixed text on Debian
    font = ImageFont.load_default(size=max(10, height // 22))
    line_height = round(font.size * 1.3)
    rows = (height - 28) // line_height
    typed, pictures = 0, []
    text = [line[: width // max(1, font.size // 2)] for line in source if line.strip()]
    for k in range(frames):
        typed += 6 + (k * 7 + seed) % 7
        lines, left = [], typed
        for line in text:
            if left <= 0:
                break
            lines.append(line[:left])
            left -= len(line) + 1
        picture = Image.new("RGB", (width, height), background)
        draw = ImageDraw.Draw(picture)
        draw.rectangle((0, 0, width, 20), fill=tuple(c // 2 + 40 for c in background))
        for i, colour in enumerate([(237, 106, 94), (245, 191, 79), (98, 197, 84)]):
            draw.ellipse((8 + 16 * i, 5, 18 + 16 * i, 15), fill=colour)
        shown, first = lines[-rows:], max(0, len(lines) - rows)
        for i, line in enumerate(shown):
            draw.text((8, 26 + i * line_height), line, font=font, fill=inks[(first + i) % len(inks)])
        if k % 12 < 6 and shown:
            x = 8 + draw.textlength(shown[-1], font=font)
            y = 26 + (len(shown) - 1) * line_height
            draw.rectangle((x + 1, y, x + font.size // 2, y + font.size), fill=inks[0])
        pictures.append(picture)
    write_gif(pictures, path, "ffmpeg")


def write_gif(pictures, path, maker):
    """A GIF of `pictures`, 40 ms each, looping for ever, by ImageMagick's `-layers optimize` or
    by ffmpeg's palettegen and paletteuse (one table for all frames, each frame cut to what
    changed, with what did not change left transparent: the shape of GIFs made from video)."""
    with tempfile.TemporaryDirectory() as frames_dir:
        names = []
        for k, picture in enumerate(pictures):
            names.append(os.path.join(frames_dir, f"{k:04d}.png"))
            picture.save(names[-1])
        if maker == "imagemagick":
            command = [IMAGEMAGICK, "-delay", "4", "-loop", "0"] + names + ["-layers", "optimize", path]
        else:
            command = ["ffmpeg", "-v", "error", "-y", "-framerate", "25", "-i", os.path.join(frames_dir, "%04d.png"),
                       "-filter_complex", "[0:v]split[a][b];[a]palettegen=stats_mode=diff[p];"
                       "[b][p]paletteuse=diff_mode=rectangle", "-loop", "0", path]
        subprocess.run(command, check=True)


def frames_of(path):
    """Every frame of an animation, composed as a viewer shows it, as float RGB arrays."""
    import numpy
    from PIL import Image, ImageSequence
    image = Image.open(path)
    return [numpy.asarray(frame.convert("RGBA"), dtype=numpy.float64)[..., :3] * 1.0
            for frame in ImageSequence.Iterator(image)]


def references(source, fit):
    """The decoded source frames, for cover centre-cropped to a square, with no palette: each is
    resized to the output's frame size in `psnr`, so every tool's rounding of the size is met."""
    from PIL import Image, ImageSequence
    out = []
    for frame in ImageSequence.Iterator(Image.open(source)):
        rgb = frame.convert("RGB")
        if fit == "cover":
            w, h = rgb.size
            side = min(w, h)
            rgb = rgb.crop(((w - side) // 2, (h - side) // 2, (w - side) // 2 + side, (h - side) // 2 + side))
        out.append(rgb)
    return out


def psnr(output, reference):
    """The median over frames of each frame's PSNR against its source frame resized by Pillow's
    Lanczos to the output's size, or None when the frame counts differ. The reference is resized
    in floats, a channel at a time (mode F), and clipped once at the end: Pillow's 8-bit resize
    rounds between its horizontal and vertical passes, which favours a tool that runs its passes
    in the same order."""
    import numpy
    from PIL import Image
    got = frames_of(output)
    if len(got) != len(reference):
        return None
    scores = []
    for frame, source in zip(got, reference):
        size = (frame.shape[1], frame.shape[0])
        channels = [numpy.asarray(c.convert("F").resize(size, Image.LANCZOS), dtype=numpy.float64) for c in source.split()]
        exact = numpy.clip(numpy.stack(channels, axis=2), 0, 255)
        scores.append(10 * numpy.log10(255 ** 2 / max(1e-9, float(numpy.mean((frame - exact) ** 2)))))
    return statistics.median(scores)


def commands(binary, source, kind, fit, out, profiles):
    """Each tool's command for one animation: pipelinehost, gifsicle (GIF only), ImageMagick."""
    name = os.path.splitext(os.path.basename(source))[0]
    output = kind.split("-")[0]
    result = {"pipelinehost": [binary, "run", profiles[(output, fit)], "--no-cache", "--output",
                               f"{out}/ph-{name}.{output}", source]}
    if output == "gif":
        if fit == "fit":
            result["gifsicle"] = ["gifsicle", "--resize-fit", f"{SIZE}x{SIZE}", source, "-o", f"{out}/gs-{name}.gif"]
        else:
            from PIL import Image
            w, h = Image.open(source).size
            side = min(w, h)
            box = f"{(w - side) // 2},{(h - side) // 2}+{side}x{side}"
            result["gifsicle"] = ["gifsicle", "--crop", box, "--resize", f"{SIZE}x{SIZE}", source,
                                  "-o", f"{out}/gs-{name}.gif"]
    geometry = [f"{SIZE}x{SIZE}"] if fit == "fit" else [f"{SIZE}x{SIZE}^", "-gravity", "center", "-extent",
                                                        f"{SIZE}x{SIZE}"]
    if kind in ("gif", "webp"):  # ImageMagick's rows are the Pillow-made ones: it is the slowest by far
        result["imagemagick"] = [IMAGEMAGICK, source, "-coalesce", "-resize"] + geometry + ["-layers", "optimize",
                                                                                           f"{out}/im-{name}.{kind}"]
    return result


def batch_command(binary, source, kind, fit, out, profiles):
    """pipelinehost as serve runs it: one process for BATCH copies of the animation, one after the
    other (--jobs 1), so its start-up is paid once; each figure is the batch's time over BATCH."""
    stem, extension = os.path.splitext(source)
    copies = []
    for index in range(BATCH):
        copy = f"{stem}-copy{index}{extension}"
        if not os.path.exists(copy):
            os.link(source, copy)
        copies.append(copy)
    output = kind.split("-")[0]
    return [binary, "run", profiles[(output, fit)], "--no-cache", "--jobs", "1", "--output-dir",
            os.path.join(out, "batch")] + copies


def output_of(command):
    return command[command.index("--output") + 1] if "--output" in command else command[-1]


def measure(rounds, binary, corpus, results_path):
    photos = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".jpg"))
    chosen = [photos[0], photos[len(photos) // 2], photos[-1]]
    work = scratch(prefix="bench-animation-")
    profiles = {}
    for kind in ("gif", "webp"):
        for fit in ("fit", "cover"):
            path = os.path.join(work, f"{kind}-{fit}.lua")
            cover = ', fit = "cover"' if fit == "cover" else ""
            # fetch's max_bytes raised: a 250-frame GIF of 640 x 360 from Pillow is about 40 MB.
            open(path, "w").write(f'profile "anim" {{ fetch {{ max_bytes = 200000000 }}, decode {{}}, '
                                  f'downsample {{ size = {SIZE}{cover} }}, '
                                  f'encode {{ format = "{kind}" }} }}\n')
            profiles[(kind, fit)] = path
    out = os.path.join(work, "out")
    os.makedirs(out)
    # A run cut short is resumed: rows already measured at this many rounds are kept.
    rows = []
    if os.path.exists(results_path):
        earlier = json.load(open(results_path))
        rows = earlier["rows"] if earlier.get("rounds") == rounds else []
    done = {(r["photo"], r["frames"], r["size"], r["kind"], r["fit"]) for r in rows}
    for frames, width, height in SHAPES:
        for index, photo in enumerate(chosen):
            for kind in KINDS:
                if all((os.path.basename(photo), frames, f"{width}x{height}", kind, fit) in done
                       for fit in ("fit", "cover")):
                    continue
                source = os.path.join(work, f"pan{index}-{frames}x{width}-{kind}.{kind.split('-')[0]}")
                if kind == "gif-screen":
                    make_screen(index, frames, width, height, source)
                else:
                    make_pan(photo, frames, width, height, source, MAKERS[kind])
                for fit in ("fit", "cover"):
                    if (os.path.basename(photo), frames, f"{width}x{height}", kind, fit) in done:
                        continue
                    tools = commands(binary, source, kind, fit, out, profiles)
                    samples = {tool: [] for tool in tools}
                    batched = []
                    for _ in range(rounds):
                        for tool, command in tools.items():
                            samples[tool].append(timed(command))
                        wall, cpu = timed(batch_command(binary, source, kind, fit, out, profiles))
                        batched.append((wall / BATCH, cpu / BATCH))
                    reference = references(source, fit)
                    row = {"photo": os.path.basename(photo), "frames": frames, "size": f"{width}x{height}",
                           "kind": kind, "fit": fit, "tools": {}}
                    for tool, runs in samples.items():
                        row["tools"][tool] = {"wall": statistics.median(r[0] for r in runs),
                                              "cpu": statistics.median(r[1] for r in runs),
                                              "psnr": psnr(output_of(tools[tool]), reference),
                                              "bytes": os.path.getsize(output_of(tools[tool]))}
                    row["tools"]["pipelinehost-batch"] = {"wall": statistics.median(r[0] for r in batched),
                                                          "cpu": statistics.median(r[1] for r in batched)}
                    if "gifsicle" in samples:
                        row["batch_wall_vs_gifsicle"] = statistics.median(
                            a[0] / b[0] for a, b in zip(batched, samples["gifsicle"]))
                    for peer in ("gifsicle", "imagemagick"):
                        if peer in samples:
                            row[f"bytes_vs_{peer}"] = row["tools"]["pipelinehost"]["bytes"] / row["tools"][peer]["bytes"]
                            row[f"wall_vs_{peer}"] = statistics.median(
                                a[0] / b[0] for a, b in zip(samples["pipelinehost"], samples[peer]))
                            row[f"cpu_vs_{peer}"] = statistics.median(
                                a[1] / b[1] for a, b in zip(samples["pipelinehost"], samples[peer]))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    # Written after every row, so a run cut short still reports what it measured.
                    results = {"date": time.strftime("%Y-%m-%d"), "rounds": rounds, "rows": rows}
                    json.dump(results, open(results_path, "w"), indent=1)
    results = {"date": time.strftime("%Y-%m-%d"), "rounds": rounds, "rows": rows,
               "startup": startup(rounds, binary, work, profiles[("gif", "fit")])}
    json.dump(results, open(results_path, "w"), indent=1)


def empty_programs(binary, work):
    """C programs that return at once, linked against libvips alone (as Debian builds it:
    pkg-config's flags) and against every library `binary` names (readelf's NEEDED): what loading
    those libraries costs a process before any work of its own. With how many libraries each loads."""
    source = os.path.join(work, "empty.c")
    open(source, "w").write("int main(void) { return 0; }\n")
    vips = subprocess.run(["pkg-config", "--libs", "vips"], check=True, capture_output=True, text=True).stdout.split()
    dynamic = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    named = [f"-l:{library}" for library in re.findall(r"\(NEEDED\).*\[(.+)\]", dynamic)]
    programs = {}
    for name, libraries in (("libvips-loaded", vips), ("libraries-loaded", named)):
        path = os.path.join(work, name)
        subprocess.run(["cc", "-O2", source, "-o", path, "-Wl,--no-as-needed"] + libraries, check=True)
        listed = subprocess.run(["ldd", path], check=True, capture_output=True, text=True).stdout
        programs[name] = (path, len(listed.strip().splitlines()))
    return programs


def startup(rounds, binary, work, profile):
    """What a process costs before its work: the median wall time of each tool on a GIF of two
    frames of 16 x 16, and of the empty programs (empty_programs), over 3 runs a round,
    alternating; with the empty programs' library counts."""
    from PIL import Image
    tiny = os.path.join(work, "tiny.gif")
    frames = [Image.new("RGB", (16, 16), colour) for colour in ((200, 40, 40), (40, 40, 200))]
    frames[0].save(tiny, save_all=True, append_images=frames[1:], duration=40, loop=0)
    empty = empty_programs(binary, work)
    tools = {"pipelinehost": [binary, "run", profile, "--no-cache", "--output", f"{work}/tiny-ph.gif", tiny],
             "gifsicle": ["gifsicle", "--resize-fit", f"{SIZE}x{SIZE}", tiny, "-o", f"{work}/tiny-gs.gif"]}
    tools.update({name: [path] for name, (path, _) in empty.items()})
    samples = {tool: [] for tool in tools}
    for _ in range(3 * rounds):
        for tool, command in tools.items():
            samples[tool].append(timed(command)[0])
    started = {tool: statistics.median(runs) for tool, runs in samples.items()}
    started["libraries"] = {name: count for name, (_, count) in empty.items()}
    return started


def write(results_path, benchmarks):
    results = json.load(open(results_path))
    rows = results["rows"]
    lines = [MARK_START, "## Animations: GIF and WebP against gifsicle and ImageMagick", "",
             f"Measured {results['date']}, {results['rounds']} rounds, by `scripts/bench-animation`: pans across three "
             "plasma wallpapers (24 frames of 480x270, 120 of 480x270, 250 of 640x360; GIF made by Pillow, whose "
             "frames cover the screen with tables of their own, `gif-im` by ImageMagick's `-layers optimize` and "
             "`gif-ff` by ffmpeg's palettegen and paletteuse, whose frames are cut to what changed; WebP at "
             "quality 80), and `gif-screen`, screen recordings of text being typed in three terminal themes, the same "
             f"sizes, written by ffmpeg. Each is resized to {SIZE} px in a process of its own. Ratios are "
             "pipelinehost's time over the peer's, the median of the round-by-round ratios; PSNR is the median "
             "frame's against the source frame resized by Pillow's Lanczos in floats (clipped once, not rounded "
             "between its passes), in dB; bytes are the output file's size over the peer's. Each row is the worst of three "
             "(photos, or themes). The pans are one family of pictures (plasma wallpapers, smooth gradients); "
             "GIFs from the wild (photos of people, dithered, transparent stickers) are not measured yet.", "",
             "| input | fit | pipelinehost wall | vs gifsicle wall | vs gifsicle CPU | "
             f"vs gifsicle wall, {BATCH} in one process | vs gifsicle wall, in one process after start-up | "
             "vs ImageMagick wall | "
             "vs ImageMagick CPU | PSNR pipelinehost | PSNR gifsicle | PSNR ImageMagick | bytes vs gifsicle | "
             "bytes vs ImageMagick |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    started = results.get("startup", {})

    def settled(row):
        """A file's wall in one process after start-up: the batch's wall less one start-up (the
        tiny GIF's run), over BATCH, against gifsicle's whole process."""
        batch, peer = row["tools"].get("pipelinehost-batch"), row["tools"].get("gifsicle")
        if not batch or not peer or started.get("pipelinehost") is None:
            return None
        return max(0.0, batch["wall"] - started["pipelinehost"] / BATCH) / peer["wall"]

    def worst(values, high=True):
        values = [v for v in values if v is not None]
        return (max(values) if high else min(values)) if values else None

    def show(value, unit=""):
        return "n/a" if value is None else f"{value:.2f}{unit}"

    def ms(seconds):
        return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"

    groups = {}
    for row in rows:
        groups.setdefault((row["kind"], row["frames"], row["size"], row["fit"]), []).append(row)
    for (kind, frames, size, fit), group in sorted(groups.items()):
        tools = lambda tool, field: [r["tools"].get(tool, {}).get(field) for r in group]  # noqa: E731
        lines.append(
            f"| {frames} x {size} {kind} | {fit} | {show(worst(tools('pipelinehost', 'wall')), ' s')} | "
            f"{show(worst([r.get('wall_vs_gifsicle') for r in group]), '×')} | "
            f"{show(worst([r.get('cpu_vs_gifsicle') for r in group]), '×')} | "
            f"{show(worst([r.get('batch_wall_vs_gifsicle') for r in group]), '×')} | "
            f"{show(worst([settled(r) for r in group]), '×')} | "
            f"{show(worst([r.get('wall_vs_imagemagick') for r in group]), '×')} | "
            f"{show(worst([r.get('cpu_vs_imagemagick') for r in group]), '×')} | "
            f"{show(worst(tools('pipelinehost', 'psnr'), high=False))} | "
            f"{show(worst(tools('gifsicle', 'psnr'), high=False))} | "
            f"{show(worst(tools('imagemagick', 'psnr'), high=False))} | "
            f"{show(worst([r.get('bytes_vs_gifsicle') for r in group]), '×')} | "
            f"{show(worst([r.get('bytes_vs_imagemagick') for r in group]), '×')} |")
    gif = [r for r in rows if "wall_vs_gifsicle" in r]
    met = all(r["wall_vs_gifsicle"] <= 1 for r in gif)
    batched = [r["batch_wall_vs_gifsicle"] for r in gif if "batch_wall_vs_gifsicle" in r]
    quality = all((r["tools"]["pipelinehost"]["psnr"] or 0) >= (r["tools"]["gifsicle"]["psnr"] or 0) for r in gif)
    behind = [r for r in gif if r["tools"]["gifsicle"]["psnr"]
              and (r["tools"]["pipelinehost"]["psnr"] or 0) < r["tools"]["gifsicle"]["psnr"]]
    gap = max((r["tools"]["gifsicle"]["psnr"] - (r["tools"]["pipelinehost"]["psnr"] or 0) for r in behind), default=0)
    pans = [r["batch_wall_vs_gifsicle"] for r in gif if r["kind"] != "gif-screen" and "batch_wall_vs_gifsicle" in r]
    after = [settled(r) for r in gif if settled(r) is not None]
    after_pans = [settled(r) for r in gif if r["kind"] != "gif-screen" and settled(r) is not None]
    counts = started.get("libraries", {})
    floor = started.get("libvips-loaded")
    under = [r for r in gif if floor is not None and r["tools"]["gifsicle"]["wall"] < floor]
    lines += ["", "Each tool runs as a process of its own, so pipelinehost's rows include its start-up "
                  f"({ms(started.get('pipelinehost'))} on a GIF of two 16 x 16 frames, against gifsicle's "
                  f"{ms(started.get('gifsicle'))}), which serve pays once. Most of it is loading libraries before "
                  f"`main`: a C program that only returns takes {ms(floor)} linked against libvips as Debian builds it "
                  f"({counts.get('libvips-loaded', 'n/a')} libraries: librsvg with cairo and pango, OpenEXR, matio "
                  "with HDF5, cfitsio with a libcurl and GnuTLS of its own, ...), and "
                  f"{ms(started.get('libraries-loaded'))} linked against the {counts.get('libraries-loaded', 'n/a')} "
                  "libraries pipelinehost's binary loads. That is longer than gifsicle's whole run on "
                  f"{len(under)} of the {len(gif)} GIF rows, so on those no program that links this libvips can "
                  "meet the goal in a process of its own. The rest is libvips' 300 operation types, the Lua profile "
                  "and the plugins; libvips opens its modules only for the formats that need them. "
                  "A screen recording's frames share one colour table, made by libimagequant from "
                  "every frame's changed pixels, each frame drawn with it undithered where it comes within 40 dB "
                  "(ph_gif_save.c, plan_recording): a table a frame was three quarters of such a file. Elsewhere a "
                  "frame whose changed pixels have at most 255 colours is written in exactly "
                  "those. A GIF of a GIF keeps each frame's source palette where the frame still fits it (40 dB, or "
                  "as close as libimagequant came on an earlier frame: ph_gif_remap.c), as gifsicle does; other "
                  "frames are quantized by libimagequant at effort 1 (encode's default for gif), side by "
                  "side on both cores (ph_gif_save.c, written through giflib). "
                  "thumbor resizes GIFs with gifsicle (its gifsicle engine), so gifsicle's column is thumbor's "
                  "GIF work without its HTTP. gifsicle resizes each frame as stored, which in a screen recording is "
                  "the few pixels that changed, in the palette's colours; pipelinehost resizes only the pixels near "
                  "what changed (the boxes the GIF's blocks give, to the same pixels as whole frames: "
                  "ph_frame_changes.c), and its writer reads and writes only the box of each frame that changed "
                  "(through giflib), but libvips' loader composes every frame whole, and each frame's boxes go "
                  "through libvips' pipeline of regions, so the `gif-screen` rows are still its worst. A PSNR of n/a "
                  "is an output with other frames than the source's: gifsicle drops the frames a crop leaves "
                  "unchanged. The column \"in one process\" is "
                  f"pipelinehost as serve runs it: `run --jobs 1` on {BATCH} copies of the animation, the batch's wall "
                  f"time over {BATCH}, against gifsicle's process for one (thumbor runs a gifsicle process a "
                  "request); \"after start-up\" takes one start-up (the two-frame GIF's run) from the batch's wall "
                  f"before dividing by {BATCH}: a file's cost in a process already running, as in serve.",
              "", f"Goal (issue 54): at most gifsicle's wall time on every GIF row: "
                  f"{'met' if met else 'not met'} (worst {show(worst([r['wall_vs_gifsicle'] for r in gif]), '×')}; the "
                  f"pans alone: worst {show(worst([r['wall_vs_gifsicle'] for r in gif if r['kind'] != 'gif-screen']), '×')}); "
                  f"in one process: {'met' if batched and max(batched) <= 1 else 'not met'} "
                  f"(worst {show(worst(batched), '×')}; the pans alone: worst {show(worst(pans), '×')}); "
                  f"in one process after start-up: {'met' if after and max(after) <= 1 else 'not met'} "
                  f"(worst {show(worst(after), '×')}; the pans alone: worst {show(worst(after_pans), '×')}); "
                  f"PSNR at least gifsicle's on every GIF: {'met' if quality else 'not met'}"
                  + (f" (behind on {len(behind)} of {len(gif)} rows of one photo each, by {gap:.2f} dB at most: "
                     + ", ".join(sorted({r['photo'] for r in behind})) + ")" if behind else "") + ".", "", MARK_END]
    replace_section(benchmarks, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4])
