import sys, time, json, torch
torch.set_num_threads(2)
mode = sys.argv[1]
out = {"lib": "torch", "mode": mode}
for (m, k, n) in [(1024, 384, 1536), (1024, 1536, 384), (1024, 384, 384)]:
    a = torch.randn(m, k); lin = torch.nn.Linear(k, n)
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if mode == "autocast" else torch.no_grad()
    with torch.no_grad(), ctx:
        for _ in range(5): lin(a)
        ts = []
        for _ in range(20):
            t = time.perf_counter(); lin(a); ts.append(time.perf_counter() - t)
    ts.sort(); out[f"{m}x{k}x{n}"] = round(2 * m * k * n / ts[10] / 1e9, 1)
print(json.dumps(out))
