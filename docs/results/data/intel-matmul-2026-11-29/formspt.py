import sys, time, json, torch
torch.set_num_threads(2)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 1280
res = {}
for K, N in [(384, 1536), (1536, 384), (384, 384)]:
    fl = 2 * M * K * N / 1e9
    x = torch.randn(M, K, requires_grad=True); lin = torch.nn.Linear(K, N)
    dy = torch.randn(M, N)
    def tm(f):
        for _ in range(5): f()
        ts = []
        for _ in range(25):
            s = time.perf_counter(); f(); ts.append(time.perf_counter() - s)
        ts.sort(); return ts[12]
    with torch.no_grad():
        res[f"{K}x{N} fwd"] = round(fl / tm(lambda: lin(x)), 0)
    y = lin(x)
    tb = tm(lambda: torch.autograd.grad(y, [x, lin.weight], dy, retain_graph=True))
    res[f"{K}x{N} bwd(dx+dw)"] = round(2 * fl / tb, 0)
print(json.dumps(res, indent=0))
