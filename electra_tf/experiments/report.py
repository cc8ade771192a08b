"""Tables and plots of the experiments (`efficiency`, `generator_size`, `adaptation`).

Each experiment writes `<name>.md` (a title and a Markdown table), `<name>.json`
(every row, for rereading) and `<name>.png`; the functions here turn rows into
those, so the experiments themselves only run cells and collect rows.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

__all__ = [
    "efficiency_table",
    "random_init_line",
    "efficiency_plot",
    "generator_size_plot",
    "adaptation_table",
    "finetuned_table",
    "adaptation_plot",
    "adaptation_positions",
    "write_result",
]


@contextlib.contextmanager
def _figure(path: Path, size=(6, 4)):
    """Axes of a new figure, saved to `path` (120 dpi, grid on) when the block ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=size)
    try:
        yield axes
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def write_result(out: Path, name: str, result: dict, table: str, title: str) -> None:
    """`out/<name>.json` (the result) and `out/<name>.md` (title and table)."""
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{name}.md").write_text(f"# {title}\n\n{table}")


# From scratch: objectives and generator sizes ------------------------------------------------


def efficiency_table(rows, metric, label="objective") -> str:
    """Median and spread of `metric` per row (objective or generator size) and budget.

    Each row is one pre-training run (n = 1) measured with several fine-tuning (or probe)
    seeds, so its spread is the measurement's noise, not pre-training's; the table says so.
    Steps are given by both FLOP conventions (the runs use the paper's).
    """
    lines = [
        f"| {label} | pre-train FLOPs | steps (paper / sparse count) | pre-training runs "
        f"| {metric} median | std | min | max | fine-tuning seeds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sparse = r.get("steps_sparse", "-")
        lines.append(
            f"| {r[label]} | {r['train_flops']:.2e} | {r['steps']} / {sparse} | n = 1 | "
            f"{r['median']:.4f} | {r['std']:.4f} | {r['min']:.4f} | {r['max']:.4f} | "
            f"{r['seeds']} |"
        )
    lines += [
        "",
        "n = 1 pre-training run per row: the std, min and max are over fine-tuning seeds of "
        "that one run and say nothing of how a second pre-training run would differ.",
    ]
    return "\n".join(lines) + "\n"


def random_init_line(reference: dict) -> str:
    """The random-init probe's figure as a sentence ('' when the rows are not probes)."""
    if "random" not in reference:
        return ""
    r = reference["random"]
    return (
        f"\nThe same architecture at random initialisation: probe dev accuracy "
        f"{r['mean']:.4f} +- {r['std']:.4f} over {r['seeds']} seeds.\n"
    )


def _random_band(axes, reference) -> None:
    """The random-init probe's mean +- std as a grey band (probe measure only)."""
    if reference and "random" in reference:
        r = reference["random"]
        axes.axhspan(
            r["mean"] - r["std"], r["mean"] + r["std"], color="grey", alpha=0.2,
            label=f"random init ({r['seeds']} seeds, mean +- std)",
        )  # fmt: skip


def efficiency_plot(rows, metric, path: Path, label="objective", title="", reference=None):
    """`metric` against pre-training FLOPs, one line per objective, random init as a band."""
    with _figure(path) as axes:
        for key in dict.fromkeys(r[label] for r in rows):
            line = sorted((r for r in rows if r[label] == key), key=lambda r: r["train_flops"])
            axes.errorbar(
                [r["train_flops"] for r in line],
                [r["median"] for r in line],
                yerr=[r["std"] for r in line],
                marker="o",
                capsize=3,
                label=str(key),
            )
        _random_band(axes, reference)
        axes.set_xscale("log")
        axes.set_xlabel("pre-training FLOPs (Appendix E)")
        axes.set_ylabel(f"{metric} (median over seeds, bar = std)")
        axes.set_title(title)
        axes.legend()


def generator_size_plot(rows, metric, path: Path, title: str, reference=None) -> None:
    """`metric` against the generator's size relative to the discriminator's."""
    with _figure(path) as axes:
        x = [r["generator_fraction"] for r in rows]
        axes.errorbar(
            x, [r["median"] for r in rows], yerr=[r["std"] for r in rows], marker="o", capsize=3
        )
        _random_band(axes, reference)
        if reference and "random" in reference:
            axes.legend()
        axes.set_xscale("log", base=2)
        axes.set_xlabel("generator size / discriminator size")
        axes.set_ylabel(f"{metric} (median over seeds, bar = std)")
        axes.set_title(title)


# Adapting a released encoder ------------------------------------------------------------------


def adaptation_table(summary, reference: dict) -> str:
    """Probe test accuracy (mean +- std over seeds) per objective and budget, beside the
    unadapted encoder, bag of words and random init."""
    lines = [
        "| objective | pre-train FLOPs | steps | probe test accuracy (mean +- std) | dev mean "
        "| seeds | minutes per seed |",
        "|---|---|---|---|---|---|---|",
        f"| unadapted start | 0 | 0 | {reference['start_test']:.4f} | "
        f"{reference['start_dev']:.4f} | - | - |",
    ]
    for r in summary:
        lines.append(
            f"| {r['objective']} | {r['train_flops']:.2e} | {r['steps']} | "
            f"{r['test_mean']:.4f} +- {r['test_std']:.4f} | {r['dev_mean']:.4f} | "
            f"{r['seeds']} | {r['minutes_per_seed']:.1f} |"
        )
    lines += [
        "",
        f"Bag of words: test {reference['bow_test']:.4f}. Random init "
        f"({reference['random_seeds']} seeds): test {reference['random_mean']:.4f} +- "
        f"{reference['random_std']:.4f}.",
    ]
    return "\n".join(lines) + "\n"


def finetuned_table(summary, budget: float, config_line: str) -> str:
    """The fine-tuned second view at `budget` (`config_line`: the fine-tuning settings)."""
    lines = [
        "",
        f"## Second view: fine-tuned at {budget:.2e} FLOPs",
        "",
        f"Fine-tuning: {config_line}. Each objective's adaptation seeds 1..N, fine-tuned once "
        "each (fine-tuning seed = adaptation seed); the unadapted encoder fine-tuned N times.",
        "",
        "| start | fine-tuned test accuracy (mean +- std) | dev mean +- std | runs |",
        "|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['objective']} | {r['test_mean']:.4f} +- {r['test_std']:.4f} | "
            f"{r['dev_mean']:.4f} +- {r['dev_std']:.4f} | {r['seeds']} |"
        )
    return "\n".join(lines) + "\n"


def adaptation_positions(summary) -> tuple[dict, float | None]:
    """Where each objective's points stand on the adaptation plot's x axis.

    Returns:
        ({objective: (x values, rows in FLOP order)}, the single budget or None). With
        several budgets x is the training FLOPs; with one there is no line to draw, so the
        objectives stand side by side as categories 0, 1, ... and the budget is returned
        for the axis label.
    """
    budgets = sorted({r["budget"] for r in summary})
    positions = {}
    for index, objective in enumerate(dict.fromkeys(r["objective"] for r in summary)):
        line = sorted(
            (r for r in summary if r["objective"] == objective), key=lambda r: r["train_flops"]
        )
        xs = [index] * len(line) if len(budgets) == 1 else [r["train_flops"] for r in line]
        positions[objective] = (xs, line)
    return positions, (budgets[0] if len(budgets) == 1 else None)


def adaptation_plot(summary, reference, path: Path, title: str) -> None:
    """Probe test accuracy against continued pre-training FLOPs, one line per objective
    (with a single budget, the objectives side by side)."""
    positions, single_budget = adaptation_positions(summary)
    with _figure(path, size=(6.5, 4.2)) as axes:
        for objective, (xs, line) in positions.items():
            axes.errorbar(
                xs,
                [r["test_mean"] for r in line],
                yerr=[r["test_std"] for r in line],
                marker="o",
                capsize=3,
                label=objective,
            )
        axes.axhline(reference["start_test"], color="grey", linestyle="--", label="unadapted")
        axes.axhline(reference["bow_test"], color="grey", linestyle=":", label="bag of words")
        if single_budget is not None:
            axes.set_xticks(range(len(positions)), list(positions))
            axes.set_xlim(-0.5, len(positions) - 0.5)
            axes.set_xlabel(f"objective, each at {single_budget:.3g} continued pre-training FLOPs")
        else:
            axes.set_xscale("log")
            axes.set_xlabel("continued pre-training FLOPs (Appendix E)")
        axes.set_ylabel("probe test accuracy (mean over seeds, bar = std)")
        axes.set_title(title)
        axes.legend(fontsize=8)


def _paired(p: dict) -> str:
    return f"{p['mean']:+.4f} +- {p['se']:.4f}"


def corpora_table(result: dict) -> str:
    """The corpus x objective experiment's table (`adaptation_corpora`), markdown."""
    options, base = result["options"], result["unadapted"]
    seeds = options["finetune_seeds"]
    lines = [
        f"# Adapting {Path(result['start']).name}, then fine-tuning on {options['task']}",
        "",
        f"Fine-tuned on {result['train_examples']} training snippets with seeds 1-{seeds} "
        "(the same for every row; epoch kept on dev, test scored once). Paired difference: "
        "the row minus the unadapted encoder, seed by seed, mean +- SE; verdict by the "
        "declared rule (helps / hurts when the mean clears 2 SE on dev and on test).",
        "",
        "| encoder | steps (paper / sparse FLOPs) | held-out AUC / bigram | dev mean +- std "
        "| test mean +- std | paired dev | paired test | verdict | train min |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| unadapted | 0 | - | {base['dev_mean']:.4f} +- {base['dev_std']:.4f} | "
        f"{base['test_mean']:.4f} +- {base['test_std']:.4f} | | | | |",
    ]
    for cell in result["cells"]:
        held = cell["held_out"]
        auc = (
            f"{held['disc_auc']:.4f} / {held['bigram_baseline_disc_auc']:.4f}"
            if "bigram_baseline_disc_auc" in held
            else "-"
        )
        lines.append(
            f"| {cell['objective']} on {cell['corpus']} (x{cell['budget_multiple']:g}) | "
            f"{cell['steps']['paper']} / {cell['steps']['sparse']} | {auc} | "
            f"{cell['dev_mean']:.4f} +- {cell['dev_std']:.4f} | "
            f"{cell['test_mean']:.4f} +- {cell['test_std']:.4f} | "
            f"{_paired(cell['paired_dev'])} | {_paired(cell['paired_test'])} | "
            f"{cell['verdict']} | {cell['train_minutes']} |"
        )
    lines += ["", f"Best ELECTRA setting on dev: {result['best_electra_on_dev']}.", ""]
    return "\n".join(lines)


def corpora_plot(result: dict, path: Path) -> None:
    """Fine-tuned test accuracy per cell (every seed, and the mean), and the paired
    differences against the unadapted encoder with 2-SE bars, dev and test."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = result["cells"]
    names = ["unadapted"] + [
        f"{c['objective']}\n{c['corpus']} x{c['budget_multiple']:g}" for c in cells
    ]
    rows = [result["unadapted"], *cells]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    try:
        for x, row in enumerate(rows):
            left.scatter([x] * len(row["test"]), row["test"], color="tab:blue", s=12, alpha=0.6)
            left.scatter([x], [row["test_mean"]], color="black", marker="_", s=300)
        left.set_xticks(range(len(rows)), names, fontsize=7)
        left.set_ylabel("fine-tuned test accuracy (dots: seeds, bar: mean)")
        for offset, split, colour in ((-0.12, "dev", "tab:orange"), (0.12, "test", "tab:green")):
            xs = [i + offset for i in range(len(cells))]
            means = [c[f"paired_{split}"]["mean"] for c in cells]
            bars = [2 * c[f"paired_{split}"]["se"] for c in cells]
            right.errorbar(xs, means, yerr=bars, fmt="o", capsize=3, color=colour, label=split)
        right.axhline(0.0, color="grey", linestyle="--")
        right.set_xticks(range(len(cells)), names[1:], fontsize=7)
        right.set_ylabel("paired difference vs unadapted (bar: 2 SE)")
        right.legend(fontsize=8)
        for axes in (left, right):
            axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)
