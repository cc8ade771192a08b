import os, sys
if os.environ.get("PROCLOG"):
    import atexit, resource, time
    _t0 = time.time()
    def _log():
        r = resource.getrusage(resource.RUSAGE_SELF)
        line = "%d\t%.2f\t%.2f\t%d\t%d\t%d\t%s\t%s\n" % (
            os.getpid(), time.time() - _t0, r.ru_utime + r.ru_stime, "tensorflow" in sys.modules,
            "jax" in sys.modules, "torch" in sys.modules, os.environ.get("PYTEST_CURRENT_TEST", "-")[:150],
            " ".join(sys.argv)[:200].replace("\t", " "))
        with open(os.environ["PROCLOG"], "a") as f:
            f.write(line)
    atexit.register(_log)
