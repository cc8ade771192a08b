"""The results table of docs/results/adaptation-corpora.md from the two result JSONs and
displacement.py's lines (run from the repository root after both experiments finish)."""

import json
import sys

main = json.load(open("runs/adaptation-corpora/adaptation-corpora.json"))
extra = json.load(open("runs/adaptation-corpora-lr1e-4/adaptation-corpora.json"))
moved = {}
for line in open(sys.argv[1]):
    row = json.loads(line)
    moved[row["cell"]] = row["relative_distance"]
def rate(folder):  # read from the run itself: three grid cells ran at the edited recipe's rate
    return f"{json.load(open(folder + '/run/config.json'))['train']['learning_rate']:g}"


cells = [(c, f"runs/adaptation-corpora/{c['name']}") for c in main["cells"]]
cells += [(c, f"runs/adaptation-corpora-lr1e-4/{c['name']}") for c in extra["cells"]]
cells = [(c, rate(folder), folder) for c, folder in cells]
base = main["unadapted"]
print("| encoder | lr | steps (paper / sparse) | held-out AUC / bigram | weights moved | "
      "dev mean +- std | test mean +- std | paired dev (mean +- SE) | paired test | verdict |")
print("|---|---|---|---|---|---|---|---|---|---|")
print(f"| unadapted | | 0 | | 0 | {base['dev_mean']:.4f} +- {base['dev_std']:.4f} | "
      f"{base['test_mean']:.4f} +- {base['test_std']:.4f} | | | |")
for c, lr, folder in cells:
    held = c["held_out"]
    auc = (f"{held['disc_auc']:.3f} / {held['bigram_baseline_disc_auc']:.3f}"
           if "disc_auc" in held else "-")
    pd, pt = c["paired_dev"], c["paired_test"]
    print(f"| {c['objective']} on {c['corpus']} | {lr} | {c['steps']['paper']} / "
          f"{c['steps']['sparse']} | {auc} | {moved.get(folder, float('nan')):.3f} | "
          f"{c['dev_mean']:.4f} +- {c['dev_std']:.4f} | {c['test_mean']:.4f} +- "
          f"{c['test_std']:.4f} | {pd['mean']:+.4f} +- {pd['se']:.4f} | "
          f"{pt['mean']:+.4f} +- {pt['se']:.4f} | **{c['verdict']}** |")
print()
print("per-seed test accuracy (seeds 1-5):")
print("unadapted", [round(x, 4) for x in base["test"]])
for c, lr, _ in cells:
    print(c["name"], lr, [round(x, 4) for x in c["test"]])
