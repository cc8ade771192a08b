#!/usr/bin/env bash
# LiteRT's LayerNorm in 9 ops (docs/results/serving.md, "LayerNorm in one op fewer"), from a
# clone with `pip install -e ".[test]"`, outside its root (cd /tmp). RUN and OLD_WORK: the
# fine-tuned run and the `bench serving --work` folder of ../zen5-2026-11-28/run.sh, built by
# the code before this change; NEW_WORK gets this code's LiteRT forms. About 10 minutes.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run}  OLD_WORK=${OLD_WORK:-/tmp/serve/work}  NEW_WORK=${NEW_WORK:-/tmp/serve/work-ln}
rm -rf "$NEW_WORK" && cp -r "$OLD_WORK" "$NEW_WORK" && rm -rf "$NEW_WORK/litert" "$NEW_WORK/litert_int8"
python -c "
import sys
from electra_tf.tasks.litert import export_litert
from electra_tf.tasks.model_folder import load_finetuned
m, info = load_finetuned(sys.argv[1])
for impl, q in (('litert', None), ('litert_int8', 'int8')):
    export_litert(m, info, sys.argv[2] + '/' + impl, model_name='m', quantize=q)
" "$RUN" "$NEW_WORK"
for q in none int8; do
  electra-tf export --checkpoint "$RUN" --format litert --quantize $q --out "/tmp/ln-$q" \
    > "$HERE/export-litert-$q.json"
done
python "$HERE/lite_ab.py" "$OLD_WORK/litert_int8/m" "$NEW_WORK/litert_int8/m" "$OLD_WORK/texts.json" 6 \
  > "$HERE/ab-int8.jsonl"
python "$HERE/lite_ab.py" "$OLD_WORK/litert/m" "$NEW_WORK/litert/m" "$OLD_WORK/texts.json" 6 \
  > "$HERE/ab-float32.jsonl"
electra-tf bench serving --run "$RUN" --work "$NEW_WORK" --impls litert_int8,onnxruntime_int8,litert \
  --rounds 3 --calls 200 --timed-batches 10 --out "$HERE/bench.jsonl"
