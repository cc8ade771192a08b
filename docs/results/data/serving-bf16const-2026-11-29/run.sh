#!/usr/bin/env bash
# RULE.md's bench. RUN: the fine-tuned reviews classifier of ../intel-2026-11-29/run.sh;
# OLD: a `bench serving` work folder of the last stop (its ONNX and LiteRT files are reused;
# its SavedModels are left out, so this code exports them).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run} OLD=${OLD-/tmp/serve/work-lanes} WORK=${WORK:-/tmp/serve/work-bf16c}
OUT=${OUT:-}  # RULE2.md's bench: OUT=2 (serving2.jsonl, agree2.json); RULE3.md's: OUT=3 OLD=
lscpu > "$HERE/lscpu$OUT.txt"
if [ ! -d "$WORK" ] && [ -n "$OLD" ]; then  # OLD= (empty): the bench builds every form
  mkdir -p "$WORK"
  for f in build.json texts.json vocab.txt hf model.onnx model_int8.onnx model_raw.onnx litert litert_int8; do
    cp -r "$OLD/$f" "$WORK/"
  done
fi
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 3 --calls 200 --timed-batches 10 \
  --impls saved_model,saved_model_bf16,onnxruntime,onnxruntime_int8,litert_int8 \
  --out "$HERE/serving$OUT.jsonl"
WORK="$WORK" RUN="$RUN" python "$HERE/agree.py" > "$HERE/agree$OUT.json"
