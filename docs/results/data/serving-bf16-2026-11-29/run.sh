#!/usr/bin/env bash
# Issue 57.1: the bfloat16 SavedModel beside the float32 one and the int8 peers, on this CPU
# (lscpu.txt). Needs the fine-tuned run of ../intel-2026-11-29/run.sh in $RUN. Nothing else
# running. From a clone with `pip install -e ".[test]"`.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run}  WORK=${WORK:-/tmp/serve/work-bf16}
lscpu > "$HERE/lscpu.txt"
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 3 --calls 200 --timed-batches 10 \
  --impls saved_model,saved_model_bf16,litert_int8,onnxruntime,onnxruntime_int8 \
  --out "$HERE/serving.jsonl"
# The probes (each prints one JSON line): batch 1's product in each library by threads, TF's
# products by rows, the served encoder float32 vs bfloat16 by tokens, the SavedModel by
# (intra, inter) threads (sm.py reads $WORK/saved_model/m/1 and $WORK/texts.json).
for t in 1 2; do for lib in tf torch; do T=$t python "$HERE/mm.py" $lib; done; done >> "$HERE/mm.jsonl"
for t in 1 2; do python "$HERE/mm2.py" $t; done >> "$HERE/mm2.txt"
for r in 1 2; do python "$HERE/bf16c.py"; done >> "$HERE/bf16c.jsonl"
