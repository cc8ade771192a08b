"""`electra-tf prepare`: a corpus into a vocabulary, packed TFRecord shards and a manifest."""

from __future__ import annotations

from electra_tf.cli.common import print_json

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "prepare",
        help="turn a text corpus into a vocabulary and packed TFRecord examples",
        description="Reads a corpus (text files or folders, JSONL, or a TFDS dataset), learns or "
        "loads a WordPiece vocabulary, packs examples as the reference builder does and writes "
        "sharded TFRecords with a manifest into --output-dir, over --workers processes.",
    )
    _add_input_flags(parser)
    _add_output_flags(parser)
    parser.set_defaults(handler=run)


def _add_input_flags(parser) -> None:
    """What to read: files and their layout, JSON Lines, or a TFDS dataset."""
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="PATH",
        help="a text/JSONL file or a folder of them; .gz and .bz2 are read transparently "
        "(repeatable); with --runner beam also on any Beam filesystem, globs too "
        "(gs://bucket/*.txt.gz, s3://..., hdfs://...)",
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
    parser.add_argument("--max-documents", type=int, help="read at most this many documents")


def _add_output_flags(parser) -> None:
    """What to write: the folder, the vocabulary, the packing, and how many processes."""
    parser.add_argument(
        "--output-dir",
        required=True,
        help="the data folder to write (with --runner beam also gs://..., as versions)",
    )
    parser.add_argument(
        "--vocab-file",
        help="use this vocab.txt instead of learning one, or the vocabulary (and casing) of a "
        "data folder prepare wrote, run, imported folder, Hugging Face folder or export",
    )
    parser.add_argument(
        "--vocab-size", type=int, default=8192, help="size of a learned vocabulary (default 8192)"
    )
    parser.add_argument(
        "--vocab-learner",
        choices=["tokenizers", "tf-text"],
        default=None,
        help="how a vocabulary is learned: tokenizers (Hugging Face's WordPiece trainer, "
        "seconds; the default) or tf-text (tensorflow-text's Python learner, minutes)",
    )
    parser.add_argument(
        "--no-lower-case",
        action="store_true",
        help="keep case (for cased vocabularies); also keeps accents unless --strip-accents "
        "(default: the casing --vocab-file's source records, else lower-case)",
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
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="processes that tokenize and pack (default 0: one per available core, but at "
        "least 4 chunks of input each); the output is the same for every N",
    )
    parser.add_argument(
        "--chunk-bytes",
        type=int,
        default=None,
        metavar="BYTES",
        help="text per unit of work (default 8 MiB); a different size packs differently",
    )
    parser.add_argument(
        "--runner",
        choices=["local", "beam"],
        default="local",
        help="local: --workers processes here; beam: an Apache Beam pipeline (pip install -e "
        '".[beam]"), by default Beam\'s local runner in --workers processes; same output',
    )
    parser.add_argument(
        "--beam-options",
        default=None,
        metavar="FLAGS",
        help="Beam pipeline options for --runner beam, as one string, e.g. "
        '"--runner=DataflowRunner --project=P --region=R --temp_location=gs://B/tmp '
        '--setup_file=./setup.py" (see docs/beam.md)',
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    import shlex
    import sys

    from electra_tf.data.chunks import CHUNK_BYTES
    from electra_tf.data.corpus import CorpusError, corpus_sources
    from electra_tf.data.prepare import default_workers, prepare_corpus

    if args.workers < 0 or (args.chunk_bytes is not None and args.chunk_bytes < 1):
        raise CorpusError("--workers must be 0 (one per core) or more, --chunk-bytes 1 or more.")
    if args.beam_options is not None and args.runner != "beam":
        raise CorpusError("--beam-options applies to --runner beam only; add --runner beam.")
    if args.vocab_learner is not None and args.vocab_file:
        raise CorpusError(
            "--vocab-learner applies to a learned vocabulary only; drop it or --vocab-file."
        )

    vocab_file, lower_case = args.vocab_file, None
    if vocab_file:
        from electra_tf.tasks.initialization import vocabulary_of

        vocab_file, lower_case = vocabulary_of(vocab_file)
    if args.no_lower_case:
        lower_case = False

    sources = corpus_sources(
        args.input,
        layout=args.layout,
        jsonl_field=args.jsonl_field,
        tfds=args.tfds,
        tfds_split=args.tfds_split,
        tfds_feature=args.tfds_feature,
        tfds_data_dir=args.tfds_data_dir,
        download=not args.no_download,
        remote=args.runner == "beam",  # gs://, s3://, globs: Beam's filesystems list them
    )
    result = prepare_corpus(
        sources,
        args.output_dir,
        vocab_file=vocab_file,
        vocabulary_size=args.vocab_size,
        lower_case=True if lower_case is None else lower_case,
        strip_accents={"auto": None, "yes": True, "no": False}[args.strip_accents],
        sequence_length=args.sequence_length,
        seed=args.seed,
        examples_per_shard=args.examples_per_shard,
        max_documents=args.max_documents,
        progress=not args.quiet,
        workers=args.workers or default_workers(sources, args.chunk_bytes or CHUNK_BYTES),
        chunk_bytes=args.chunk_bytes or CHUNK_BYTES,
        runner=args.runner,
        beam_options=shlex.split(args.beam_options or ""),
        vocab_learner=args.vocab_learner or "tokenizers",
    )
    for note in result.stats.notes:
        print(f"electra-tf prepare: note: {note}", file=sys.stderr)
    print_json(
        {
            "output_dir": str(args.output_dir),
            "workers": result.workers,
            "runner": args.runner,
            "examples": result.examples,
            "tokens": result.tokens,
            "shards": len(result.manifest.shards),
            "vocabulary_size": result.manifest.vocabulary_size,
            "seconds": round(result.seconds, 1),
            "corpus": result.stats.to_dict(),
        }
    )
    return 0
