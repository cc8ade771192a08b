"""Our pre-training step against Model Garden's and Hugging Face PyTorch's, interleaved.

    electra-tf bench peers --recipe small --batch 32 --rounds 3 --out peers.jsonl

Each round first times the fp32 matmul ceiling (`floor.matmul_ceiling`), then runs
`bench step` once per implementation, each in a process of its own, in the order
given (reversed in even rounds, so none always runs first or last). Every run prints
the JSON line `bench step` prints, written to `--out` as soon as it ends, so an
interrupted session keeps its finished runs; a run that fails is recorded as a
`peer_error` line and the others go on. At the end one `peers_summary` line per
implementation gives the median tokens/s [min, max], its share of the round's
ceiling, and its ratio to each other implementation paired per round (the median
and range of the rounds' ratios: the figure to read when the machine is noisy).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys

__all__ = ["PeersOptions", "run", "schedule", "summarize", "table"]

#: `bench step --impl` names, in the default order.
DEFAULT_IMPLS = ("model_garden", "pytorch", "electra_tf")


@dataclasses.dataclass
class PeersOptions:
    """What `electra-tf bench peers` runs (its flags, one field each)."""

    recipe: str = "small"
    batch: int = 32
    seq: int = 128
    rounds: int = 3
    impls: tuple = DEFAULT_IMPLS
    budget: float = 45.0  # timed seconds per run (`bench step --budget`)
    warmup: int = 3
    steps: int = 20
    min_steps: int = 5
    ceiling: bool = True
    out: str = ""  # JSON-lines file the runs are appended to as they end
    timeout: float = 1800.0  # seconds before a run is stopped and recorded as failed
    overrides: tuple = ()


def schedule(impls, rounds: int):
    """[(round, impl)]: `impls` in order in odd rounds, reversed in even ones."""
    order = []
    for number in range(1, rounds + 1):
        names = list(impls) if number % 2 else list(reversed(impls))
        order.extend((number, name) for name in names)
    return order


def _step_command(options: PeersOptions, impl: str, number: int) -> list:
    from electra_tf.bench.step import BACKENDS

    command = [sys.executable, "-m", "electra_tf.bench", "step", "--impl", impl]
    if impl in BACKENDS:  # the Keras backend is chosen before keras is imported
        command = ["env", f"KERAS_BACKEND={BACKENDS[impl]}", *command]
    command += ["--recipe", options.recipe, "--batch", str(options.batch)]
    command += ["--seq", str(options.seq), "--round", str(number)]
    command += ["--budget", str(options.budget), "--warmup", str(options.warmup)]
    command += ["--steps", str(options.steps), "--min-steps", str(options.min_steps)]
    for override in options.overrides:
        command += ["--set", override]
    return command


_CEILING = (
    "import json; from electra_tf.bench.floor import matmul_ceiling; "
    "print(json.dumps(matmul_ceiling()))"
)


def _launch(command, timeout: float):
    """(return code, stdout, stderr) of `command`, in the environment of this process."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return None, expired.stdout or "", f"stopped after {timeout:.0f} s"
    return done.returncode, done.stdout, done.stderr


def _last_record(stdout: str):
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def interleave(command, impls, rounds: int, *, error_kind: str, summarize, out: str = "",
               emit=print, launch=_launch, timeout: float = 3600.0, before_round=None,
               shown=None) -> list:  # fmt: skip
    """Each of `impls` once per round, each in its own process (`command(impl, round)`), in
    `schedule`'s order; every record (or `{"kind": error_kind, ...}` with the stderr tail)
    is appended to `out` as JSON and emitted (`shown(record)`, default all of it); then
    `summarize(records)`'s lines. `before_round(number, keep)` runs first in each round.
    The first record says what it ran on (`electra_tf.bench.machine`)."""
    from electra_tf.bench.machine import machine

    records, started = [], set()

    def keep(record):
        records.append(record)
        if out:
            with open(out, "a") as handle:
                handle.write(json.dumps(record, sort_keys=True) + "\n")
        emit(shown(record) if shown else record)

    keep(machine())
    for number, impl in schedule(impls, rounds):
        if before_round is not None and number not in started:
            started.add(number)
            before_round(number, keep)
        code, stdout, stderr = launch(command(impl, number), timeout)
        record = _last_record(stdout) if code == 0 else None
        if record is None:
            tail = (stderr or "").strip().splitlines()[-3:]
            record = {"kind": error_kind, "impl": impl, "round": number, "returncode": code,
                      "stderr_tail": tail}  # fmt: skip
        keep(record)
    for line in summarize(records):
        keep(line)
    return records


