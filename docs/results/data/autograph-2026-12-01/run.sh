#!/bin/bash
# AutoGraph off in distributed_fit (434435c) and in the hub pair (dc21477): the old code
# (a722cb2) against the new (7263053), interleaved, each in fresh processes; JSON lines to
# results.jsonl beside this script. Run from a clone of the repository with its .venv.
set -e
HERE=$(cd "$(dirname "$0")" && pwd); REPO=$(git -C "$HERE" rev-parse --show-toplevel)
OLD=/tmp/autograph-old NEW=/tmp/autograph-new SCRATCH=/tmp/autograph-scratch
rm -rf $OLD $NEW $SCRATCH; mkdir -p $SCRATCH
git -C "$REPO" worktree add -f $OLD a722cb2 >/dev/null; git -C "$REPO" worktree add -f $NEW 7263053 >/dev/null
. "$REPO/.venv/bin/activate"; lscpu | grep "Model name" > "$HERE/machine.txt"
for round in 1 2 3; do
  for side in old new; do
    tree=$([ $side = old ] && echo $OLD || echo $NEW)
    PYTHONPATH=$tree TF_CPP_MIN_LOG_LEVEL=3 python "$HERE/pair.py" $side "$tree/tests" $SCRATCH 2>/dev/null | tail -1 >> "$HERE/results.jsonl"
    PYTHONPATH=$tree TF_CPP_MIN_LOG_LEVEL=3 python "$HERE/hub.py" $side "$tree/tests" 2>/dev/null | tail -1 >> "$HERE/results.jsonl"
  done
done
git -C "$REPO" worktree remove --force $OLD; git -C "$REPO" worktree remove --force $NEW
