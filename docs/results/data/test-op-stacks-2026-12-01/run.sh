#!/bin/bash
# 3 interleaved rounds A, B of the subset; one JSON line per run in results.jsonl
. /work/main/.venv/bin/activate
FILES="tests/serving/test_task_export_bfloat16.py tests/finetuning/test_question_answering.py tests/serving/test_task_export.py tests/finetuning/test_keras_api.py"
for round in 1 2 3; do
  for side in A B; do
    dir=/work/exp$side
    cd $dir
    log=/work/logs/stacks/$side-$round
    start=$(date +%s.%N)
    PYTHONPATH=$dir /usr/bin/time -v pytest -q -n 2 --dist loadfile -p no:cacheprovider $FILES > $log.out 2> $log.time
    rc=$?
    end=$(date +%s.%N)
    python3 - "$side" "$round" "$rc" "$start" "$end" "$log.time" "$log.out" >> /work/logs/stacks/results.jsonl <<'PY'
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
