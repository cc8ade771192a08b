import os, resource, time
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    s, c, t = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    yield
    s2, c2 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = lambda a, b: (b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime)
    with open(os.environ["CPULOG"], "a") as f:
        f.write("%s\t%.2f\t%.2f\t%.2f\n" % (item.nodeid, time.time() - t, cpu(s, s2), cpu(c, c2)))
