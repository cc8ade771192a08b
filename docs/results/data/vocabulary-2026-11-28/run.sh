#!/usr/bin/env bash
# docs/results/vocabulary.md's figures. From the repository root, with the package's
# environment active:
#   bash docs/results/data/vocabulary-2026-11-28/run.sh CACHE_DIR WORK_DIR OLD_CHECKOUT
# CACHE_DIR: where the snippets and BBC articles are fetched (electra_tf.data.public);
# WORK_DIR: scratch; OLD_CHECKOUT: a checkout of the commit before the change (c6ec2e1),
# whose `prepare` is timed as "before". One thread each (the machine is shared), niced.
# STEPS="vocab prepare" (default) runs both parts; STEPS=prepare appends the prepare calls.
set -u
STEPS=${STEPS:-vocab prepare}
HERE=docs/results/data/vocabulary-2026-11-28
PY=${PYTHON:-python}
CACHE=$1 WORK=$2 OLD=$3
OUT=$HERE/results.jsonl
NEW=$(pwd)
export TF_CPP_MIN_LOG_LEVEL=3 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 RAYON_NUM_THREADS=1
record() { echo "$1" | tee -a "$OUT"; }
B="nice -n 10 $PY $HERE/bench_vocabulary.py"

case $STEPS in *vocab*) : > "$OUT" ;; esac
record "{\"kind\": \"machine\", \"cpu\": \"$(lscpu | grep 'Model name' | sed 's/.*: *//')\", \"cores\": $(nproc), \"date\": \"$(date -u +%FT%TZ)\"}"
if [[ $STEPS == *vocab* ]]; then
PYTHONPATH=$NEW $B corpus --cache "$CACHE" --out "$WORK/c4" --megabytes 4 | tee -a "$OUT"
PYTHONPATH=$NEW $B corpus --cache "$CACHE" --out "$WORK/c1" --megabytes 4 --every 4 | tee -a "$OUT"

# The vocabulary step: tokenizers twice (the bytes must match), tf-text stopped at 5 minutes.
for corpus in c4 c1; do
  PYTHONPATH=$NEW $B vocab --corpus "$WORK/$corpus" --learner tokenizers --vocab "$WORK/$corpus/vocab-tokenizers.txt" | tee -a "$OUT"
  RAYON_NUM_THREADS=2 PYTHONPATH=$NEW $B vocab --corpus "$WORK/$corpus" --learner tokenizers --vocab "$WORK/$corpus/vocab-tokenizers-again.txt" | tee -a "$OUT"
  if cmp -s "$WORK/$corpus/vocab-tokenizers.txt" "$WORK/$corpus/vocab-tokenizers-again.txt"; then same=true; else same=false; fi
  record "{\"kind\": \"determinism\", \"corpus\": \"$corpus\", \"same_bytes\": $same, \"sha256\": \"$(sha256sum "$WORK/$corpus/vocab-tokenizers.txt" | cut -c1-16)\"}"
  if ! PYTHONPATH=$NEW timeout 300 $B vocab --corpus "$WORK/$corpus" --learner tf-text --vocab "$WORK/$corpus/vocab-tf-text.txt" | tee -a "$OUT" | grep -q seconds; then
    record "{\"kind\": \"vocabulary_step\", \"corpus\": \"$corpus\", \"learner\": \"tf-text\", \"stopped_after_s\": 300}"
  fi
  for vocab in "$WORK/$corpus"/vocab-tokenizers.txt "$WORK/$corpus"/vocab-tf-text.txt; do
    [ -f "$vocab" ] && PYTHONPATH=$NEW $B quality --corpus "$WORK/$corpus" --vocab "$vocab" | tee -a "$OUT"
  done
done
fi

# The whole prepare call, start-up included (one worker), after and before.
prepare() {  # name checkout timeout
  rm -rf "$WORK/out-$1"
  local start end rc
  start=$(date +%s.%N)
  # run from the checkout: `python -m` puts the working directory before PYTHONPATH
  (cd "$2" && PYTHONPATH=$2 timeout "$3" nice -n 10 $PY -m electra_tf.cli prepare --input "$WORK/c4/train.txt" \
    --output-dir "$WORK/out-$1" --vocab-size 2000 --workers 1 --quiet > "$WORK/prepare-$1.json")
  rc=$?
  end=$(date +%s.%N)
  if [ $rc -eq 0 ]; then
    $PY -c "import json,sys; r=json.load(open('$WORK/out-$1/prepare_report.json')); print(json.dumps({'kind': 'prepare_call', 'code': '$1', 'commit': '$(git -C "$2" rev-parse --short HEAD)', 'wall_s': round($end-$start, 1), 'timing': r['timing'], 'vocabulary': r['vocabulary'], 'examples': r['examples'], 'tokens': r['tokens']}))" | tee -a "$OUT"
  else
    record "{\"kind\": \"prepare_call\", \"code\": \"$1\", \"exit\": $rc, \"stopped_after_s\": $3}"
  fi
}
if [[ $STEPS == *prepare* ]]; then
  prepare before "$OLD" 420
  prepare after "$NEW" 600
fi
