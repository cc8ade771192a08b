#!/usr/bin/env bash
# docs/results/vocabulary.md's 61 MB figures. From the repository root, package environment active:
#   bash docs/results/data/vocabulary-64mb-2026-11-28/run.sh SRC_DIR WORK_DIR
# One thread each (TensorFlow and tokenizers); tf-text's learner is stopped after 1200 CPU seconds
# (ulimit -t), so its figure is a floor; CPU seconds are the figure that holds on a shared machine.
set -u
HERE=docs/results/data/vocabulary-64mb-2026-11-28
B=docs/results/data/vocabulary-2026-11-28/bench_vocabulary.py
PY=${PYTHON:-python}
SRC=$1 WORK=$2
OUT=$HERE/results.jsonl
export TF_CPP_MIN_LOG_LEVEL=3 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 RAYON_NUM_THREADS=1
echo "{\"kind\": \"machine\", \"cpu\": \"$(lscpu | grep 'Model name' | sed 's/.*: *//')\", \"cores\": $(nproc), \"date\": \"$(date -u +%FT%TZ)\"}" > "$OUT"
$PY $HERE/corpus64.py "$SRC" "$WORK/c64" | tee -a "$OUT"
$PY $B vocab --corpus "$WORK/c64" --learner tokenizers --vocab "$WORK/vocab-tok.txt" | tee -a "$OUT"
$PY $B quality --corpus "$WORK/c64" --vocab "$WORK/vocab-tok.txt" | tee -a "$OUT"
start=$(date +%s)
(ulimit -t 1200; $PY $B vocab --corpus "$WORK/c64" --learner tf-text --vocab "$WORK/vocab-tftext.txt") | tee -a "$OUT"
echo "{\"kind\": \"tf_text_exit\", \"exit\": ${PIPESTATUS[0]}, \"wall_s\": $(( $(date +%s) - start )), \"cpu_limit_s\": 1200}" | tee -a "$OUT"
# The whole prepare call with the default learner, start-up included.
start=$(date +%s.%N)
$PY -m electra_tf.cli prepare --input "$WORK/c64/train.txt" --output-dir "$WORK/out" --vocab-size 2000 \
  --workers 2 --quiet > /dev/null
echo "{\"kind\": \"prepare_call\", \"exit\": $?, \"wall_s\": $(echo "$(date +%s.%N) - $start" | bc)}" | tee -a "$OUT"
