"""`prepare` on Apache Beam: the same shards, vocabulary, counts and manifest as a local run.

`prepare_corpus(..., runner="beam", beam_options=[...])` runs the work of
`electra_tf.data.prepare` as a Beam pipeline (the steps are in
`electra_tf.data.beam_steps`), on any runner `beam_options` names:

1. every input file is cut into pieces on the workers, in parallel (`CutFile`); the
   small per-file cuts are collected, and `assign_chunks` replays the local rule to
   give every piece its chunk number; pieces grouped by number are the local `Chunk`s;
2. every chunk's document digests are collected, and one `Ledger` in chunk order gives
   the verdicts (duplicates, `max_documents`), a side input of
3. the packing: `ChunkWork` (read, tokenize, finish) per chunk, writing the chunk's
   shards and result into the scratch folder under names set by the chunk's number.

The driver (this process) then reads the results back in chunk order, and `prepare`
numbers the shards and writes the counts and manifest as it does for a local run;
the scratch folder, lock and swap keep a failed pipeline from touching the previous
output. A vocabulary to learn is learned as a one-element pipeline from the same
sample a local run reads. With no `--runner` in `beam_options`, Beam's local
`FnApiRunner` runs it in `workers` processes (the `DirectRunner` would first try the
Prism runner, which downloads a binary). The output folder must be one the driver and
every worker see: any local folder for a local runner; for any other runner (Dataflow,
Flink, Spark, ...) a local folder is refused before the job starts (`check_output`);
the inputs may be on any filesystem Beam's `FileSystems` reads (gs://, s3://, ... listed
by `corpus_sources(..., remote=True)`: `electra_tf.data.remote_files`). An output on
such a filesystem is written as a new version under it (`electra_tf.data.beam_output`):
the step 3 packing then hands each chunk's records to a step that writes its shards
under their final names, and results go through objects under the version.

Apache Beam is optional (`pip install -e ".[beam]"`); it is imported only here.
"""

from __future__ import annotations

import json
import pickle
import shutil
import time
from pathlib import Path

from electra_tf.data.beam_steps import (
    RESULTS,
    CutFile,
    PackChunk,
    PackRecords,
    WriteShards,
    assign_chunks,
    build_chunk,
    decide_verdicts,
    first_shards,
    packed_examples,
    read_digests,
    write_atomically,
)
from electra_tf.data.documents import CorpusError
from electra_tf.data.remote_files import (
    BEAM_MISSING,
    delete_objects,
    is_remote,
    join,
    list_objects,
    read_object,
)
from electra_tf.data.vocabulary_sample import learn_sample_vocabulary
from electra_tf.data.workers import ChunkFailed, RunTiming

__all__ = [
    "BEAM_MISSING",
    "import_beam",
    "default_beam_options",
    "pipeline_options",
    "check_runner",
    "runner_name",
    "check_output",
    "run_on_beam",
    "learn_on_beam",
]


def import_beam():
    """The `apache_beam` module, or a `CorpusError` saying how to install it."""
    try:
        import apache_beam
    except ImportError:
        raise CorpusError(BEAM_MISSING) from None
    return apache_beam


def default_beam_options(workers: int) -> list[str]:
    """Beam's local runner in `workers` processes (it needs no network)."""
    return [
        "--runner=FnApiRunner",
        "--direct_running_mode=multi_processing",
        f"--direct_num_workers={max(1, int(workers))}",
    ]


def pipeline_options(beam_options, workers: int):
    """`PipelineOptions` of `beam_options`; without `--runner`, the local defaults first."""
    from apache_beam.options.pipeline_options import PipelineOptions

    given = [str(option) for option in beam_options or ()]
    if not any(option.startswith("--runner") for option in given):
        given = default_beam_options(workers) + given
    return PipelineOptions(given)


def check_runner(runner: str, sources) -> None:
    """Raises a `CorpusError` unless `runner` is "beam", Beam is installed and every source
    is files."""
    if runner != "beam":
        raise CorpusError(f"Unknown prepare runner {runner!r}: use 'local' or 'beam'.")
    import_beam()
    if any(getattr(source, "files", None) is None for source in sources):
        raise CorpusError(
            "--runner beam reads text and JSON Lines files (--input); prepare a TFDS dataset "
            "with --runner local."
        )


