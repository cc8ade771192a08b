"""How far each adapted encoder moved from all-MiniLM-L6-v2: relative L2 distance of its
encoder weights (||w - w0|| / ||w0||, all encoder variables together, and per layer).

Usage: python displacement.py RUN_FOLDER... (each a cell folder with cell.json)
"""

import json
import sys
from pathlib import Path

import numpy as np

from electra_tf.tasks.initialization import load_initialization

start = load_initialization("data/models/all-MiniLM-L6-v2").build_encoder(dropout=0.0)
w0 = [w.numpy() for w in start.weights]
names = [w.path for w in start.weights]
for cell in sys.argv[1:]:
    checkpoint = json.loads((Path(cell) / "cell.json").read_text())["checkpoint"]
    encoder = load_initialization(checkpoint).build_encoder(dropout=0.0)
    w = [v.numpy() for v in encoder.weights]
    assert len(w) == len(w0)
    total = np.sqrt(sum(((a - b) ** 2).sum() for a, b in zip(w, w0)))
    norm = np.sqrt(sum((b**2).sum() for b in w0))
    embed = [i for i, n in enumerate(names) if "embedding" in n]
    e = np.sqrt(sum(((w[i] - w0[i]) ** 2).sum() for i in embed)) / np.sqrt(
        sum((w0[i] ** 2).sum() for i in embed)
    )
    print(json.dumps({"cell": cell, "relative_distance": round(float(total / norm), 4),
                      "embeddings_relative_distance": round(float(e), 4)}))
