"""480 train and 200 dev rows drawn at random (seed 3) from the serving study's reviews files
(serving-2026-11-27/make_data.py's train.csv and dev.csv): python make_files.py IN OUT."""
import csv, sys
import numpy as np
from pathlib import Path
src, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(3)
for name, n in (("train", 480), ("dev", 200)):
    rows = list(csv.DictReader(open(src / f"{name}.csv", encoding="utf-8")))
    pick = sorted(rng.choice(len(rows), size=n, replace=False))
    with open(out / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["text", "label"]); w.writeheader()
        w.writerows(rows[i] for i in pick)
    print(name, n)
