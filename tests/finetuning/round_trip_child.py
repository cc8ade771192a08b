"""The fresh process of the round-trip test: --init from each run, predict, export, predict.

`python round_trip_child.py PLAN.json`: PLAN maps each run folder to its inputs (files of
every layout, and command-line texts) and where to write. This process never trained
anything, so each step finds the task classes by itself, as a user's new shell does.
"""

import contextlib
import io
import json
import sys

from electra_tf.cli import main
from electra_tf.tasks.initialization import load_initialization

plan = json.loads(open(sys.argv[1]).read())
out = {}
for run, spec in plan.items():
    # --init from the fine-tuned run first, before anything else registers the classes.
    init = load_initialization(run)
    results = {"init_hidden": init.encoder_config["hidden_dim"]}
    assert main(["export", "--checkpoint", run, "--out", spec["export"]]) == 0
    for model in (run, spec["export"]):
        for layout, path in spec["files"].items():
            target = f"{spec['workdir']}/{len(results)}.jsonl"
            assert main(["predict", "--model", model, "--input", path, "--output", target]) == 0
            results[f"{model}|{layout}"] = [json.loads(line) for line in open(target)]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            pairs = [a for p in spec.get("pairs") or [] for a in ("--text-pair", p)]
            assert main(["predict", "--model", model, *spec["texts"], *pairs]) == 0
        results[f"{model}|texts"] = [json.loads(line) for line in printed.getvalue().splitlines()]
    out[run] = results
print(json.dumps(out))
