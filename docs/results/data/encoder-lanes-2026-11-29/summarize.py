"""RULE.md's ratios: per process (bench run), p50 of the one-chain rows over the lanes' row, by
batch; medians decide. Run from this folder; prints and writes summary.json."""
import json
import statistics

out = {}
for name in ("uncapped", "avx2"):
    recs = [json.loads(line) for line in open(f"{name}.jsonl") if line.startswith("{")]
    runs, current = [], {}
    for r in recs:  # each process writes batch 1's rows, then batch 32's
        if r["batch"] == 1 and r["runtime"] == "keras_predict" and current:
            runs.append(current)
            current = {}
        current[(r["runtime"], r["batch"])] = r["p50_ms"]
    runs.append(current)
    table = {}
    for batch in (1, 32):
        row = {}
        for other in ("saved_model_one_lane", "saved_model_transposed_kernels", "hf_torch"):
            ratios = [run[(other, batch)] / run[("saved_model", batch)] for run in runs]
            row[f"lanes_speed_vs_{other}"] = {"per_process": [round(x, 3) for x in ratios],
                                              "median": round(statistics.median(ratios), 3)}
        row["p50_ms"] = {rt: [round(run[(rt, batch)], 2) for run in runs]
                         for rt in sorted({k[0] for k in runs[0]})}
        table[f"batch_{batch}"] = row
    out[name] = {"processes": len(runs), **table}
print(json.dumps(out, indent=1))
json.dump(out, open("summary.json", "w"), indent=1)
