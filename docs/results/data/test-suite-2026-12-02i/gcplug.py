"""Python's collector time in a pytest process: per test (gen0/1/2 counts and seconds) and per process."""
import gc, os, time
import pytest

_start = {}
_acc = [[0, 0.0], [0, 0.0], [0, 0.0]]
_objs = [0]


def _cb(phase, info):
    g = info["generation"]
    if phase == "start":
        _start[g] = time.perf_counter()
    else:
        _acc[g][0] += 1
        _acc[g][1] += time.perf_counter() - _start.get(g, time.perf_counter())


gc.callbacks.append(_cb)


def _snap():
    return [list(a) for a in _acc]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _snap()
    yield
    after = _snap()
    d = [(after[g][0] - before[g][0], after[g][1] - before[g][1]) for g in range(3)]
    with open(os.environ["GCLOG"], "a") as f:
        f.write("%s\t%d\t%s\n" % (item.nodeid, len(gc.get_objects()) if d[2][0] else -1,
                                  "\t".join("%d\t%.3f" % x for x in d)))


def pytest_unconfigure(config):
    with open(os.environ["GCLOG"] + ".proc", "a") as f:
        f.write("%d\t%s\n" % (os.getpid(), "\t".join("%d\t%.3f" % tuple(a) for a in _acc)))
