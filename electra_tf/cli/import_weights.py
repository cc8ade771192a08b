"""`electra-tf import`: released weights (reference TF1, Hugging Face ELECTRA or BERT) in, or
a TensorFlow run's checkpoint rewritten in the form every backend reads."""

from __future__ import annotations

from electra_tf.cli.common import print_json

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="bring released ELECTRA or BERT weights in as a checkpoint to fine-tune or "
        "continue from",
        description="Converts a reference (TF1) checkpoint, or Hugging Face ELECTRA or "
        "BERT-family weights, into a run folder whose step-0 checkpoint `pretrain --init`, "
        "`finetune` and `export` read. The vocabulary (the folder's vocab.txt or "
        "--vocab-file) and its casing are recorded with it.",
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
        help="an ElectraForPreTraining or BERT (BertModel, BertForMaskedLM) folder "
        "(model.safetensors or pytorch_model.bin, with config.json)",
    )
    source.add_argument(
        "--tensorflow-run",
        metavar="RUN",
        help="a pre-training run (or step-N folder) written on TensorFlow (ckpt.*): its newest "
        "checkpoint is rewritten as variables.npz, which JAX and PyTorch read without "
        "TensorFlow installed (convert here, then carry OUT to that machine and resume it "
        "with --output-dir OUT, or start from it with --init OUT)",
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
    parser.add_argument(
        "--vocab-file", help="the weights' vocabulary (default: the folder's vocab.txt)"
    )
    parser.add_argument(
        "--no-lower-case",
        action="store_true",
        help="the vocabulary is cased (default: the folder's tokenizer_config.json, else uncased)",
    )
    parser.add_argument("--out", required=True, help="run folder to write")
    parser.set_defaults(handler=run)


def run(args) -> int:
    if args.tensorflow_run:
        from electra_tf.pretraining.conversion import convert_to_portable

        folder = convert_to_portable(args.tensorflow_run, args.out)
        print_json({"checkpoint": str(folder), "format": "variables.npz"}, indent=None)
        return 0
    from electra_tf.serving.conversion import import_weights

    folder, model = import_weights(
        args.out,
        hugging_face=args.hugging_face,
        hugging_face_generator=args.hugging_face_generator,
        reference=args.reference,
        num_heads=args.num_heads,
        vocab_file=args.vocab_file,
        lower_case=False if args.no_lower_case else None,
    )
    print_json(
        {
            "checkpoint": str(folder),
            "model": model.config.to_dict()["model"],
            "vocab_file": model.config.data.vocab_file,
            "imported": getattr(model, "import_report", None),
        },
        indent=None,
    )
    return 0
