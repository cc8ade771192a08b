import json, numpy as np
R = [json.loads(l) for l in open("/tmp/ner-study/results.jsonl")]
def pick(prefix): return {r["seed"]: r for r in R if r["name"].startswith(prefix) and r["name"][len(prefix):].lstrip("_s").isdigit() is not None and r["name"].rsplit("_s", 1)[0] == prefix}
torch = {r["seed"]: r for r in R if r["name"] in ("torch_gpu_lr5e-5_s1", "torch_gpu_lr5e-5_s2", "torch_gpu_lr5e-5_s3")}
for label, ours in [("A: ours defaults (layerwise_decay 0.8 auto)", {r["seed"]: r for r in R if r["name"] in ("ours_default_s1", "ours_default_s2", "ours_default_s3")}),
                    ("B: ours --set layerwise_decay=1.0", {r["seed"]: r for r in R if r["name"] in ("ours_lwd1_s1", "ours_lwd1_s2", "ours_lwd1_s3")})]:
    seeds = sorted(set(ours) & set(torch))
    print(f"\n{label}  (seeds {seeds})")
    print("seed | ours dev | ours test | ours s (CPU) | torch dev | torch test | torch s (H200) | diff test")
    d = []
    for s in seeds:
        o, t = ours[s], torch[s]; d.append(o["test_f1"] - t["test_f1"])
        print(f"{s} | {o['dev_f1']:.4f} | {o['test_f1']:.4f} | {o['seconds']:.0f} | {t['dev_f1']:.4f} | {t['test_f1']:.4f} | {t['seconds']:.1f} | {d[-1]:+.4f}")
    if len(seeds) < 2: continue
    for side, dd in (("ours", ours), ("torch", torch)):
        v = np.array([dd[s]["test_f1"] for s in seeds]); w = np.array([dd[s]["dev_f1"] for s in seeds])
        print(f"{side}: test mean {v.mean():.4f} sd {v.std(ddof=1):.4f}; dev mean {w.mean():.4f} sd {w.std(ddof=1):.4f}")
    d = np.array(d); se = d.std(ddof=1) / np.sqrt(len(d)); band = max(2 * se, 0.01 if se < 0.005 else 0)
    verdict = "better" if d.mean() > band else "matches" if d.mean() >= -band else "worse"
    print(f"paired diff mean {d.mean():+.4f}, sd {d.std(ddof=1):.4f}, SE {se:.4f}, -2SE {-2*se:+.4f} -> {verdict}")
