"""`electra-tf predict`: label texts or a file with a fine-tuned run or its SavedModel export."""

from __future__ import annotations

import json
import sys

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="predict with a fine-tuned run folder or its exported SavedModel",
        description="Labels texts given on the command line, or every row of a file read as "
        "`electra-tf finetune` reads it (the run's text columns by default), with a fine-tuned "
        "run folder (its Keras model) or its TF Serving export (the SavedModel). Writes one JSON "
        "line per input: the text, the label and its probabilities (multi-label: labels; "
        "regression: score; tagging: words and tags).",
    )
    parser.add_argument(
        "--model", required=True, help="a fine-tuned run folder, or its export (a version "
        "folder or the folder holding numbered versions)",
    )  # fmt: skip
    parser.add_argument("--input", help="a CSV/TSV/JSONL/CoNLL file to label")
    parser.add_argument("texts", nargs="*", help="texts to label (instead of --input)")
    parser.add_argument(
        "--text-pair", action="append", default=[], metavar="TEXT",
        help="a pair model's second text, once per text given (in the same order)",
    )  # fmt: skip
    parser.add_argument(
        "--question", action="append", default=[], metavar="TEXT",
        help="a question for a question answerer (with --context, once each)",
    )  # fmt: skip
    parser.add_argument(
        "--context", action="append", default=[], metavar="TEXT",
        help="the passage that answers the --question of the same position",
    )  # fmt: skip
    parser.add_argument("--format", choices=["csv", "tsv", "jsonl", "conll"], help="--input's")
    parser.add_argument("--text-column", help="--input's text column (default: the run's)")
    parser.add_argument("--text-pair-column", help="--input's second text (default: the run's)")
    parser.add_argument("--question-column", help="--input's questions (default: the run's)")
    parser.add_argument("--context-column", help="--input's passages (default: the run's)")
    parser.add_argument("--output", help="write the JSON lines here (default: standard output)")
    parser.add_argument("--batch-size", type=int, default=32, help="examples per call (32)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from electra_tf.config import ConfigError
    from electra_tf.finetuning.predict import (
        check_batch_size,
        open_predictor,
        predict_rows,
        read_inputs,
    )

    check_batch_size(args.batch_size)
    if args.question or args.context:  # a question answerer's texts and their pairs
        if args.texts or args.text_pair:
            raise ConfigError("Give --question/--context, or texts with --text-pair, not both.")
        args.texts, args.text_pair = list(args.question), list(args.context)
    if bool(args.input) == bool(args.texts):
        raise ConfigError("Give either --input FILE or texts to label, not both.")
    predictor = open_predictor(args.model)
    if args.input:
        columns = {
            "text": args.text_column, "text_pair": args.text_pair_column,
            "question": args.question_column, "context": args.context_column,
        }  # fmt: skip
        read = read_inputs(args.input, predictor.info, args.format, columns)
        texts, pairs, rows, skipped, ids = read
    else:
        rows, skipped, ids = None, {}, None
        texts = predictor.kind.inputs_from_texts(list(args.texts))
        pairs = list(args.text_pair) or None
        if pairs is not None and len(pairs) != len(texts):
            raise ConfigError(
                f"Give one --text-pair (or --context) per text: {len(texts)} texts, "
                f"{len(pairs)} pairs."
            )
    cut = predictor.cut_rows(texts, pairs)
    if cut:
        print(
            f"{cut} of {len(texts)} inputs are longer than the model reads (its maximum length "
            "in tokens) and were cut to it.",
            file=sys.stderr,
        )
    predicted = predict_rows(predictor, texts, pairs, args.batch_size, bool(args.output))
    shown = with_rows(predicted, rows, skipped, ids)
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in shown)
    if args.output:
        from electra_tf.io.durable import write_atomic

        text = "".join(lines)
        write_atomic(args.output, text)
        summary = {"output": args.output, "examples": text.count("\n") - len(skipped)}
        if skipped:
            summary["not_predicted"] = len(skipped)
        if cut:
            summary["cut_rows"] = cut
        print(json.dumps(summary))
    else:
        for line in lines:
            sys.stdout.write(line)
    return 0


def with_rows(predicted, rows, skipped: dict, ids: dict | None = None):
    """The prediction rows with each input's `row` (its row number in the file) and, where
    the file gives them, its `id`, and a row `{"row": n, "error": why}` in its place for
    each row that could not be predicted: one output line per input row, in the file's
    order."""
    if rows is None:
        yield from predicted
        return
    ids = ids or {}

    def shown(row) -> dict:
        return {"row": row, "id": ids[row]} if row in ids else {"row": row}

    pending = sorted(skipped.items())  # row numbers of a table or CoNLL file
    for row, output in zip(rows, predicted, strict=True):
        while pending and isinstance(row, int) and pending[0][0] < row:
            number, why = pending.pop(0)
            yield {**shown(number), "error": why}
        yield {**shown(row), **output}
    for number, why in pending:
        yield {**shown(number), "error": why}
