# Pilot: `python pilot_imports.py A|B [later]`: the frameworks imported without (A) or with (B) the hook; "later" imports the deferred packages afterwards.
import sys, time, resource
t0 = time.perf_counter()
if sys.argv[1] == "B":
    from electra_tf.startup import defer_optional_imports
    defer_optional_imports()
import tensorflow as tf, keras, keras_hub, tensorflow_text
import electra_tf.cli
r = resource.getrusage(resource.RUSAGE_SELF)
print(sys.argv[1], f"wall {time.perf_counter()-t0:.2f} cpu {r.ru_utime+r.ru_stime:.2f} rss {r.ru_maxrss/1024:.0f}MB mods {len(sys.modules)}", [m for m in ("sklearn","pandas","jax","scipy","matplotlib","cv2") if m in sys.modules])
if len(sys.argv) > 2:
    from electra_tf import metrics
    import sklearn.metrics, matplotlib.pyplot, pandas, scipy
    print("later imports ok", sklearn.metrics.f1_score([0,1,1],[0,1,0]))
