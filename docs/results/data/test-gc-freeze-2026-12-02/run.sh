#!/bin/bash
# A/B of the per-file collect-and-freeze in tests/conftest.py (RULE.md): one pytest process
# (as one xdist worker) over five files, A = /work/base (97d0c6b), B = /work/expA (1236c94).
# gcplug.py (../test-suite-2026-12-02i/, a copy of it here when this ran) sums Python's collection
# time per process (gc.callbacks). OUT and the B tree are what ../test-gc-full-threshold-2026-12-02 changes.
OUT=${OUT:-/work/logs/gcfreeze}; mkdir -p "$OUT"; HERE=$(cd "$(dirname "$0")" && pwd)
. /work/main/.venv/bin/activate
FILES="tests/finetuning/test_engine.py tests/finetuning/test_task_models.py tests/bench/test_bench_output.py tests/test_durability.py tests/serving/test_task_export.py"
one() {  # $1 = A|B, $2 = round
  local tree=/work/base; [ "$1" = B ] && tree=/work/expA
  cd "$tree" && rm -f "$OUT/gc-$1-$2.tsv"*
  echo "$(date -u +%FT%TZ) start $1 $2 $(git rev-parse --short HEAD)" >> "$OUT/when.log"
  PYTHONPATH="$tree:$HERE/../test-suite-2026-12-02i" GCLOG="$OUT/gc-$1-$2.tsv" /usr/bin/time -v -o "$OUT/time-$1-$2.txt" \
    pytest -q -p no:cacheprovider -p gcplug $FILES > "$OUT/pytest-$1-$2.log" 2>&1
  echo "$(date -u +%FT%TZ) end $1 $2 rc=$?" >> "$OUT/when.log"
}
one A 1; one B 1; one B 2; one A 2
python3 "$HERE/summarize.py" "$OUT" > "$OUT/results.jsonl"
