"""The fine-tuned classifier (RUN) exported three ways into WORK: float32 (plain), bfloat16 in
every call (bf16_1, `export --bfloat16` now) and bfloat16 from 256 real tokens (bf16_256,
the old threshold, with the new constant weights)."""
import sys, os
WORK = os.environ.get("WORK", "/tmp/bfx")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from electra_tf.tasks.model_folder import load_finetuned
from electra_tf.tasks.export import export_finetuned
model, info = load_finetuned(os.environ.get("RUN", "/tmp/serve/run"))
for name, rows in (("plain", None), ("bf16_1", 1), ("bf16_256", 256)):
    p = export_finetuned(model, info, f"{WORK}/{name}", model_name="m", warmup=False, bfloat16_rows=rows)
    print(name, p, os.path.getsize(p / "saved_model.pb") / 1e6, "MB pb")