#: Beam's runners that run on this machine, where a local --output-dir is seen by every
#: worker (by their short names: "DirectRunner", "direct" and a dotted path all count).
LOCAL_RUNNERS = ("direct", "fnapi", "bundlebaseddirect", "switchingdirect", "prism")


def runner_name(beam_options) -> str | None:
    """The runner `beam_options` names (`--runner=X` or `--runner X`), or None.

    >>> runner_name(["--project=p", "--runner", "DataflowRunner"])
    'DataflowRunner'
    >>> runner_name(["--direct_num_workers=2"]) is None
    True
    """
    options = [str(option) for option in beam_options or ()]
    for number, option in enumerate(options):
        if option.startswith("--runner="):
            return option.split("=", 1)[1]
        if option == "--runner" and number + 1 < len(options):
            return options[number + 1]
    return None


def _is_local(runner: str) -> bool:
    """Whether `runner` runs on this machine.

    >>> [_is_local(name) for name in ("DirectRunner", "fnapi", "DataflowRunner", "FlinkRunner")]
    [True, True, False, False]
    """
    short = runner.rsplit(".", 1)[-1].lower()
    short = short.removesuffix("runner")
    return short in LOCAL_RUNNERS


def check_output(beam_options, output_dir) -> None:
    """Raises a `CorpusError` when `beam_options` name a runner off this machine (Dataflow,
    Flink, Spark, ...) and `output_dir` is a local folder, which its workers cannot write:
    refused before anything is contacted or started."""
    runner = runner_name(beam_options)
    if runner is None or _is_local(runner) or is_remote(str(output_dir)):
        return
    raise CorpusError(
        f"--output-dir {output_dir} is a local folder, which the workers of --runner={runner} "
        "cannot write; give a gs:// (or another object store's) --output-dir."
    )


def _tag_cut(cut):
    from apache_beam import pvalue

    return pvalue.TaggedOutput("cuts", cut)


def _numbers(plan):
    return plan[0]


def _numbered_chunks(plan):
    return [(chunk.index, chunk) for chunk in plan[1]]


def _numbered_piece(element, numbers):
    key, piece = element
    return numbers[key], (key, piece)


def _build(pipeline, beam, sources, settings, target: int, ledger, vocabulary=None) -> None:
    """The pipeline of the module docstring; results go to the scratch folder (or version)."""
    files = [
        (number, count, str(path), source.layout)
        for number, source in enumerate(sources)
        for count, path in enumerate(source.files)
    ]
    described = [(source.layout, source.field, len(source.files)) for source in sources]
    cut = (
        pipeline
        | "Files" >> beam.Create(files)
        | "Spread files" >> beam.Reshuffle()
        | "Cut files"
        >> beam.FlatMap(CutFile(target, wrap=_tag_cut)).with_outputs("cuts", main="pieces")
    )
    plan = (
        cut.cuts
        | "Collect cuts" >> beam.combiners.ToList()
        | "Assign chunks" >> beam.Map(assign_chunks, described, target)
    )
    numbers = beam.pvalue.AsSingleton(plan | "Piece numbers" >> beam.Map(_numbers))
    chunks = (
        {
            "chunk": plan | "Chunks" >> beam.FlatMap(_numbered_chunks),
            "pieces": cut.pieces | "Number pieces" >> beam.Map(_numbered_piece, numbers),
        }
        | "Group pieces" >> beam.CoGroupByKey()
        | "Build chunks" >> beam.Map(build_chunk)
    )
    verdicts = (
        chunks
        | "Digests" >> beam.Map(read_digests, ledger.deduplicate)
        | "Collect digests" >> beam.combiners.ToList()
        | "Verdicts"
        >> beam.Map(decide_verdicts, ledger.deduplicate, ledger.max_documents, settings.folder)
    )
    if not is_remote(settings.folder):
        _ = chunks | "Pack" >> beam.Map(PackChunk(settings), beam.pvalue.AsSingleton(verdicts))
        return
    pack = PackRecords(settings, vocabulary)  # FlatMap gives a callable object no side input
    packed = chunks | "Pack" >> beam.FlatMap(_apply, pack, beam.pvalue.AsSingleton(verdicts))
    first = (
        packed
        | "Examples" >> beam.Map(packed_examples)
        | "Collect examples" >> beam.combiners.ToList()
        | "First shards" >> beam.Map(first_shards, settings.examples_per_shard)
    )
    _ = packed | "Write shards" >> beam.Map(WriteShards(settings), beam.pvalue.AsSingleton(first))


