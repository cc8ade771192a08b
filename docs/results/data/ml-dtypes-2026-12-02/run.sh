#!/usr/bin/env bash
# ml_dtypes 0.7.0 (what `pip install -e .` resolves today) against 0.6.0 (the pin), RULE.md.
# The venv has 0.7.0; B puts ml_dtypes 0.6.0's wheel, unpacked, first on PYTHONPATH.
# Needs: MLD06 = that folder; DATA = the download cache with MiniLM and the snippets.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/main/.venv}; py=$VENV/bin/python
MLD06=${MLD06:?unpacked ml_dtypes-0.6.0 wheel}; DATA=${DATA:?download cache}
lscpu > "$here/lscpu.txt"
one() {  # $1 arm, $2 round, $3 what, then the command
  local arm=$1 rnd=$2 what=$3; shift 3
  local pp=""; [ "$arm" = B ] && pp=$MLD06
  /usr/bin/time -f "%e %U %S %M" -o /tmp/mld-time env PYTHONPATH="$pp" TF_CPP_MIN_LOG_LEVEL=3 "$@" > /tmp/mld-out 2>&1
  read -r wall user sys rss < /tmp/mld-time
  local version; version=$(env PYTHONPATH="$pp" "$py" -c "import ml_dtypes; print(ml_dtypes.__version__)")
  echo "{\"arm\": \"$arm\", \"round\": $rnd, \"what\": \"$what\", \"ml_dtypes\": \"$version\", \"wall_s\": $wall, \"cpu_s\": $(echo "$user + $sys" | bc | sed "s/^\./0./"), \"max_rss_kb\": $rss, \"ended\": \"$(date -u +%FT%TZ)\"}" | tee -a "$here/results.jsonl"
}
# Deciding: a process that imports TensorFlow, 10 rounds, A B / B A.
for r in 1 2 3 4 5 6 7 8 9 10; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for arm in $order; do one $arm $r import_tensorflow "$py" -c "import tensorflow"; done
done
# Reported: ml_dtypes alone, and `prepare` (the start-up rule's command), 3 rounds each.
vocab=$DATA/models/all-MiniLM-L6-v2/vocab.txt
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for arm in $order; do
    one $arm $r import_ml_dtypes "$py" -c "import ml_dtypes"
    out=/tmp/mld-prepare-$arm; rm -rf "$out"
    one $arm $r prepare "$py" -m electra_tf.cli prepare --input "$DATA/corpora/movieReviewSnippets_GroundTruth.txt" \
      --vocab-file "$vocab" --output-dir "$out" --quiet
    (cd "$out" && find . -type f ! -name prepare_report.json | sort | xargs sha256sum) > "/tmp/mld-shards-$arm-$r.txt"
  done
  cmp "/tmp/mld-shards-A-$r.txt" "/tmp/mld-shards-B-$r.txt" && echo "{\"round\": $r, \"shards_identical\": true}" >> "$here/results.jsonl"
done
