"""Labels of the float32 and the bfloat16 SavedModel on the run's whole dev and test files,
batches of 32 (the bfloat16 pass runs from 256 tokens): agreement and accuracy.
`WORK=... RUN=... python agree.py` -> one JSON line."""
import csv, json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from electra_tf.finetuning.predict import open_predictor, read_inputs
from electra_tf.tasks.model_folder import load_finetuned

work, run = os.environ.get("WORK", "/tmp/serve/work-bf16"), os.environ.get("RUN", "/tmp/serve/run")
_, info = load_finetuned(run)
forms = {impl: open_predictor(f"{work}/{impl}") for impl in ("saved_model", "saved_model_bf16")}
out = {}
for split in ("dev", "test"):
    path = info["data"][split]["path"]
    texts = read_inputs(path, info)[0]
    gold = [row["label"] for row in csv.DictReader(open(path, encoding="utf-8"))]
    assert len(gold) == len(texts), (len(gold), len(texts))
    labels = {impl: [row["label"] for i in range(0, len(texts), 32)
                     for row in call(list(texts[i:i + 32]))] for impl, call in forms.items()}
    a, b = labels["saved_model"], labels["saved_model_bf16"]
    out[split] = {"n": len(texts), "same": sum(x == y for x, y in zip(a, b)),
                  "accuracy_float32": sum(x == g for x, g in zip(a, gold)) / len(texts),
                  "accuracy_bfloat16": sum(x == g for x, g in zip(b, gold)) / len(texts)}
print(json.dumps(out))