def _apply(element, step, side):
    return step(element, side)


def _read(path: str) -> bytes:
    return read_object(path) if is_remote(path) else Path(path).read_bytes()


def _results(folder: str, pattern: str) -> list[str]:
    """The files (objects) of `RESULTS` that `pattern` matches, sorted."""
    if is_remote(folder):
        return list_objects(join(folder, RESULTS, pattern))
    return sorted(str(path) for path in Path(folder, RESULTS).glob(pattern))


def _clear(folder: str) -> None:
    if is_remote(folder):
        delete_objects(_results(folder, "*"))
    else:
        shutil.rmtree(Path(folder, RESULTS))


def _pipeline_failure(folder: str, error: BaseException, what: str) -> ChunkFailed:
    """The chunk a failed pipeline names (its first recorded failure), else its last line."""
    for path in _results(folder, "error-*.json"):
        failure = json.loads(_read(path))
        kind = "io" if failure["is_io"] else "error"
        return ChunkFailed(failure["where"], failure["reason"], kind)
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    reason = lines[-1][:200] if lines else type(error).__name__
    return ChunkFailed(what, reason)


def run_on_beam(sources, settings, plan, ledger, on_result, vocabulary=None):
    """Every chunk's `ChunkResult` by number, the `RunTiming` and `ledger` (its `last_index`).

    `plan` gives `chunk_bytes`, `workers` and `beam_options`; `on_result` is called with
    each result in chunk order, as `run_chunks` calls it. `vocabulary`: the tokens, for
    workers that cannot read `settings.vocab_file` (a remote output's).
    """
    beam, started = import_beam(), time.perf_counter()
    folder = str(settings.folder)
    try:
        with beam.Pipeline(options=pipeline_options(plan.beam_options, plan.workers)) as pipeline:
            _build(pipeline, beam, sources, settings, plan.chunk_bytes, ledger, vocabulary)
    except Exception as error:  # noqa: BLE001 - a runner raises many kinds; named in one
        raise _pipeline_failure(folder, error, "the input on Beam") from None
    summary = json.loads(_read(join(folder, RESULTS, "ledger.json")))
    ledger.last_index = summary["last_index"]
    count = summary["chunks"] if ledger.last_index is None else ledger.last_index + 1
    results, timing = {}, RunTiming(work=time.perf_counter() - started)
    written = {path.rsplit("/", 1)[-1] for path in _results(folder, "result-*.pickle")}
    for index in range(count):
        path = join(folder, RESULTS, f"result-{index:06d}.pickle")
        if path.rsplit("/", 1)[-1] not in written:
            raise ChunkFailed(f"chunk {index}", "the Beam pipeline wrote no result for it")
        results[index] = pickle.loads(_read(path))
        timing.busy += results[index].seconds
        timing.cpu += results[index].cpu_seconds
        on_result(results[index])
    _clear(folder)
    return results, timing, ledger


class _LearnVocabulary:
    """The learner on one worker: writes `RESULTS/vocabulary.json` (tokens, or the error)."""

    def __init__(self, sources, plan, folder: str):
        self.sources, self.plan, self.folder = sources, plan, folder

    def __call__(self, _) -> None:
        try:
            tokens, counted = learn_sample_vocabulary(self.sources, self.plan)
            learned = {"tokens": tokens, "sentences": counted}
        except CorpusError as error:
            learned = {"error": str(error)}
        write_atomically(
            join(self.folder, RESULTS, "vocabulary.json"), json.dumps(learned).encode()
        )


def learn_on_beam(sources, folder, plan) -> tuple[list, int]:
    """`learn_sample_vocabulary` as a one-step Beam pipeline: the tokens, the sentences read."""
    beam, folder = import_beam(), str(folder)
    try:
        with beam.Pipeline(options=pipeline_options(plan.beam_options, 1)) as pipeline:
            _ = (
                pipeline
                | "Sample" >> beam.Create([None])
                | "Learn" >> beam.Map(_LearnVocabulary(sources, plan, str(folder)))
            )
    except Exception as error:  # noqa: BLE001 - a runner raises many kinds; named in one
        raise _pipeline_failure(folder, error, "the vocabulary sample on Beam") from None
    learned = json.loads(_read(join(folder, RESULTS, "vocabulary.json")))
    _clear(folder)
    if "error" in learned:
        raise CorpusError(learned["error"])
    return learned["tokens"], learned["sentences"]
