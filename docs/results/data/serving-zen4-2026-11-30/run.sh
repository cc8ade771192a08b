#!/usr/bin/env bash
# RULE.md's bench on this CPU (Zen 4: AVX512_BF16 and VNNI, no AMX). From a clone with
# `pip install -e ".[test]"`; DATA: electra-tf's download folder (models/, corpora/).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download folder (absolute)}  WORK=${WORK:-/tmp/serve}
lscpu > "$HERE/lscpu.txt"
if [ ! -d "$WORK/run" ]; then
  python "$HERE/../serving-2026-11-27/make_data.py" "$DATA" "$WORK/data"
  electra-tf finetune --init "$DATA/models/all-MiniLM-L6-v2" --train "$WORK/data/train.csv" \
    --dev "$WORK/data/dev.csv" --test "$WORK/data/test.csv" --epochs 2 --learning-rate 5e-5 \
    --batch-size 32 --output-dir "$WORK/run"
fi
electra-tf bench serving --run "$WORK/run" --work "$WORK/work" --rounds 3 --calls 200 --timed-batches 10 \
  --impls saved_model,saved_model_bf16,onnxruntime,onnxruntime_int8,litert_int8 \
  --out "$HERE/serving.jsonl"
RUN="$WORK/run" WORK="$WORK/work" python "$HERE/../serving-bf16const-2026-11-29/agree.py" > "$HERE/agree.json"
