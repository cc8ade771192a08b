"""RULE.md's tables: T' (this folder's results.jsonl, arm Tp) against the recorded T of the
same seed (R s1 here for seed 1; ../qa-more-seeds-2026-11-29/results.jsonl for 6+), and
ours' H (28 recorded seeds) against T' by both of RULE.md's rules. Writes summary.json/.txt."""
import json, math, statistics as st
from pathlib import Path

here = Path(__file__).parent
rows = [json.loads(l) for l in open(here / "results.jsonl")]
tp = {r["seed"]: r for r in rows if r["arm"] == "Tp"}
r1 = {r["seed"]: r for r in rows if r["arm"] == "R"}
recorded = {r["seed"]: r for r in map(json.loads, open(here / "../qa-more-seeds-2026-11-29/results.jsonl"))
            if r.get("arm") == "T"}
t = {s: (r1[s] if s in r1 else recorded[s]) for s in tp}
H = json.load(open(here / "../qa-more-seeds-2026-11-29/summary.json"))["H"]["test_f1"]
seeds = sorted(tp)
diff = [tp[s]["test_f1"] - t[s]["test_f1"] for s in seeds]
sd = lambda x: st.stdev(x) if len(x) > 1 else float("nan")
out = {
    "seeds": seeds,
    "Tp_test_f1": [round(tp[s]["test_f1"], 2) for s in seeds],
    "T_test_f1": [round(t[s]["test_f1"], 2) for s in seeds],
    "Tp_dev_f1": [round(tp[s]["dev_f1"], 2) for s in seeds],
    "T_dev_f1": [round(t[s]["dev_f1"], 2) for s in seeds],
    "Tp_epoch1_loss": [round(tp[s]["epochs"][0]["loss"], 4) for s in seeds],
    "T_epoch1_loss": [round(t[s]["epochs"][0]["loss"], 4) for s in seeds],
    "Tp_minus_T": {"each": [round(d, 2) for d in diff], "mean": round(st.mean(diff), 2),
                   "se": round(sd(diff) / math.sqrt(len(diff)), 2), "min": round(min(diff), 2),
                   "max": round(max(diff), 2), "n": len(diff)},
}
tv = [tp[s]["test_f1"] for s in seeds]
out["Tp"] = {"n": len(tv), "mean": round(st.mean(tv), 2), "sd": round(sd(tv), 2),
             "min": round(min(tv), 2), "max": round(max(tv), 2)}
out["T_same_seeds_mean"] = round(st.mean(t[s]["test_f1"] for s in seeds), 2)
out["H"] = {"n": len(H), "mean": round(st.mean(H), 2), "sd": round(st.stdev(H), 2)}
if len(tv) >= 10:
    bar = st.mean(tv) - (max(tv) - min(tv)) / 2
    D = st.mean(H) - st.mean(tv)
    se = math.sqrt(st.variance(H) / len(H) + st.variance(tv) / len(tv))
    lo, hi = D - 2 * se, D + 2 * se
    verdict = ("ours learns worse (D + 2 SE < 0)" if hi < 0 else
               "no gap told from zero" if lo <= 0 <= hi and D > -0.5 else "undecided")
    out["goal"] = {"bar": round(bar, 2), "H_mean": round(st.mean(H), 2), "met": st.mean(H) >= bar}
    out["two_sample"] = {"D": round(D, 2), "SE": round(se, 2), "interval_2se": [round(lo, 2), round(hi, 2)],
                         "verdict": verdict}
(here / "summary.json").write_text(json.dumps(out, indent=1) + "\n")
lines = [f"seed {s}: T' {tp[s]['test_f1']:.2f} (dev {tp[s]['dev_f1']:.2f}, epoch-1 loss {tp[s]['epochs'][0]['loss']:.4f})"
         f" | T {t[s]['test_f1']:.2f} (dev {t[s]['dev_f1']:.2f}, {t[s]['epochs'][0]['loss']:.4f}) | T'-T {d:+.2f}"
         for s, d in zip(seeds, diff)]
(here / "summary.txt").write_text("\n".join(lines) + "\n" + json.dumps(out) + "\n")
print("\n".join(lines)); print(json.dumps(out))
