import os, sys, time, numpy as np, torch, transformers
B=int(sys.argv[1]); N=int(sys.argv[2]) if len(sys.argv)>2 else 150
torch.set_num_threads(os.cpu_count())
cfg = transformers.ElectraConfig(vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12, num_attention_heads=4, intermediate_size=1024, hidden_act="gelu")
m = transformers.ElectraForPreTraining(cfg).eval()
ids = np.random.default_rng(0).integers(5, 1000, size=(B, 128))
inp = dict(input_ids=torch.tensor(ids).long(), attention_mask=torch.ones(B,128).long(), token_type_ids=torch.zeros(B,128).long())
def call():
    with torch.inference_mode(): return m(**inp).logits.numpy()
for _ in range(15): call()
ts=[]
for _ in range(N):
    t0=time.perf_counter(); call(); ts.append(time.perf_counter()-t0)
print(f"p50 {np.median(ts)*1e3:.2f} ms")
