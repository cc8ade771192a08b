import os, time, json, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow, keras  # noqa: imports outside the clock
from electra_tf.tasks.initialization import load_initialization
t = time.perf_counter(); init = load_initialization(sys.argv[1]); first = time.perf_counter() - t
t = time.perf_counter(); load_initialization(sys.argv[1]); again = time.perf_counter() - t
print(json.dumps({"code": sys.argv[2], "first_s": round(first, 3), "again_s": round(again, 3), "weights": len(init.weights)}))
