"""The measuring half of scripts/bench-progressive: progressive JPEGs decoded only as far as the
output needs (ph_jpeg_scans.c) against the same requests with PIPELINEHOST_JPEG_EARLY_STOP=0.

For each corpus and box: pipelinehost `run` over COPIES copies of every photo, fit-in BOX, JPEG
q80, no cache, the two settings alternating for ROUNDS rounds. CPU per photo is the whole
process's user + system time less its start-up (a run of one tiny image), median of the rounds;
the stage time per photo is `--stats`' decode_ms_avg (downsample's wall time: the decode and the
resize, the shrink-on-load happening inside it).

BOX "info" times `pipelinehost info` instead (its 100 px copy, shrunk on load, for the
placeholders and the dominant colour); then the check is that both print the same facts.

  bench_progressive.py BIN RESULTS.json NAME=DIR:BOX ...
  bench_progressive.py --write RESULTS.json BENCHMARKS.md
"""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import replace_section  # noqa: E402

COPIES, ROUNDS, QUALITY = 3, 5, 80
MARK_START, MARK_END = "<!-- progressive: written by scripts/bench-progressive -->", "<!-- /progressive -->"


def cpu_of(command, env):
    """CPU seconds (user + system) of one child process, and its lines of output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, check=True, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout.strip().splitlines()


def measure_corpus(binary, directory, box, work):
    photos = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".jpg"))
    names = []
    os.makedirs(os.path.join(work, "copies"))
    for k in range(COPIES):
        for photo in photos:
            name = os.path.join(work, "copies", f"c{k}-{os.path.basename(photo)}")
            shutil.copyfile(photo, name)
            names.append(name)
    listing = os.path.join(work, "list.txt")
    open(listing, "w").write("\n".join(names) + "\n")
    profile = os.path.join(work, "fit.lua")
    info = box == "info"
    open(profile, "w").write('profile "fit" { fetch {}, decode {}, downsample { size = %d }, '
                             'encode { format = "jpeg", quality = %d } }\n' % (256 if info else box, QUALITY))
    tiny = os.path.join(work, "tiny.jpg")
    subprocess.run(["vips", "black", tiny + "[Q=80]", "16", "16"], check=True)
    outputs = {setting: os.path.join(work, "out-" + setting) for setting in ("on", "off")}
    figures = {"on": {"cpu": [], "stage": [], "early": 0}, "off": {"cpu": [], "stage": [], "early": 0}}
    for _ in range(ROUNDS):
        for setting in ("on", "off"):
            env = dict(os.environ, PIPELINEHOST_JPEG_EARLY_STOP="1" if setting == "on" else "0")
            if info:
                run = [binary, "info", profile, "--no-cache"]
            else:
                run = [binary, "run", profile, "--no-cache", "--output-dir", outputs[setting], "--stats"]
            startup, _ = cpu_of(run + [tiny], env)
            batch, lines = cpu_of(run + ["--input-list", listing], env)
            figures[setting]["cpu"].append((batch - startup) / len(names) * 1000)
            if info:
                figures[setting]["facts"] = sorted(line.replace(work, "") for line in lines)
                continue
            stats = json.loads(lines[-1])
            figures[setting]["stage"].append(stats["decode_ms_avg"])
            figures[setting]["early"] = stats.get("jpeg_decodes_stopped_early", 0)
    on, off = figures["on"], figures["off"]
    if info:
        same = on["facts"] == off["facts"] and len(on["facts"]) == len(names)
        on["stage"] = off["stage"] = [0]
    else:
        answers = {setting: {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
                   for setting, folder in outputs.items()}
        same = answers["on"] == answers["off"] and len(answers["on"]) == len(photos) * COPIES + 1
    return {"same_bytes": same, "info": info, "photos": len(photos), "box": box, "early": on["early"],
            "decodes": len(names),
            "cpu_on": statistics.median(on["cpu"]), "cpu_off": statistics.median(off["cpu"]),
            "stage_on": statistics.median(on["stage"]), "stage_off": statistics.median(off["stage"])}


def measure(binary, results, corpora):
    rows = []
    for spec in corpora:
        name, rest = spec.split("=", 1)
        directory, box = rest.rsplit(":", 1)
        with tempfile.TemporaryDirectory() as work:
            row = measure_corpus(binary, directory, box if box == "info" else int(box), work)
        row["corpus"] = name
        row["ratio"] = row["cpu_on"] / row["cpu_off"]
        rows.append(row)
        print(f"{name} at {box}: {row['cpu_on']:.1f} / {row['cpu_off']:.1f} ms CPU per photo ({row['ratio']:.2f}x), "
              f"stage {row['stage_on']:.1f} / {row['stage_off']:.1f} ms, {row['early']} of {row['decodes']} left scans out, "
              f"answers {'the same' if row['same_bytes'] else 'DIFFER'}",
              file=sys.stderr)
    json.dump(rows, open(results, "w"), indent=1)


def write(results, page):
    rows = sorted(json.load(open(results)), key=lambda r: -r["ratio"])
    lines = [MARK_START, "",
             "| corpus | photos | fit-in | decodes that left scans out | CPU ms per photo, on / off | ratio | "
             "downsample's wall ms, on / off | answers, on against off |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("info"):
            lines.append(f"| {r['corpus']} | {r['photos']} | `info` (a 100 px copy) | | "
                         f"{r['cpu_on']:.1f} / {r['cpu_off']:.1f} | **{r['ratio']:.2f}×** | | "
                         f"{'the same facts' if r['same_bytes'] else '**differ**'} |")
            continue
        lines.append(f"| {r['corpus']} | {r['photos']} | {r['box']} | {r['early']} of {r['decodes']} | "
                     f"{r['cpu_on']:.1f} / {r['cpu_off']:.1f} | **{r['ratio']:.2f}×** | "
                     f"{r['stage_on']:.1f} / {r['stage_off']:.1f} | "
                     f"{'the same bytes' if r['same_bytes'] else '**differ**'} |")
    worst = rows[0]
    lines += ["", f"Worst: {worst['corpus']}, {worst['ratio']:.2f}× the CPU with the path off (goal ≤ 0.6×).", "",
              MARK_END]
    replace_section(page, MARK_START, MARK_END, "\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        measure(sys.argv[1], sys.argv[2], sys.argv[3:])
