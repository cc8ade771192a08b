"""Packed pre-training examples as TFRecords, in the reference code's format.

Each record is a `tf.train.Example` with three int64 features of the
sequence length: `input_ids`, `input_mask` and `segment_ids` (the names the
reference `build_pretraining_dataset.py` and NVIDIA's port write). Other
features in a record are ignored, so their files load too. In memory the
batch uses this package's names: `token_ids`, `padding_mask`, `segment_ids`.

A folder written by `electra-tf prepare` also holds `manifest.json` with the
shard list, each shard's example count, the vocabulary and its special ids.
One written on an object store by `prepare --runner beam` (`beam_output`) holds
versions of such a folder, `versions/<id>/`, and `latest.json` naming the complete
one (`{"version": "versions/<id>"}`); `published_folder` resolves it, read with
`tf.io.gfile` (local folders, gs:// ...), so the folder given is the same either way.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
from pathlib import Path

import tensorflow as tf

from electra_tf.data.remote_files import is_remote, join
from electra_tf.io.durable import write_atomic

__all__ = [
    "FEATURES",
    "DataError",
    "Manifest",
    "POINTER",
    "VERSIONS",
    "published_folder",
    "serialize_example",
    "parse_batch",
    "resolve_files",
    "count_records",
    "check_first_record",
]

FEATURES = ("input_ids", "input_mask", "segment_ids")
MANIFEST = "manifest.json"
POINTER = "latest.json"  # names the complete version of a folder on an object store
VERSIONS = "versions"


class DataError(ValueError):
    """A data file or folder that cannot be used, named in the message."""


def serialize_example(input_ids, input_mask, segment_ids) -> bytes:
    """One packed example as a serialized `tf.train.Example` (reference feature names)."""

    def feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "input_ids": feature(input_ids),
                "input_mask": feature(input_mask),
                "segment_ids": feature(segment_ids),
            }
        )
    )
    return example.SerializeToString(deterministic=True)  # sorted keys: the same bytes every run


def parse_batch(serialized, sequence_length: int) -> dict:
    """Parses a batch of serialized examples into int32 `token_ids`, `padding_mask`, `segment_ids`.

    Args:
        serialized: string `[B]`.
        sequence_length: int, the length every record must have.

    Returns:
        dict of int32 `[B, sequence_length]`.
    """
    spec = {name: tf.io.FixedLenFeature([sequence_length], tf.int64) for name in FEATURES}
    parsed = tf.io.parse_example(serialized, spec)
    return {
        "token_ids": tf.cast(parsed["input_ids"], tf.int32),
        "padding_mask": tf.cast(parsed["input_mask"], tf.int32),
        "segment_ids": tf.cast(parsed["segment_ids"], tf.int32),
    }


@dataclasses.dataclass(frozen=True)
class Manifest:
    """What `prepare` wrote into a data folder (see `electra_tf.data.prepare`)."""

    folder: str
    sequence_length: int
    shards: tuple[tuple[str, int], ...]  # (file name relative to folder, examples)
    vocab_file: str = ""
    vocabulary_size: int = 0
    special_ids: dict = dataclasses.field(default_factory=dict)
    extra: dict = dataclasses.field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return [os.path.join(self.folder, name) for name, _ in self.shards]

    @property
    def counts(self) -> list[int]:
        return [count for _, count in self.shards]

    @property
    def num_examples(self) -> int:
        return sum(self.counts)

    @classmethod
    def read(cls, folder: str | Path) -> Manifest:
        """The manifest of `folder` (of the version its `latest.json` names, if it has one)."""
        folder = published_folder(folder)
        path = join(folder, MANIFEST)
        try:
            if is_remote(str(folder)):
                text = tf.io.gfile.GFile(path, "rb").read().decode("utf-8")
            else:
                text = Path(path).read_text(encoding="utf-8")
            values = json.loads(text)
            return cls(
                folder=str(folder),
                sequence_length=int(values["sequence_length"]),
                shards=tuple((s["file"], int(s["examples"])) for s in values["shards"]),
                vocab_file=values.get("vocab_file", ""),
                vocabulary_size=int(values.get("vocabulary_size", 0)),
                special_ids=dict(values.get("special_ids", {})),
                extra=dict(values.get("extra", {})),
            )
        except (OSError, ValueError, KeyError, TypeError, tf.errors.OpError) as error:
            raise DataError(
                f"{path} is not a readable manifest ({error}); re-run `electra-tf prepare` "
                "for this folder."
            ) from None

    def text(self) -> str:
        """`manifest.json`'s text."""
        values = {
            "sequence_length": self.sequence_length,
            "shards": [{"file": name, "examples": count} for name, count in self.shards],
            "num_examples": self.num_examples,
            "vocab_file": self.vocab_file,
            "vocabulary_size": self.vocabulary_size,
            "special_ids": self.special_ids,
            "extra": self.extra,
        }
        return json.dumps(values, indent=2, sort_keys=True) + "\n"

    def write(self) -> None:
        # Synced, renamed into place, the folder synced: a power cut leaves old or new.
        write_atomic(Path(self.folder) / MANIFEST, self.text())


