#!/bin/bash
# 3 interleaved rounds A, B of the subset; one JSON line per run in results.jsonl
. /work/main/.venv/bin/activate
FILES="tests/finetuning/test_question_answering.py tests/finetuning/test_engine.py tests/finetuning/test_keras_api.py tests/test_durability.py"
for round in 1 2 3; do
  for side in A B; do
    dir=/work/exp$side
    cd $dir
    log=/work/logs/threads/$side-$round
    start=$(date +%s.%N)
    PYTHONPATH=$dir /usr/bin/time -v pytest -q -n 2 --dist loadfile -p no:cacheprovider $FILES > $log.out 2> $log.time
    rc=$?
    end=$(date +%s.%N)
    python3 - "$side" "$round" "$rc" "$start" "$end" "$log.time" "$log.out" >> /work/logs/threads/results.jsonl <<'PY'
import sys, json, re
side, rnd, rc, start, end, tfile, ofile = sys.argv[1:]
t = open(tfile).read()
u = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1))
s = float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
tail = open(ofile).read().strip().splitlines()[-1]
print(json.dumps({"side": side, "round": int(rnd), "rc": int(rc), "wall_s": round(float(end) - float(start), 2), "cpu_s": round(u + s, 2), "summary": tail}))
PY
  done
done
