import atexit, gc, os, sys, time
_s = {}
_a = [[0, 0.0], [0, 0.0], [0, 0.0]]
def _cb(phase, info):
    g = info["generation"]
    if phase == "start":
        _s[g] = time.perf_counter()
    else:
        _a[g][0] += 1; _a[g][1] += time.perf_counter() - _s.get(g, time.perf_counter())
gc.callbacks.append(_cb)
_t0 = time.perf_counter()
def _w():
    with open("/tmp/gcsite/log", "a") as f:
        f.write(f"{os.getpid()} {time.perf_counter()-_t0:.1f}s {' '.join(sys.argv)[:120]} | " + " ".join(f"g{g}:{n}/{s:.2f}" for g, (n, s) in enumerate(_a)) + "\n")
atexit.register(_w)