def run(options: PeersOptions, emit=print, launch=_launch) -> list:
    """Runs the schedule; emits and returns every record, the summary lines last."""

    def ceiling(number, keep):
        code, stdout, _ = launch([sys.executable, "-c", _CEILING], options.timeout)
        found = _last_record(stdout) if code == 0 else None
        if found is not None:
            keep({"kind": "matmul_ceiling", "round": number, **found})

    return interleave(
        lambda impl, number: _step_command(options, impl, number), options.impls,
        options.rounds, error_kind="peer_error", summarize=summarize, out=options.out,
        emit=emit, launch=launch, timeout=options.timeout,
        before_round=ceiling if options.ceiling else None,
    )  # fmt: skip


def _spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(records) -> list:
    """One `peers_summary` record per implementation of `records` (`bench step` lines).

    Ratios are paired: in each round where both ran, this implementation's tokens/s over
    the other's; the median [min, max] over those rounds.
    """
    steps = [r for r in records if r.get("kind") == "peer_step"]
    ceilings = {r["round"]: r["gflops"] for r in records if r.get("kind") == "matmul_ceiling"}
    by_impl = {}
    for record in steps:
        by_impl.setdefault(record["impl"], {})[record["round"]] = record
    lines = []
    for impl, rounds in by_impl.items():
        tokens = [r["tokens_per_s"] for r in rounds.values()]
        line = {
            "kind": "peers_summary",
            "impl": impl,
            "peer": next(iter(rounds.values()))["peer"],
            "runs": len(rounds),
            "tokens_per_s": _spread(tokens),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in rounds.values()),
        }
        shares = [r["model_gflops_per_s"] / ceilings[n] for n, r in rounds.items() if n in ceilings]
        if shares:
            line["of_ceiling"] = _spread(shares)
        for other, other_rounds in by_impl.items():
            paired = [
                r["tokens_per_s"] / other_rounds[n]["tokens_per_s"]
                for n, r in rounds.items()
                if other != impl and n in other_rounds
            ]
            if paired:
                line[f"vs_{other}"] = _spread(paired)
        lines.append(line)
    return lines


def table(summary) -> str:
    """The `peers_summary` lines as a markdown table (medians [min-max] over rounds)."""

    def cell(spread, digits=2):
        if not spread:
            return "-"
        low, mid, high = spread["min"], spread["median"], spread["max"]
        if digits == 0:
            return f"{mid:,.0f} [{low:,.0f}-{high:,.0f}]"
        return f"{mid:.{digits}f} [{low:.{digits}f}-{high:.{digits}f}]"

    impls = [line["impl"] for line in summary]
    header = ["implementation", "runs", "tokens/s", *[f"vs {i}" for i in impls]]
    header += ["of ceiling", "peak RSS MB"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for line in summary:
        ratios = [
            "1.00" if other == line["impl"] else cell(line.get(f"vs_{other}")) for other in impls
        ]
        values = [line["impl"], str(line["runs"]), cell(line["tokens_per_s"], 0), *ratios]
        values += [cell(line.get("of_ceiling")), f"{line['peak_rss_mb']:,.0f}"]
        rows.append("| " + " | ".join(values) + " |")
    return "\n".join(rows)
