"""Device probe: what the lent GPU machine has, and the PyTorch ELECTRA-Small peer step on it."""
import importlib.util, json, os, subprocess, sys, time
out = os.environ.get("OUT", "/tmp")
facts = {"python": sys.version.split()[0]}
for name in ["tensorflow", "tensorflow_text", "keras", "keras_hub", "tf_keras", "jax", "torch", "transformers"]:
    facts[name] = importlib.util.find_spec(name) is not None
facts["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
spec = importlib.util.find_spec("nvidia")
facts["nvidia_libs"] = sorted(os.listdir(list(spec.submodule_search_locations)[0])) if spec else []
print(json.dumps({"kind": "device_facts", **facts}), flush=True)
import torch, transformers
transformers.logging.set_verbosity_error()
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining
facts["torch"] = torch.__version__; facts["transformers"] = transformers.__version__
dev = torch.device("cuda")
V, L, N = 30522, 128, 19
def models():
    torch.manual_seed(1234)
    d = ElectraForPreTraining(ElectraConfig(vocab_size=V, embedding_size=128, hidden_size=256, num_hidden_layers=12, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512)).to(dev)
    g = ElectraForMaskedLM(ElectraConfig(vocab_size=V, embedding_size=128, hidden_size=64, num_hidden_layers=12, num_attention_heads=1, intermediate_size=256, max_position_embeddings=512)).to(dev)
    g.electra.embeddings = d.electra.embeddings
    g.generator_lm_head.weight = d.electra.embeddings.word_embeddings.weight
    params = list({id(p): p for p in list(d.parameters()) + list(g.parameters())}.values())
    return g, d, params
def run(batch, amp, steps=30, warm=5):
    g, d, params = models()
    opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() > 1], "weight_decay": 0.01}, {"params": [p for p in params if p.dim() <= 1], "weight_decay": 0.0}], lr=5e-4, fused=True)
    rng = torch.Generator(device=dev).manual_seed(7)
    pool = [torch.randint(999, V, (batch, L), device=dev, generator=rng) for _ in range(4)]
    att = torch.ones(batch, L, dtype=torch.long, device=dev)
    def step(ids):
        pos = torch.rand(batch, L - 2, device=dev, generator=rng).argsort(1)[:, :N] + 1
        chosen = torch.zeros(batch, L, dtype=torch.bool, device=dev).scatter_(1, pos, True)
        shown = chosen & (torch.rand(batch, L, device=dev, generator=rng) < 0.85)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            h = g.electra(input_ids=ids.masked_fill(shown, 103), attention_mask=att).last_hidden_state
            logits = g.generator_lm_head(g.generator_predictions(h[chosen])).float()
            mlm = torch.nn.functional.cross_entropy(logits, ids[chosen])
            with torch.no_grad():
                s = torch.multinomial(torch.softmax(logits, -1), 1).squeeze(-1)
                c = ids.clone(); c[chosen] = s; lab = (c != ids).long()
            dl = d(input_ids=c, attention_mask=att, labels=lab).loss
            loss = mlm + 50 * dl
        opt.zero_grad(set_to_none=True); loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0); opt.step()
        return loss
    t0 = time.perf_counter(); step(pool[0]); torch.cuda.synchronize(); first = time.perf_counter() - t0
    for i in range(warm): step(pool[i % 4])
    torch.cuda.synchronize(); times = []
    for i in range(steps):
        t = time.perf_counter(); loss = step(pool[i % 4]); torch.cuda.synchronize(); times.append(time.perf_counter() - t)
    times.sort(); med = times[len(times) // 2]
    return {"kind": "peer_step_gpu", "impl": "hf_torch", "precision": "bf16-autocast" if amp else "fp32", "batch": batch, "seq": L, "median_s": med, "min_s": times[0], "max_s": times[-1], "tokens_per_s": batch * L / med, "first_step_s": first, "steps": steps, "loss": float(loss), "peak_mem_gib": torch.cuda.max_memory_allocated() / 2**30, "torch": torch.__version__, "transformers": transformers.__version__, "gpu": facts["nvidia_smi"]}
torch.backends.cuda.matmul.allow_tf32 = False
lines = []
for rnd in range(2):
    for batch in (32, 128):
        for amp in (False, True):
            r = run(batch, amp); r["round"] = rnd; lines.append(r); print(json.dumps(r), flush=True)
with open(os.path.join(out, "gpu_peer.jsonl"), "w") as f:
    f.write(json.dumps({"kind": "device_facts", **facts}) + "\n")
    for r in lines: f.write(json.dumps(r) + "\n")
