import gc, os
def pytest_collection_finish(session):
    mode = os.environ.get("GCMODE", "default")
    if mode == "freeze":
        gc.collect(); gc.freeze()
    elif mode == "thresh":
        gc.collect(); gc.freeze(); gc.set_threshold(20000, 20, 50)
