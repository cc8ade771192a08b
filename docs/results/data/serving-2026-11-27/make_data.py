"""Movie-review files for the serving study: 2,000 train, 1,000 dev, 1,000 test (seeded)."""
import csv, sys
import numpy as np
from pathlib import Path
from electra_tf.data.public import fetch_minilm, fetch_snippets
from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
from electra_tf.datasets.tasks import get_task
data, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
print(fetch_minilm(data / "models"))
splits = movie_review_split(read_movie_reviews(fetch_snippets(data / "corpora")["movie_reviews"]), get_task("movie_reviews"))
rng = np.random.default_rng(7)
for name, n in (("train", 2000), ("dev", 1000), ("test", 1000)):
    rows = splits[name]
    pick = sorted(rng.choice(len(rows), size=min(n, len(rows)), replace=False))
    with open(out / f"{name}.csv", "w", newline="") as f:
        w = csv.writer(f); w.writerow(["text", "label"])
        for i in pick:
            w.writerow([rows[i].text_a, ["negative", "positive"][int(rows[i].label)]])
    print(name, len(pick))
