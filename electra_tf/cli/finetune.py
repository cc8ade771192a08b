"""`electra-tf finetune`: fine-tune on a named task or on your own files, keep the best model."""

from __future__ import annotations

from pathlib import Path

from electra_tf.cli.common import BACKENDS, add_overrides, print_json, use_backend
from electra_tf.tasks.config import add_flags, flag_assignments
from electra_tf.tasks.registry import module_kind_names

__all__ = ["add_parser"]

TASK_HELP = (
    "a named task: cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte, movie_reviews, movie_ratings, "
    "squad1 or squad2 (or give --train/--dev files)"
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune on a named task or your own labelled files; keeps the best model",
        description="Fine-tunes an encoder (a checkpoint, an export, a keras-hub preset, "
        "Hugging Face or reference weights, a fine-tuned run, or scratch) on a named task or on "
        "your own CSV/TSV/JSONL/CoNLL files. Each epoch is scored on dev; the best epoch of the "
        "best seed is kept in OUTPUT_DIR/model/ (predict with `electra-tf predict`, serve with "
        "`electra-tf export --checkpoint OUTPUT_DIR`), with predictions for the other splits and "
        "results over --seeds runs (median, mean, spread). Re-running the command resumes.",
    )
    parser.add_argument(
        "--init",
        required=True,
        help="a run or checkpoint folder, an exported SavedModel, a keras-hub preset, a Hugging "
        "Face folder, a TF1 checkpoint, a fine-tuned run, scratch:RECIPE or scratch:SOURCE",
    )
    parser.add_argument("--task", help=TASK_HELP)
    _add_own_files_flags(parser)
    _add_named_task_flags(parser)
    parser.add_argument("--vocab-file", help="vocabulary, when the initialization has none")
    parser.add_argument("--recipe", help="fine-tuning recipe (default: the task's own)")
    add_overrides(
        parser, "override a fine-tuning setting, e.g. --set learning_rate=1e-4", "KEY=VALUE"
    )
    add_flags(parser.add_argument_group("settings (FinetuneConfig; also --set KEY=VALUE)"))
    parser.add_argument(
        "--output-dir", help="the run folder (default runs/finetune-TASK); holds the kept model"
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="Keras backend to train on (sets KERAS_BACKEND; default: KERAS_BACKEND, else "
        "tensorflow); a run on jax or torch keeps its epochs as variables.npz and resumes "
        "bit-identically there; jax keeps its compiled programs in ~/.cache/electra-tf/jax "
        "(JAX_COMPILATION_CACHE_DIR: elsewhere); `electra-tf export` writes its model on "
        "tensorflow",
    )
    parser.set_defaults(handler=run)


def _add_own_files_flags(parser) -> None:
    """Your own labelled files: their paths, columns, format and kind."""
    own = parser.add_argument_group("your own files (instead of --task)")
    own.add_argument(
        "--train", help="training file (.csv, .tsv, .jsonl, CoNLL .conll, or SQuAD .json)"
    )
    own.add_argument("--dev", help="dev file: chooses the epoch and the kept seed")
    own.add_argument("--test", help="test file: scored once if labelled, else only predicted")
    own.add_argument("--text-column", default="text", help="the text column (default text)")
    own.add_argument("--text-pair-column", help="the second text of pair tasks")
    own.add_argument("--label-column", default="label", help="the label column (default label)")
    own.add_argument("--format", choices=["csv", "tsv", "jsonl", "conll"], help="file format")
    for name, default, what in QA_COLUMNS:
        own.add_argument(
            f"--{name}-column", default=default, help=f"question answering: {what} ({default})"
        )
    own.add_argument(
        "--kind",
        help=f"one of the registered kinds ({', '.join(module_kind_names())}); default: "
        "inferred (lists of labels: multi_label; numbers not "
        "all integers: regression; CoNLL files: tagging; SQuAD JSON files and tables with "
        "question and context columns: question_answering; else classification)",
    )
    own.add_argument("--regression", action="store_true", help="same as --kind regression")
    own.add_argument("--labels", help="label names in class-id order, comma-separated")
    own.add_argument("--label-delimiter", help="split CSV/TSV label cells (multi-label)")


def _add_named_task_flags(parser) -> None:
    """Where a named task's data comes from."""
    named = parser.add_argument_group("named tasks' data")
    named.add_argument("--data-dir", help="folder with the task's files (GLUE TSVs, SQuAD JSON)")
    named.add_argument("--data", help="the movie-review snippets file")
    named.add_argument("--fetch", action="store_true", help="download the movie-review snippets")
    named.add_argument("--cache-dir", default="data", help="download cache (default data)")
    named.add_argument("--tfds", action="store_true", help="read GLUE from TFDS (glue/TASK)")
    named.add_argument("--tfds-data-dir", help="TFDS data folder")


QA_COLUMNS = (
    ("question", "question", "the question column"),
    ("context", "context", "the passage column"),
    ("answer", "answers", "the answer column (text, list or SQuAD's dict; empty: none)"),
    ("answer-start", "answer_start", "the answer's character offset (else its first place)"),
)


def _overrides(args) -> list[str]:
    return [*args.overrides, *flag_assignments(args)]


def run(args) -> int:
    use_backend(args, "finetune")
    from electra_tf.config import ConfigError

    if bool(args.task) == bool(args.train):
        raise ConfigError("Give either --task NAME or your own --train and --dev files.")
    report = _named_task(args) if args.task else _own_files(args)
    print_json(
        {
            "task": report["task"],
            "summary": report["summary"],
            "kept": report["kept"],
            "model": report["model"],
            "predictions": report["predictions"],
            "skipped": report.get("skipped")
            or {split: record["skipped"] for split, record in report.get("data", {}).items()},
            "seconds": report["seconds"],
        }
    )
    return 0


def _named_task(args) -> dict:
    """`--task NAME`: a paper task or the movie reviews, from their files or TFDS."""
    from electra_tf.finetuning.run import finetune_task

    return finetune_task(
        args.task,
        args.init,
        recipe=args.recipe,
        overrides=_overrides(args),
        vocab_file=args.vocab_file,
        data_dir=args.data_dir,
        movie_file=args.data,
        fetch_dir=Path(args.cache_dir) / "corpora" if args.fetch else None,
        tfds=args.tfds,
        tfds_data_dir=args.tfds_data_dir,
        output_dir=args.output_dir or f"runs/finetune-{args.task}",
    )


def _own_files(args) -> dict:
    """`--train F --dev F`: the user's labelled files, their columns named by the flags."""
    from electra_tf.config import ConfigError
    from electra_tf.datasets.files import Columns
    from electra_tf.finetuning.user_task import finetune_files

    if not args.dev:
        raise ConfigError("--train needs a --dev file: it chooses the epoch and the model.")
    return finetune_files(
        args.init,
        train=args.train,
        dev=args.dev,
        test=args.test,
        columns=Columns(
            args.text_column,
            args.text_pair_column,
            args.label_column,
            args.format,
            args.label_delimiter,
            args.question_column,
            args.context_column,
            args.answer_column,
            args.answer_start_column,
        ),
        kind="regression" if args.regression else args.kind,
        labels=args.labels.split(",") if args.labels else None,
        recipe=args.recipe,
        overrides=_overrides(args),
        vocab_file=args.vocab_file,
        output_dir=args.output_dir,
    )
