#!/usr/bin/env bash
# The served classifier whose last block computes the [CLS] position alone
# (docs/results/serving.md), from a clone with `pip install -e ".[test]"`. 2 CPU cores, about
# 20 minutes. RUN: the fine-tuned run of ../serving-2026-11-27/run.sh (all-MiniLM-L6-v2 on
# 2,000 movie-review snippets).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run}
WORK=${WORK:-/tmp/serve/work-first}
for q in none int8; do  # the export's own accuracy check (dev and test)
  electra-tf export --checkpoint "$RUN" --format litert --quantize $q --out "/tmp/serve/first-$q" \
    > "$HERE/export-litert-$q.json"
done
# One call builds every served form into WORK, then times them (3 rounds).
electra-tf bench serving --run "$RUN" --work "$WORK" --rounds 3 --calls 200 \
  --timed-batches 10 --out "$HERE/bench.jsonl"
