"""Prints the learning comparison's table and the declared rule's verdict from results.jsonl."""

import json
import statistics
import sys
from pathlib import Path

rows = [json.loads(line) for line in open(Path(__file__).with_name("results.jsonl"))]
metrics = {
    "last 20 steps' mean loss": lambda r: r["last_20_step_loss"],
    "held-out replaced-token AUC": lambda r: r["held_out"]["disc_auc"],
    "held-out loss": lambda r: r["held_out"]["loss"],
}
print("| metric | TensorFlow: seeds 1, 2, 3 | mean +- sd | JAX: seeds 1, 2, 3 | mean +- sd "
      "| difference of means | larger range | rule |")  # fmt: skip
print("|---|---|---|---|---|---|---|---|")
for name, value in metrics.items():
    sides = {}
    for backend in ("tensorflow", "jax"):
        picked = sorted((r for r in rows if r["backend"] == backend), key=lambda r: r["seed"])
        sides[backend] = [value(r) for r in picked]
    tf, jx = sides["tensorflow"], sides["jax"]
    diff = statistics.mean(jx) - statistics.mean(tf)
    spread = max(max(tf) - min(tf), max(jx) - min(jx))
    cells = []
    for side in (tf, jx):
        cells += [", ".join(f"{v:.4f}" for v in side)]
        cells += [f"{statistics.mean(side):.4f} +- {statistics.stdev(side):.4f}"]
    cells += [f"{diff:+.4f}", f"{spread:.4f}", "within" if abs(diff) <= spread else "outside"]
    print(f"| {name} | " + " | ".join(cells) + " |")
sys.exit(0)
