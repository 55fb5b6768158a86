"""Scratch directories for the benchmarks: each goes when the script ends, by an error or
Ctrl-C too, so runs do not leave gigabytes of made inputs and answers in /tmp.
BENCH_KEEP=1 keeps them, to look at what a run wrote."""
import atexit
import os
import shutil
import sys
import tempfile


def scratch(prefix="bench-", dir=None):
    work = tempfile.mkdtemp(prefix=prefix, dir=dir)
    if os.environ.get("BENCH_KEEP") == "1":
        print(f"{os.path.basename(sys.argv[0])}: BENCH_KEEP=1, {work} is kept", file=sys.stderr)
    else:
        atexit.register(shutil.rmtree, work, True)
    return work
