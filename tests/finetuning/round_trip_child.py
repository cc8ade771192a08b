"""The fresh process of the round-trip test: --init from each run, predict, export, predict.

`python round_trip_child.py PLAN.json [RAW.json]`: PLAN maps each run folder to its inputs
(files of every layout, and command-line texts) and where to write (and whether it is already
exported). RAW, when given, is served first, before electra_tf is imported: {"loop": the
test's RAW_LOOP, "script": its serving script, "jobs": [folder, texts, pairs] per export}.
This process never trained anything, so each step finds the task classes by itself, as a
user's new shell does.
"""

import contextlib
import io
import json
import sys


def serve_raw(raw):
    """Runs RAW's loop (the test's RAW_LOOP) over its exports, as its own process would:
    returns each export's rows."""
    argv, stdin = sys.argv, sys.stdin
    sys.argv, sys.stdin = ["-c", raw["script"]], io.StringIO(json.dumps(raw["jobs"]))
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(raw["loop"], {"__name__": "__main__"})
    finally:
        sys.argv, sys.stdin = argv, stdin
    return json.loads(printed.getvalue().strip().splitlines()[-1])


plan = json.loads(open(sys.argv[1]).read())
out = {}
if len(sys.argv) > 2:  # RAW.json: the exports' raw serving_default first, before electra_tf
    out["raw"] = serve_raw(json.loads(open(sys.argv[2]).read()))

from electra_tf.cli import main  # noqa: E402
from electra_tf.tasks.initialization import load_initialization  # noqa: E402

for run, spec in plan.items():
    # --init from the fine-tuned run first, before anything else registers the classes.
    init = load_initialization(run)
    results = {"init_hidden": init.encoder_config["hidden_dim"]}
    if not spec.get("exported"):  # else exported by the test, in its own process
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
