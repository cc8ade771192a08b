#!/usr/bin/env bash
# The `--xla` export at batch 1 on the Intel Xeon, one round (a probe, not a bench):
# every SavedModel built by this code; ONNX files and texts reused from RULE3's work folder.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run} OLD=${OLD:-/tmp/serve/work-bf16c3} WORK=${WORK:-/tmp/serve/work-xla}
mkdir -p "$WORK"
for f in build.json texts.json vocab.txt hf model.onnx model_int8.onnx model_raw.onnx; do
  cp -r "$OLD/$f" "$WORK/"
done
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 1 --calls 200 --timed-batches 10 \
  --impls saved_model,saved_model_xla,onnxruntime --out "$HERE/probe.jsonl"
