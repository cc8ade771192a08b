#!/bin/bash
. /work/main/.venv/bin/activate
cd /work/base
FILES=$(cat /work/logs/workers/files.txt)
for round in 1 2; do
  for side in A B; do
    n=2; [ $side = B ] && n=3
    log=/work/logs/workers/$side-$round
    vmstat 5 > $log.vmstat & vm=$!
    start=$(date +%s.%N)
    PYTHONPATH=/work/base /usr/bin/time -v pytest -q -n $n --dist loadfile -p no:cacheprovider $FILES > $log.out 2> $log.time
    rc=$?
    end=$(date +%s.%N)
    kill $vm
    python3 - "$side" "$round" "$rc" "$start" "$end" "$log.time" "$log.out" "$n" >> /work/logs/workers/results.jsonl <<'PY'
import sys, json, re
side, rnd, rc, start, end, tfile, ofile, n = sys.argv[1:]
t = open(tfile).read()
u = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1))
s = float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
tail = open(ofile).read().strip().splitlines()[-1]
print(json.dumps({"side": side, "workers": int(n), "round": int(rnd), "rc": int(rc), "wall_s": round(float(end) - float(start), 2), "cpu_s": round(u + s, 2), "max_rss_kb": rss, "summary": tail}))
PY
  done
done
