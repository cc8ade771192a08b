#!/usr/bin/env bash
# RULE.md's runs. NEW: a clone at 3c7ae18, OLD: a worktree at 78b5398 (both with the venv
# of NEW active); FILES: make_files.py's output; M: all-MiniLM-L6-v2 (the demo's data).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NEW=${NEW:-/work/main} OLD=${OLD:-/work/wt-old} FILES=${FILES:-/tmp/jaxcc/files}
M=${M:-/tmp/democlone/data/models/all-MiniLM-L6-v2} W=${W:-/tmp/jaxcc}
export TF_CPP_MIN_LOG_LEVEL=3
one() {  # arm round code-folder [env...]
  local arm=$1 round=$2 code=$3; shift 3
  rm -rf "$W/out-$arm-$round"
  local t0=$(date +%s.%N)
  env -u JAX_COMPILATION_CACHE_DIR "$@" PYTHONPATH="$code" python -m electra_tf.cli finetune --backend jax \
    --init "$M" --train "$FILES/train.csv" --dev "$FILES/dev.csv" --epochs 2 --seeds 3 \
    --batch-size 32 --output-dir "$W/out-$arm-$round" > "$W/$arm-$round.log" 2>&1
  local t1=$(date +%s.%N)
  python - "$arm" "$round" "$t0" "$t1" "$W/out-$arm-$round/results.json" >> "$HERE/results.jsonl" <<'PY'
import json, sys
arm, rnd, t0, t1, res = sys.argv[1:]
r = json.load(open(res))
print(json.dumps({"arm": arm, "round": int(rnd), "wall_s": round(float(t1) - float(t0), 1),
                  "histories": [run["history"] for run in r["runs"]]}))
PY
}
python "$HERE/make_files.py" /tmp/serve/data "$FILES"
for round in 1 2; do
  arms="A B C"; [ $round = 2 ] && arms="C B A"
  for arm in $arms; do
    case $arm in
      A) one A $round "$OLD" XDG_CACHE_HOME="$W/xdg-A-$round" ;;
      B) rm -rf "$W/xdg-B-$round"; one B $round "$NEW" XDG_CACHE_HOME="$W/xdg-B-$round" ;;
      C) # the cache of a finished B run (round 1: made here first, untimed)
         if [ $round = 1 ]; then rm -rf "$W/xdg-C"; one Cwarmup 1 "$NEW" XDG_CACHE_HOME="$W/xdg-C"; fi
         one C $round "$NEW" XDG_CACHE_HOME="$W/xdg-C" ;;
    esac
  done
done
