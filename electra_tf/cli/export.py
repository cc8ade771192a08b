"""`electra-tf export`: a checkpoint's discriminator in one format, or every format checked."""

from __future__ import annotations

import importlib.util
import json
import sys

from electra_tf.cli.common import print_json, select_backend

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a checkpoint's discriminator for serving and reuse",
        description="Writes a trained checkpoint as a TF Serving SavedModel (default), a "
        "TF-Hub-style encoder + preprocessor pair, a keras-hub ElectraBackbone preset, Hugging "
        "Face ELECTRA folders, or a reference (TF1) checkpoint; `--format all` writes the "
        "serving, hub and keras-hub formats, loads each back and compares it with the Keras "
        "model (exit status 1 if an id-based export differs by more than 1e-5).",
    )
    parser.add_argument(
        "--checkpoint",
        required=True,
        help="a step-N checkpoint folder, a run folder (its latest checkpoint), or a fine-tuned "
        "run of `electra-tf finetune` (a SavedModel taking raw text, returning label names)",
    )
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--format",
        choices=["serving", "hub", "keras-hub", "hugging-face", "reference", "all", "litert"],
        default="serving",
        help="what to write (default serving: DIR/<model-name>/<version>/; all: a checked "
        "release of serving, hub and keras-hub; litert: a fine-tuned text classifier as "
        "DIR/<model-name>/model.tflite, raw text in, tokenizer inside)",
    )
    parser.add_argument(
        "--quantize",
        choices=["none", "int8"],
        default="none",
        help="litert: int8 weights with dynamic-range int8 matmuls; the export scores the run's "
        "dev and test files with it and refuses a dev loss above 0.5 points (see --force)",
    )
    parser.add_argument(
        "--force", action="store_true", help="litert: keep an int8 model that fails the check"
    )
    parser.add_argument(
        "--model-name", help="TF Serving model name (default electra; a fine-tuned run: its task)"
    )
    parser.add_argument("--version", type=int, default=1, help="TF Serving model version")
    parser.add_argument(
        "--vocab-file", help="vocabulary (default: the one recorded in the checkpoint's config)"
    )
    parser.add_argument(
        "--seq-length",
        type=int,
        help="packed length of the text inputs (default 128; a fine-tuned run serves the length "
        "it was fine-tuned with and refuses the flag)",
    )
    parser.add_argument(
        "--no-lower-case",
        action="store_true",
        help="the vocabulary is cased (default: the casing the checkpoint's config records)",
    )
    _add_saved_model_flags(parser)
    parser.add_argument(
        "--allow-suspect",
        action="store_true",
        help="export a checkpoint written while its run was in trouble (refused by default)",
    )
    parser.set_defaults(handler=run)


def _add_saved_model_flags(parser) -> None:
    """The flags that shape a TF Serving SavedModel's graph."""
    parser.add_argument(
        "--xla",
        action="store_true",
        help="serving and all (and a fine-tuned run's serving export): run the SavedModel's "
        "encoder and head under XLA (faster per call at small batches; each new [batch, seq] "
        "shape compiles once; TF Serving needs --xla_cpu_compilation_enabled=true)",
    )
    parser.add_argument(
        "--bfloat16",
        action="store_true",
        help="a fine-tuned run's SavedModel: run the encoder in bfloat16, its weights stored "
        "as bfloat16 constants (faster on CPUs with AMX or AVX512_BF16; slower elsewhere; "
        "labels may change where two scores are within about 1%%)",
    )
    parser.add_argument(
        "--lanes",
        type=int,
        help="SavedModels (serving, all, a fine-tuned run's): independent chains per encoder "
        "block, run side by side on the inter-op threads; serve with at least that many "
        "inter-op threads (default: a fine-tuned run's 2 where the heads and feed-forward units "
        "split evenly, else 1; a pre-training checkpoint's 1; 1 with --xla)",
    )
    parser.add_argument(
        "--kernel-layout",
        choices=["auto", "transposed", "plain"],
        help="serving and all: store ELECTRA-Small's 256->1024 feed-forward kernels transposed "
        "too, faster on oneDNN's AVX2 matmul (default auto: when this machine's oneDNN runs AVX2)",
    )


#: The pre-training export's flags that a fine-tuned run's export has no use for: why, and
#: what to do instead (each refused in one sentence rather than ignored).
_NOT_FOR_FINETUNED = {
    "kernel_layout": ("--kernel-layout", "applies to pre-training checkpoints' encoder exports "
                      "only; drop it"),
    "vocab_file": ("--vocab-file", "does not apply to a fine-tuned run, which carries the "
                   "vocabulary it was fine-tuned with; drop it"),
    "no_lower_case": ("--no-lower-case", "does not apply to a fine-tuned run, which carries the "
                      "casing it was fine-tuned with; drop it"),
    "allow_suspect": ("--allow-suspect", "applies to pre-training checkpoints only (a "
                      "fine-tuned run keeps its best epoch); drop it"),
}  # fmt: skip


