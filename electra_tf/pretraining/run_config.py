"""The config a run trains with: what its data and vocabulary decide, and what a resume keeps.

`config_for_data` reads the prepared data's `manifest.json` (the one source of
truth for the vocabulary, special ids and length; of the version a `latest.json`
names, for a folder `prepare --runner beam` wrote to an object store; shards of several folders must
agree on them, `one_preparation`), `config_for_vocabulary` a
vocabulary file's, and `check_resume_config` refuses to resume a run with a
different model, objective or data.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.data.remote_files import is_remote, join
from electra_tf.data.tfrecords import MANIFEST, DataError, Manifest, resolve_files
from electra_tf.io.durable import digest

__all__ = ["config_for_data", "config_for_vocabulary", "check_resume_config", "one_preparation"]


def config_for_data(config: ElectraConfig, explicit=()) -> ElectraConfig:
    """The config with the vocabulary size, special ids and length the data record.

    A prepare folder's `manifest.json` (also beside shards given as files or globs) is
    the one source of truth: a value of it that the user set otherwise (`explicit`, the
    `section.key`s of their overrides) fails in one sentence, as does a `data.vocab_file`
    with other tokens. Shards without a manifest need `data.vocab_file`. Shards from
    several folders must come from agreeing preparations (`one_preparation`), whatever
    is overridden.
    """
    spec = config.data.train_files
    files, _, manifest = resolve_files(spec)
    manifest = manifest or one_preparation(files)
    if manifest is None:
        if config.data.vocab_file:
            return config_for_vocabulary(config, config.data.vocab_file)
        raise DataError(
            f"The training files {spec} have no manifest.json beside them, so their "
            "vocabulary is unknown; pass --vocab-file (the vocabulary they were packed with) "
            "or the folder `electra-tf prepare` wrote."
        )
    source = f"{manifest.folder}/manifest.json"
    recorded = {"data.sequence_length": manifest.sequence_length}
    recorded.update({f"data.{name}_id": int(v) for name, v in manifest.special_ids.items()})
    if manifest.vocabulary_size:
        recorded["model.vocabulary_size"] = manifest.vocabulary_size
    for key, value in recorded.items():
        section, name = key.split(".")
        current = getattr(getattr(config, section), name)
        if key in explicit and current != value:
            raise ConfigError(
                f"{key}={current} disagrees with {source} ({value}); leave it out, the data "
                "decide it."
            )
    data = {k.split(".")[1]: v for k, v in recorded.items() if k.startswith("data.")}
    if manifest.vocab_file:
        packed_with = (
            join(manifest.folder, manifest.vocab_file)  # gs://: a Path would fold it
            if is_remote(manifest.folder)
            else str(Path(manifest.folder) / manifest.vocab_file)
        )
        if config.data.vocab_file:
            from electra_tf.pretraining.warm_start import check_vocabulary

            check_vocabulary(config.data.vocab_file, packed_with, spec)
        else:
            data["vocab_file"] = packed_with
    if "lower_case" in manifest.extra:
        data["lower_case"] = bool(manifest.extra["lower_case"])
    updates = {"data": data}
    if "model.vocabulary_size" in recorded:
        updates["model"] = {"vocabulary_size": recorded["model.vocabulary_size"]}
    return config.update(updates, source=source)


def _vocabulary(manifest: Manifest) -> str | None:
    path = Path(manifest.folder) / manifest.vocab_file
    return digest(path) if manifest.vocab_file and path.is_file() else None


def _difference(a: Manifest, b: Manifest) -> tuple[str, str] | None:
    """The first recorded value two manifests disagree on, as (`key=a`, `key=b`)."""
    for key, x, y in (
        ("vocabulary_size", a.vocabulary_size, b.vocabulary_size),
        ("special_ids", a.special_ids, b.special_ids),
        ("sequence_length", a.sequence_length, b.sequence_length),
        ("lower_case", a.extra.get("lower_case"), b.extra.get("lower_case")),
    ):
        if x != y:
            return f"{key}={x}", f"{key}={y}"
    if _vocabulary(a) != _vocabulary(b):
        return f"the vocabulary {a.vocab_file!r}", f"other tokens in {b.vocab_file!r}"
    return None


def one_preparation(files) -> Manifest | None:
    """The manifest shared by shards from several folders, or None when none has one.

    Raises:
        DataError: some folders have a `manifest.json` and some do not, or two
            manifests disagree on the vocabulary, its size or special ids, the
            sequence length or the casing.
    """
    folders = sorted({os.path.dirname(os.path.abspath(f)) for f in files})
    manifests = [
        Manifest.read(f) if os.path.exists(os.path.join(f, MANIFEST)) else None for f in folders
    ]
    bare = [f for f, m in zip(folders, manifests, strict=True) if m is None]
    if len(bare) == len(folders):
        return None
    if bare:
        prepared = next(m.folder for m in manifests if m is not None)
        raise DataError(
            f"The training files mix shards of {prepared} (prepared, with a {MANIFEST}) and "
            f"of {bare[0]} (no {MANIFEST}, so their vocabulary is unknown); train on shards "
            "of one preparation."
        )
    for other in manifests[1:]:
        difference = _difference(manifests[0], other)
        if difference:
            raise DataError(
                f"The training files mix two preparations: {manifests[0].folder}/{MANIFEST} "
                f"has {difference[0]} where {other.folder}/{MANIFEST} has {difference[1]}; "
                "train on shards prepared with one vocabulary, casing and length."
            )
    return manifests[0]


def config_for_vocabulary(config: ElectraConfig, vocab_file) -> ElectraConfig:
    """The config with a vocabulary file's size and special ids (for raw-text runs)."""
    from electra_tf.data.vocabulary import read_vocabulary, special_ids

    tokens = read_vocabulary(vocab_file)
    ids = special_ids(tokens)
    return config.update(
        {
            "model": {"vocabulary_size": len(tokens)},
            "data": {"vocab_file": str(vocab_file), **{f"{k}_id": v for k, v in ids.items()}},
        },
        source=str(vocab_file),
    )


#: The `data` fields that name files: a run records them absolute.
PATH_FIELDS = ("train_files", "eval_files", "vocab_file")


def _absolute(spec: str) -> str:
    """Each comma-separated path, glob or folder of `spec` absolute (URLs as they are)."""
    parts = [p.strip() for p in spec.split(",")] if spec else []
    return ",".join(p if "://" in p else os.path.abspath(p) for p in parts if p)


def with_absolute_paths(config: ElectraConfig) -> ElectraConfig:
    """The config with its data files and vocabulary absolute, so that the run's recorded
    config resumes and exports from any directory."""
    data = {name: _absolute(getattr(config.data, name)) for name in PATH_FIELDS}
    if all(data[name] == getattr(config.data, name) for name in PATH_FIELDS):
        return config
    return config.update({"data": data}, source="the paths made absolute")


def check_resume_config(saved: ElectraConfig, current: ElectraConfig, folder) -> None:
    """Resuming needs the same model, objective and data; the train section may change.
    Paths compare absolute (a run recorded before they were is read from here)."""
    for section in ("model", "objective", "data"):
        old, new = getattr(saved, section), getattr(current, section)
        for field in dataclasses.fields(old):
            a, b = getattr(old, field.name), getattr(new, field.name)
            if section == "data" and field.name in PATH_FIELDS:
                a, b = _absolute(a), _absolute(b)
            if a != b:
                raise ConfigError(
                    f"{folder} holds a run with {section}.{field.name}={a!r}, but this run asks "
                    f"for {b!r}; resume with the same value or use a new --output-dir."
                )
