import os, sys, time, tempfile, numpy as np, tensorflow as tf, tensorflow_text
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.saved_model import ServingModule
B=int(sys.argv[1]); R=int(sys.argv[2]) if len(sys.argv)>2 else 200
config = load_recipe("small").override("data.sequence_length=128","data.pad_id=0","data.unk_id=1","data.cls_id=2","data.sep_id=3","data.mask_id=4")
model = ElectraPretrainer(config)
mod = ServingModule(model.discriminator, tokenizer=None, kernel_layout=sys.argv[3] if len(sys.argv)>3 else "auto")
print("layout", mod.kernel_layout)
cf = mod.serve.get_concrete_function()
frozen = convert_variables_to_constants_v2(cf)
ids = np.random.default_rng(0).integers(5, 1000, size=(B, 128)).astype(np.int32)
args = (tf.constant(ids), tf.ones_like(ids), tf.zeros_like(ids))
a = cf(*args)["rtd_logits"].numpy()
fo = frozen(*args)
print(type(fo), fo.keys() if isinstance(fo, dict) else [x.shape for x in fo])
keys = sorted(cf.structured_outputs)  # flattened dict order is sorted keys
i = keys.index("rtd_logits")
b = fo[i].numpy()
print("maxdiff", np.abs(a - b).max())
fs = {"var": lambda: cf(*args)["rtd_logits"].numpy(), "frozen": lambda: frozen(*args)[i].numpy()}
for f in fs.values():
    for _ in range(15): f()
ts = {n: [] for n in fs}
for r_ in range(R):
    order = list(fs) if r_ % 2 == 0 else list(fs)[::-1]
    for n in order:
        t0 = time.perf_counter(); fs[n](); ts[n].append(time.perf_counter() - t0)
r = np.array(ts["var"]) / np.array(ts["frozen"])
print(f"var {np.median(ts['var'])*1e3:.2f} ms frozen {np.median(ts['frozen'])*1e3:.2f} ms paired var/frozen {np.median(r):.3f} [q25 {np.percentile(r,25):.3f} q75 {np.percentile(r,75):.3f}]")