def _refuse_unused(args, model) -> None:
    """One sentence for a flag a fine-tuned run's export would otherwise ignore."""
    from electra_tf.config import ConfigError

    for name, (flag, why) in _NOT_FOR_FINETUNED.items():
        if getattr(args, name) not in (None, False):
            raise ConfigError(f"{flag} {why}.")
    if args.seq_length is not None:
        length = model.preprocessor.sequence_length
        raise ConfigError(
            f"--seq-length does not apply to a fine-tuned run: its export reads the {length} "
            "tokens it was fine-tuned with, as `predict` does; drop it (or fine-tune again with "
            "another max_seq_length)."
        )


def _export_finetuned(args) -> int:
    from electra_tf.config import ConfigError
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.model_folder import load_finetuned

    if args.format not in ("serving", "litert"):
        raise ConfigError(
            f"A fine-tuned run exports as --format serving or litert (not {args.format!r})."
        )
    model, info = load_finetuned(args.checkpoint)
    _refuse_unused(args, model)
    if args.format == "litert":
        given_flags = (("--xla", args.xla), ("--bfloat16", args.bfloat16),
                       ("--lanes", args.lanes is not None))  # fmt: skip
        for flag, given in given_flags:
            if given:
                raise ConfigError(
                    f"{flag} applies to the SavedModel (--format serving), not to a LiteRT "
                    "flatbuffer; drop it."
                )
        return _export_litert(model, info, args)
    if args.xla and args.bfloat16:
        raise ConfigError(
            "--bfloat16 applies to the plain SavedModel, not to the XLA-compiled one; drop "
            "--xla or --bfloat16."
        )
    from electra_tf.layers.kernels import cpu_has_bfloat16
    from electra_tf.tasks.export import BFLOAT16_ROWS

    if args.bfloat16 and not cpu_has_bfloat16():
        print(
            "warning: this CPU has no bfloat16 instructions (AMX or AVX512_BF16): the "
            "--bfloat16 export will be slower here than the plain one; measure it on the "
            "serving machine (electra-tf bench serving).",
            file=sys.stderr,
        )
    written = export_finetuned(
        model,
        info,
        args.out,
        model_name=args.model_name or info.get("task") or "classifier",
        version=args.version,
        jit_compile=args.xla,
        bfloat16_rows=BFLOAT16_ROWS if args.bfloat16 else None,
        lanes=args.lanes,
    )
    config = json.loads((written / "assets.extra" / "electra_config.json").read_text())
    record = {"format": "serving", "kind": info["kind"], "xla": args.xla,
              "bfloat16": args.bfloat16, "lanes": config["lanes"], "written": written}  # fmt: skip
    print_json(record, indent=None)
    return 0


def _export_litert(model, info, args) -> int:
    from electra_tf.tasks import litert

    quantize = None if args.quantize == "none" else args.quantize
    written = litert.export_litert(
        model, info, args.out, model_name=args.model_name or info.get("task") or "classifier",
        quantize=quantize, force=args.force,
    )  # fmt: skip
    # measured and checked (the int8 rule) by export_litert before it is published
    config = litert.open_config(written)
    record = {"format": "litert", "quantize": quantize, "kind": info["kind"], "written": written}
    print_json({**record, "quality": config.get("quality")}, indent=None)
    return 0


def _refuse_litert_flags(args) -> None:
    """--quantize and --force shape a LiteRT export only: one sentence elsewhere."""
    from electra_tf.config import ConfigError

    if args.format != "litert":
        for flag, given in (("--quantize", args.quantize != "none"), ("--force", args.force)):
            if given:
                raise ConfigError(f"{flag} applies to --format litert only; drop it.")


def run(args) -> int:
    # Exports are written on TensorFlow (a SavedModel, LiteRT, the hub forms) whatever
    # KERAS_BACKEND says, so a run trained on JAX or PyTorch exports as it is; where
    # TensorFlow is not installed, the forms that need it are refused in one sentence.
    if importlib.util.find_spec("tensorflow") is not None:
        select_backend("tensorflow", getattr(args, "argv", sys.argv[1:]))
    from electra_tf.pretraining.checkpoint import load_pretrainer
    from electra_tf.serving.formats import export_model
    from electra_tf.tasks.initialization import source_kind

    _refuse_litert_flags(args)
    if source_kind(args.checkpoint) == "finetuned":
        return _export_finetuned(args)
    if args.format == "litert":
        from electra_tf.config import ConfigError

        raise ConfigError(
            f"{args.checkpoint} is a pre-training checkpoint; --format litert exports a "
            "fine-tuned text classifier (fine-tune it first)."
        )
    if args.bfloat16:
        from electra_tf.config import ConfigError

        raise ConfigError(
            f"--bfloat16 applies to a fine-tuned run's SavedModel; {args.checkpoint} is a "
            "pre-training checkpoint, whose exports stay float32; drop it."
        )
    args.model_name = args.model_name or "electra"

    written = export_model(
        load_pretrainer(args.checkpoint, allow_suspect=args.allow_suspect),
        args.out,
        args.format,
        vocab_file=args.vocab_file,
        model_name=args.model_name,
        version=args.version,
        seq_length=args.seq_length or 128,
        lower_case=False if args.no_lower_case else None,
        jit_compile=args.xla,
        kernel_layout=args.kernel_layout or "auto",
        lanes=args.lanes,
    )
    if args.format == "all":
        print_json(written)
        return 0 if written["verified"] else 1
    print_json({"format": args.format, "written": written}, indent=None)
    return 0
