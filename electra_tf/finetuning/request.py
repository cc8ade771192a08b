"""A run folder's `request.json`: what was asked, so that a re-run resumes only the same run.

`check_request(folder, request)` writes it into a new folder, or compares it with the one
there: the same request resumes; another (other data, settings, columns, kind, labels)
is refused in one sentence naming what differs; a folder holding nothing but its
`request.json` (a run that failed before its first checkpoint) takes the new request.
A run recorded by an older version,
before some settings or columns existed, resumes when those are at their defaults.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.finetuning.engine import read_json
from electra_tf.io.durable import write_atomic
from electra_tf.tasks.config import FinetuneConfig

__all__ = ["check_request"]


def _digest_request(request: dict) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:16]


# Settings only question answering reads (the standard defaults changed them on 2026-11-29).
QA_HEAD = ("answerable_loss_weight", "no_answer", "span_head_init")


def _as_recorded(found: dict, request: dict) -> dict:
    """`request` without the settings and columns that `found` (a run started by an older
    version) did not record yet and that are at their defaults: an upgrade resumes."""
    from electra_tf.datasets.files import Columns

    defaults = {"config": dataclasses.asdict(FinetuneConfig()),
                "columns": dataclasses.asdict(Columns())}  # fmt: skip
    same = dict(request)
    for key, default in defaults.items():
        old, new = found.get(key), request.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            same[key] = {
                k: v for k, v in new.items() if k in old or k not in default or v != default[k]
            }
    if isinstance(found.get("config"), dict) and isinstance(same.get("config"), dict):
        if "defaults" not in found["config"]:  # recorded before the choice: compare the values
            same["config"] = {k: v for k, v in same["config"].items() if k != "defaults"}
        if "span_head_init" not in found["config"]:  # recorded when its law was the only one
            if same["config"].get("span_head_init") == "truncated_normal":
                same["config"] = {k: v for k, v in same["config"].items() if k != "span_head_init"}
        if request.get("kind") != "question_answering":  # QA's head settings change nothing
            same["config"] = {k: v for k, v in same["config"].items() if k not in QA_HEAD}
            same["config"].update({k: found["config"][k] for k in QA_HEAD if k in found["config"]})
    return same


def _upgrade_hint(found: dict, differing: list) -> str:
    """What resumes a run recorded before the standard defaults (or, for question answering,
    before their transformers-style head), when its settings differ."""
    config = found.get("config")
    if "config" in differing and isinstance(config, dict) and "defaults" not in config:
        return " (a run started before the standard defaults resumes with --defaults paper)"
    if "config" in differing and isinstance(config, dict) and "span_head_init" not in config:
        return (" (a question-answering run started before the standard defaults took "
                "transformers' head resumes with --answerable-loss-weight 1 --no-answer "
                "answerability)")  # fmt: skip
    return ""


def _where_it_is(request: dict) -> dict:
    """`request` with files compared by content (a run resumes from another directory, or
    one recorded with relative paths), and a local `init` folder by its absolute path."""
    same = dict(request)
    if isinstance(same.get("data"), dict):
        same["data"] = {
            split: {k: v for k, v in entry.items() if k != "path"} if isinstance(entry, dict)
            else entry
            for split, entry in same["data"].items()
        }  # fmt: skip
    init = same.get("init")
    if isinstance(init, str) and os.path.exists(init):
        same["init"] = os.path.abspath(init)
    return same


def _holds_no_work(folder: Path) -> bool:
    """Whether the run folder holds nothing but its `request.json` (and empty folders): a
    run that failed before its first checkpoint, which a new request may take over."""
    return all(path.is_dir() or path == folder / "request.json" for path in folder.rglob("*"))


def check_request(folder: Path, request: dict) -> None:
    """Writes `request.json`, or refuses a folder that holds another request's run (a
    folder with no work in it yet, left by a run that failed before its first checkpoint,
    takes the new request)."""
    path = folder / "request.json"
    found = read_json(path)
    digest = _digest_request(request)
    if found is not None and found.get("digest") != digest and _holds_no_work(folder):
        found = None  # no work of the old request is lost: write this one
    if found is not None and found.get("digest") != digest:
        found = _where_it_is(found)
        recorded = _as_recorded(found, _where_it_is(request))
        differing = sorted(
            key
            for key in set(found) | set(recorded)
            if key != "digest" and found.get(key) != recorded.get(key)
        )
    else:
        differing = []
    if differing:
        raise ConfigError(
            f"{folder} holds a fine-tuning run of another request (its {', '.join(differing)} "
            f"differ){_upgrade_hint(found, differing)}; choose another --output-dir, or delete "
            "that folder to start over."
        )
    if found is None:
        existed = folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        try:
            write_atomic(path, json.dumps({**request, "digest": digest}, indent=2))
        except OSError:
            if not existed:
                folder.rmdir()  # nothing else is in it yet
            raise
