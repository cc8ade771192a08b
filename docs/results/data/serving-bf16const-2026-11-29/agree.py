"""Labels and outputs of the bfloat16 SavedModel against the float32 one on the run's whole dev
and test files, batches of 32: agreement, accuracy and the largest probability gap.
`WORK=... RUN=... python agree.py` -> one JSON line."""
import csv, json, os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
from electra_tf.finetuning.predict import open_predictor, read_inputs
from electra_tf.tasks.model_folder import load_finetuned

work, run = os.environ.get("WORK", "/tmp/serve/work-bf16c"), os.environ.get("RUN", "/tmp/serve/run")
_, info = load_finetuned(run)
impls = ("saved_model", "saved_model_bf16")
forms = {impl: open_predictor(f"{work}/{impl}") for impl in impls}
out = {}
for split in ("dev", "test"):
    path = info["data"][split]["path"]
    texts = read_inputs(path, info)[0]
    gold = [row["label"] for row in csv.DictReader(open(path, encoding="utf-8"))]
    rows = {impl: [row for i in range(0, len(texts), 32) for row in call(list(texts[i:i + 32]))]
            for impl, call in forms.items()}
    labels = {impl: [r["label"] for r in rs] for impl, rs in rows.items()}
    probs = {impl: np.array([[r["probabilities"][k] for k in sorted(r["probabilities"])] for r in rs])
             for impl, rs in rows.items()}
    out[split] = {"n": len(texts),
                  "same_labels": sum(x == y for x, y in zip(labels["saved_model_bf16"], labels["saved_model"])),
                  "max_abs_probability_gap": float(np.abs(probs["saved_model_bf16"] - probs["saved_model"]).max()),
                  **{f"accuracy_{i}": sum(x == g for x, g in zip(labels[i], gold)) / len(texts) for i in impls}}
print(json.dumps(out))
