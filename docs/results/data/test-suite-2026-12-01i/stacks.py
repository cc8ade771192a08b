"""Reads py-spy's raw output of a suite run (`--subprocesses --format raw`): one stack a line,
its process frames first, then `count`. The xdist workers' command line holds a `;`, which
the raw format also uses between frames: it is replaced first."""
import re

WORKER = "XDIST_WORKER"


def read(path):
    """Yields (kind, frames below the process frames, samples); kind is "worker" (an xdist
    worker), "pytest main" or "child <command line>"."""
    for line in open(path, errors="replace"):
        line = line.replace("import sys;exec(eval(sys.stdin.readline()))", WORKER)
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        pframes = [f for f in frames if f.startswith("process ")]
        if not pframes:
            continue
        if WORKER in pframes[-1]:
            kind = "worker"
        elif len(pframes) == 1:
            kind = "pytest main"
        else:
            kind = "child " + re.sub(r"^process \d+:", "", pframes[-1])[:110]
        yield kind, frames[len(pframes):], int(count)


def frame_key(frame):
    """A frame without its line number."""
    return re.sub(r":\d+\)$", ")", frame)
