"""pytest plugin: consolidate every malloc arena after each test (a corrupted heap crashes
there, near the test that corrupted it); each worker logs its tests to /tmp/vg/trim-<worker>.log."""
import ctypes, os
_libc = ctypes.CDLL("libc.so.6")
_log = open(f"/tmp/vg/trim-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log", "a", buffering=1)
def pytest_runtest_setup(item):
    _log.write(f"START {item.nodeid}\n")
def pytest_runtest_teardown(item, nextitem):
    _libc.malloc_trim(0)
    _log.write(f"TRIMMED {item.nodeid}\n")
