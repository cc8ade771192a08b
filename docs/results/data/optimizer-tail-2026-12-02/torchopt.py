import time, json, sys, numpy as np, torch
torch.set_num_threads(2)
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'shapes.py')).read())
params = [torch.nn.Parameter(torch.randn(s) * 0.02) for n, s in shapes]
for p in params: p.grad = torch.randn(p.shape) * 0.01
decay = [p for (n, s), p in zip(shapes, params) if not any(k in n for k in ("gamma", "beta", "bias"))]
nod = [p for (n, s), p in zip(shapes, params) if any(k in n for k in ("gamma", "beta", "bias"))]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": nod, "weight_decay": 0.0}], lr=1e-4, eps=1e-6, fused=(sys.argv[1] == "fused"))
def step():
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
for _ in range(2): step()
ts = []
for _ in range(20):
    t0 = time.perf_counter(); step(); ts.append(time.perf_counter() - t0)
print(json.dumps({"mode": sys.argv[1], "median_ms": round(1000 * float(np.median(ts)), 1), "min_ms": round(1000 * min(ts), 1)}))
