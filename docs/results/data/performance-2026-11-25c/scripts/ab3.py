# python ab3.py ROUNDS: old head + Keras mask / new head + Keras mask / new head + additive mask
import sys, time, numpy as np, tensorflow as tf, keras
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.ops import losses, sampling
from electra_tf.layers import kernels
new_xent, new_argmax = losses.sparse_softmax_cross_entropy, sampling.block_argmax
mha = kernels._FASTER.pop(keras.layers.MultiHeadAttention)
def old_xent(logits, labels):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(labels, tf.int32), logits=logits)
steps = {}
losses.sparse_softmax_cross_entropy = old_xent
sampling.block_argmax = lambda x: tf.argmax(x, axis=-1, output_type=tf.int32)
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128, overrides=("objective.sampler=gumbel",))); s(); steps["old"] = s
losses.sparse_softmax_cross_entropy, sampling.block_argmax = new_xent, new_argmax
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["head"] = s
kernels._FASTER[keras.layers.MultiHeadAttention] = mha
_, m, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["all"] = s
print(type(m.discriminator.encoder.transformer_layers[0]._self_attention_layer).__name__)
for _ in range(2):
    for s in steps.values(): s()
t = {k: [] for k in steps}
names = list(steps)
for i in range(int(sys.argv[1])):
    order = names[i % 3:] + names[:i % 3]
    for k in order:
        t0 = time.perf_counter(); steps[k](); t[k].append(time.perf_counter() - t0)
for k in names:
    r = np.array(t["old"]) / np.array(t[k])
    print(f"{k} median {np.median(t[k]):.3f}s paired old/{k} {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}] n={len(r)}")
