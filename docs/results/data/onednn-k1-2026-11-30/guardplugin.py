import ctypes, os, pytest
lib = ctypes.CDLL(None)
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if os.environ.get("GUARD_ALL"):
        lib.guard_set(1)
    yield
    lib.guard_set(0)
