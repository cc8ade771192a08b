import sys, time, numpy as np, tensorflow as tf, tensorflow_text
path=sys.argv[1]; B=int(sys.argv[2]); N=int(sys.argv[3]) if len(sys.argv)>3 else 150
sig = tf.saved_model.load(path).signatures["serving_default"]
ids = np.random.default_rng(0).integers(5, 1000, size=(B, 128)).astype(np.int32)
t = dict(input_word_ids=tf.constant(ids), input_mask=tf.ones_like(ids), input_type_ids=tf.zeros_like(ids))
for _ in range(15): sig(**t)["rtd_logits"].numpy()
ts=[]
for _ in range(N):
    t0=time.perf_counter(); sig(**t)["rtd_logits"].numpy(); ts.append(time.perf_counter()-t0)
print(f"p50 {np.median(ts)*1e3:.2f} ms")
