"""What a LiteRT export changes: the run's dev and test scores, Keras (float32) against LiteRT.

`measure(model, info, predict)` reads the files the run was fine-tuned on (their
paths and checksums are in `finetuned.json`), scores each labelled split with the
kind's first metric for the Keras model and for `predict` (the flatbuffer), and
counts the rows whose predicted label (or set of labels) differs (regression: the largest
change of a score).
`decide(report, quantize, force)` applies the export's rule: an int8 model that
loses more than `MAX_DROP_POINTS` on **dev** is refused unless forced; test is only
reported (it never chooses anything).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.tasks.registry import get_kind

__all__ = ["MAX_DROP_POINTS", "decide", "measure"]

MAX_DROP_POINTS = 0.5


def _rows(spec, record: dict, columns) -> list | None:
    from electra_tf.datasets.files import Columns
    from electra_tf.io.durable import digest

    path = Path(record["path"])
    if not path.exists() or (record.get("sha256") and digest(path) != record["sha256"]):
        return None
    fields = {k: v for k, v in (columns or {}).items() if k in Columns.__dataclass_fields__}
    rows, _ = spec.read(path, Columns(**fields), needs_labels=False)
    rows = spec.prepare(rows)
    return rows if rows and all(row.label is not None for row in rows) else None


def measure(model, info: dict, predict, batch_size: int = 64) -> dict:
    """Per labelled split of the run: `{"rows", "metric", "keras", "litert", "change_points",
    "changed_predictions"}`; a split whose file is gone (or changed) says so instead."""
    from electra_tf.tasks.kinds._text import METRICS

    spec = get_kind(model.kind)
    name = spec.metrics[0]
    key = "score" if model.kind == "regression" else "logits"
    report = {}
    for split in ("dev", "test"):
        record = (info.get("data") or {}).get(split)
        if not record:
            continue
        rows = _rows(spec, record, info.get("columns"))
        if rows is None:
            report[split] = {"not_measured": f"{record['path']} is missing, changed or unlabelled"}
            continue
        texts = [row.text_a for row in rows]
        pairs = [row.text_b for row in rows] if info.get("pair") else None
        keras = model.predict((texts, pairs) if pairs else texts, batch_size=batch_size, verbose=0)
        lite = np.concatenate([
            predict(texts[i : i + batch_size], pairs and pairs[i : i + batch_size])[key]
            for i in range(0, len(texts), batch_size)
        ])  # fmt: skip
        targets = spec.encode_targets(model.labels, [row.label for row in rows])
        ours, theirs = spec.metric_inputs(np.asarray(keras)), spec.metric_inputs(lite)
        before, after = METRICS[name](targets, ours), METRICS[name](targets, theirs)
        report[split] = {
            "rows": len(rows),
            "metric": name,
            "keras": round(float(before), 5),
            "litert": round(float(after), 5),
            "change_points": round(100 * float(after - before), 3),
        }
        if model.kind == "regression":
            report[split]["largest_score_change"] = float(np.abs(ours - theirs).max())
        else:  # rows whose label (or set of labels) is another
            changed = np.asarray(ours != theirs).reshape(len(rows), -1).any(axis=1)
            report[split]["changed_predictions"] = int(changed.sum())
    return report


def decide(report: dict, quantize: str | None, force: bool = False) -> None:
    """Refuses (one sentence) an int8 export that loses more than the rule allows on dev."""
    if quantize is None or force:
        return
    dev = report.get("dev") or {}
    if "change_points" not in dev:
        reason = dev.get("not_measured", "the run recorded no dev file")
        raise ConfigError(
            f"Cannot check int8's accuracy on dev ({reason}); run the export where the run's "
            "files are, or pass --force to export it unchecked."
        )
    if dev["change_points"] < -MAX_DROP_POINTS:
        raise ConfigError(
            f"int8 loses {-dev['change_points']:.2f} points of dev {dev['metric']} "
            f"({dev['keras']:.4f} -> {dev['litert']:.4f}), more than {MAX_DROP_POINTS}; export "
            "it without --quantize, or pass --force to keep it anyway."
        )
