#!/usr/bin/env bash
# RULE.md: issue 57.2 and 57.1 on the AVX2 machine (lscpu.txt), the Intel run.sh, which is the Zen 5 page's commands
# (../zen5-2026-11-28/run.sh) less its before-run and probes; 2 cores, nothing else running.
# From a clone with `pip install -e ".[test]"`, run from outside the clone's root (cd /tmp).
# QA files: ../qa-2026-11-27/make_data.py, then ../qa-speed-2026-11-27/make_subset.py into $QA.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}  WORK=${WORK:-/tmp/serve}
S=$HERE/../serving-2026-11-27
lscpu > "$HERE/lscpu.txt"
electra-tf bench finetune --task reviews --impls electra_tf,pytorch --rounds 3 \
  --batches ours --data-dir "$DATA" --out "$HERE/reviews.jsonl"
electra-tf bench finetune --task long --seq 256 --train-examples 192 --dev-examples 64 \
  --epochs 1 --impls electra_tf,pytorch --rounds 3 --batches ours --data-dir "$DATA" \
  --out "$HERE/long.jsonl"
electra-tf bench qa --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 \
  --rounds 3 --out "$HERE/qa.jsonl"
if [ ! -d "$WORK/run" ]; then   # the classifier served (made before the timed runs)
  python "$S/make_data.py" "$DATA" "$WORK/data"
  electra-tf finetune --init "$DATA/models/all-MiniLM-L6-v2" --train "$WORK/data/train.csv" \
    --dev "$WORK/data/dev.csv" --test "$WORK/data/test.csv" --epochs 2 --learning-rate 5e-5 \
    --batch-size 32 --output-dir "$WORK/run"
fi
electra-tf bench serving --run "$WORK/run" --work "$WORK/work" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/serving.jsonl"
for round in 1 2 3; do   # float32 GEMM: PyTorch (MKL) and TensorFlow (oneDNN)
  python "$HERE/../zen5-2026-11-28/mm.py" torch >> "$HERE/matmul.jsonl"
  python "$HERE/../zen5-2026-11-28/mm.py" tf >> "$HERE/matmul.jsonl"
done
