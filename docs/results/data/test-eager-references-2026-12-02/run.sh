#!/usr/bin/env bash
# A/B of the eager default twins (issue 57.4): the eight touched test files, as the suite
# runs them (-n 2 --dist loadfile), A = ac0e4ce in /work/base, B = c0955b9 in /work/expA,
# rounds A B / B A, nothing else running. Appends one JSON line per run to results.jsonl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
files="tests/pretraining/test_torch_run.py tests/pretraining/test_portable_init.py
tests/finetuning/test_finetune_backends.py tests/experiments/test_adaptation_corpora.py
tests/bench/test_precision.py tests/pretraining/test_resume.py tests/test_paths_recorded.py
tests/pretraining/test_warm_start.py"
run() {  # $1 label, $2 tree, $3 round
  cd "$2"
  local t0 t1 out
  out=$(mktemp)
  /usr/bin/time -f "%e %U %S" -o "$out.time" env PYTHONPATH="$2" \
    "$VENV/bin/pytest" -q -p no:cacheprovider -n 2 --dist loadfile $files > "$out" 2>&1 || true
  read -r wall user sys < "$out.time"
  summary=$(tail -1 "$out")
  python3 - "$1" "$3" "$wall" "$user" "$sys" "$summary" "$(git rev-parse --short HEAD)" <<'PY' >> "$here/results.jsonl"
import json, sys, time
label, rnd, wall, user, sys_, summary, rev = sys.argv[1:]
print(json.dumps({"arm": label, "round": int(rnd), "rev": rev, "wall_s": float(wall),
                  "cpu_s": round(float(user) + float(sys_), 2), "summary": summary,
                  "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
PY
  tail -1 "$here/results.jsonl"
}
VENV=${VENV:-/work/main/.venv}
run A /work/base 1; run B /work/expA 1
run B /work/expA 2; run A /work/base 2