def published_folder(folder):
    """`folder`, or the version folder its `latest.json` names (`folder/versions/<id>`).

    Raises:
        DataError: the pointer is unreadable, or names a version without a manifest.
    """
    pointer = join(folder, POINTER)
    if not (tf.io.gfile.exists if is_remote(str(folder)) else os.path.exists)(pointer):
        return folder
    try:
        version = json.loads(tf.io.gfile.GFile(pointer, "rb").read())["version"]
        parts = str(version).split("/")
        if len(parts) != 2 or parts[0] != VERSIONS or parts[1] in ("", ".", ".."):
            raise ValueError(f"{version!r} is not versions/<id>")
    except (ValueError, KeyError, TypeError, tf.errors.OpError) as error:
        raise DataError(
            f"{pointer} is not a readable version pointer ({error}); re-run `electra-tf "
            f"prepare --runner beam` for {folder}."
        ) from None
    target = join(folder, *parts)
    if not tf.io.gfile.exists(join(target, MANIFEST)):
        raise DataError(
            f"{pointer} names {version}, but {join(target, MANIFEST)} does not exist; restore "
            f"that version or re-run `electra-tf prepare --runner beam` for {folder}."
        )
    return target


def resolve_files(spec: str) -> tuple[list[str], list[int] | None, Manifest | None]:
    """Files named by `spec`: a prepare folder, or comma-separated files and globs.

    Files given one by one (or by glob) that a `manifest.json` beside them lists get
    that manifest and its example counts, so their vocabulary is known too.

    Returns:
        (files, per-file example counts or None when unknown, manifest or None).
    """
    if not spec:
        raise DataError("No training data given: pass --data (a prepare folder or TFRecord files).")
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    remote = any(is_remote(part) for part in parts)
    exists, matches = (
        (tf.io.gfile.exists, tf.io.gfile.glob) if remote else (os.path.exists, glob.glob)
    )
    if len(parts) == 1 and (tf.io.gfile.isdir if remote else os.path.isdir)(parts[0]):
        folder = published_folder(parts[0])
        if not exists(join(folder, MANIFEST)):
            files = sorted(matches(join(folder, "*.tfrecord*")))
            if not files:
                raise DataError(
                    f"{folder} has neither a {MANIFEST} nor *.tfrecord files; run "
                    "`electra-tf prepare` to make one."
                )
            return files, None, None
        manifest = Manifest.read(folder)
        missing = [f for f in manifest.files if not exists(f)]
        if missing:
            raise DataError(
                f"{missing[0]} is listed in {join(folder, MANIFEST)} but missing; "
                "re-run `electra-tf prepare` for this folder."
            )
        return manifest.files, manifest.counts, manifest
    files = []
    for part in parts:
        found = sorted(matches(part))
        if not found:
            folder = Path(part).parent
            stale = [folder.with_name(f".{folder.name}.{end}") for end in ("old", "prepare-old")]
            hint = next(
                (
                    f"; {old} holds the folder's previous contents (an interrupted prepare): "
                    "run prepare again (it puts them back first) or rename it back"
                    for old in stale
                    if old.exists()
                ),
                "",
            )
            raise DataError(f"No file matches {part!r}; check the path or glob{hint}.")
        files.extend(found)
    return files, *((None, None) if remote else _manifest_beside(files))


def _manifest_beside(files) -> tuple[list[int] | None, Manifest | None]:
    """(counts, manifest) of the `manifest.json` in the files' folder, if it lists them all."""
    folders = {os.path.dirname(os.path.abspath(f)) for f in files}
    if len(folders) != 1:
        return None, None
    folder = folders.pop()
    if not os.path.exists(os.path.join(folder, MANIFEST)):
        return None, None
    manifest = Manifest.read(folder)
    paths = (os.path.abspath(f) for f in manifest.files)
    counts = dict(zip(paths, manifest.counts, strict=True))
    if not all(os.path.abspath(f) in counts for f in files):
        return None, None
    return [counts[os.path.abspath(f)] for f in files], manifest


def count_records(files) -> list[int]:
    """Number of records in each TFRecord file (reads the files once)."""
    counts = []
    for name in files:
        dataset = tf.data.TFRecordDataset(name)
        counts.append(int(dataset.reduce(tf.constant(0, tf.int64), lambda n, _: n + 1)))
    return counts


def check_first_record(files, sequence_length: int) -> None:
    """Fails with one sentence if the first record of `files` does not fit the config."""
    for name in files:
        try:
            record = next(iter(tf.data.TFRecordDataset(name).take(1)), None)
        except tf.errors.OpError as error:
            raise DataError(f"{name} is not a readable TFRecord file ({error.message}).") from None
        if record is None:
            continue
        example = tf.train.Example()
        try:
            example.ParseFromString(record.numpy())
        except Exception:  # noqa: BLE001 - protobuf raises its own DecodeError
            raise DataError(f"{name} does not hold tf.train.Example records.") from None
        features = example.features.feature
        for feature in FEATURES:
            if feature not in features:
                raise DataError(
                    f"{name} has no {feature!r} feature; packed examples need "
                    f"{', '.join(FEATURES)} (the reference format)."
                )
        length = len(features["input_ids"].int64_list.value)
        if length != sequence_length:
            raise DataError(
                f"{name} holds sequences of length {length} but data.sequence_length is "
                f"{sequence_length}; pass --set data.sequence_length={length}."
            )
        return
    raise DataError(f"The training files ({files[0]} ...) hold no examples.")
