#!/usr/bin/env bash
# The served classifier with the padding skipped (docs/results/serving.md), from a fresh clone
# with `pip install -e ".[test]"`. 2 CPU cores, about 30 minutes. RUN: the fine-tuned run of
# ../serving-2026-11-27/run.sh (all-MiniLM-L6-v2 on 2,000 movie-review snippets).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run}
WORK=${WORK:-/tmp/serve/work-packed}
for q in none int8; do  # the export's own accuracy check (dev and test)
  electra-tf export --checkpoint "$RUN" --format litert --quantize $q --out "/tmp/serve/lite-$q" \
    > "$HERE/export-litert-$q.json"
done
# The first call builds every served form into WORK (bench-with-build.jsonl: that run's
# peak RSS figures carry the building parent's, Linux keeps the maximum across exec); the
# second reuses them (bench.jsonl).
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/bench-with-build.jsonl"
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/bench.jsonl"
python "$HERE/padding.py" "$RUN" "$WORK" 5 > "$HERE/padding.json"  # padded against packed
