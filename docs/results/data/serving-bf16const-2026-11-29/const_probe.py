"""The fine-tuned MiniLM encoder (packed, first position, two lanes; INTRA INTER threads) with
its weights read four ways: float32 variables, float32 constants, bfloat16 variables, bfloat16
constants. Runs against the code at 7fcb583 (it patches `inference._as`, which `read=`
replaced later): `python const_probe.py 1 2` -> one JSON line (const_probe.jsonl)."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(int(sys.argv[1]))
tf.config.threading.set_inter_op_parallelism_threads(int(sys.argv[2]))
from electra_tf.serving import inference as inf, lanes as ln
from electra_tf.tasks.model_folder import load_finetuned
model, info = load_finetuned(os.environ.get("RUN", "/tmp/serve/run"))
enc = model.encoder
LV = ln.lane_variables(enc, 2)
TW, NP = {}, {}
def twin(v):
    TW[id(v)] = tf.Variable(tf.cast(v, tf.bfloat16), trainable=False); NP[id(v)] = np.asarray(v)
for block in LV:
    for lane in block:
        for v in lane: twin(v)
for layer in enc.transformer_layers:
    for d in (layer._self_attention_layer._output_dense, layer._feedforward_output_dense):
        twin(d.kernel); twin(d.bias)
MODE = ["none"]
orig_as, orig_rows = inf._as, inf._rows_of
def lookup(v, dtype):
    if MODE[0] == "stored" and dtype == tf.bfloat16: return TW[id(v)]
    if MODE[0] == "const": return tf.cast(tf.constant(NP[id(v)]), dtype)
    return None
def _as(value, dtype):
    if id(value) in TW:
        got = lookup(value, dtype)
        if got is not None: return got
    return orig_as(value, dtype)
def _rows_of(kernel, lane, lanes):
    if id(kernel) in TW and MODE[0] != "none":
        got = lookup(kernel, DT[0])
        if got is not None: kernel = got
    return orig_rows(kernel, lane, lanes)
inf._as, inf._rows_of = _as, _rows_of
DT = [tf.float32]
def make(dtype, mode, x):
    MODE[0] = mode; DT[0] = dtype
    f = tf.function(lambda t, m, s: inf.encoder_sequence(enc, t, m, s, packed=True, first_only=True, dtype=dtype, lanes=LV))
    f.get_concrete_function(*x)
    MODE[0] = "none"
    return f
rng = np.random.default_rng(0)
def batch(b, s):
    n = rng.integers(s // 3, s + 1, b); n[0] = s
    m = (np.arange(s)[None] < n[:, None]).astype(np.int32)
    t = rng.integers(1000, 20000, (b, s)).astype(np.int32) * m
    return tf.constant(t), tf.constant(m), tf.constant(np.zeros_like(t))
res = {"intra": int(sys.argv[1]), "inter": int(sys.argv[2])}
for b, s, n in ((1, 27, 300), (8, 40, 60), (32, 52, 20)):
    x = batch(b, s)
    fs = {name: make(dt, mode, x) for name, dt, mode in (("f32", tf.float32, "none"), ("f32const", tf.float32, "const"), ("bf16stored", tf.bfloat16, "stored"), ("bf16const", tf.bfloat16, "const"))}
    ref = fs["f32"](*x).numpy()
    for name in fs:
        res[f"b{b}_{name}_maxdiff"] = float(np.abs(fs[name](*x).numpy() - ref).max())
    for name in list(fs) * 2:
        f = fs[name]
        for _ in range(10): f(*x)
        ts = []
        for _ in range(n):
            t = time.perf_counter(); f(*x).numpy(); ts.append(time.perf_counter() - t)
        res.setdefault(f"b{b}_{name}_ms", []).append(round(1000 * float(np.median(ts)), 2))
print(json.dumps(res), flush=True)
