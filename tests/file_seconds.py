"""Seconds per test file of a past full run, for the order the suite hands files out in.

    pytest -n 2 --dist loadfile --junitxml=run.xml && python tests/file_seconds.py run.xml

writes `tests/file_seconds.json` ({file: seconds}, setup and teardown included). The
conftest orders the collected files longest first, so that with `--dist loadfile` (and
`--no-loadscope-reorder`, in pyproject's addopts) the last files the two workers pick up
are short ones and neither waits long for the other at the end. A file missing from the
JSON counts as short; stale figures only change the order, never which tests run.
"""

from __future__ import annotations

import collections
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).parent
SECONDS = HERE / "file_seconds.json"


def file_seconds(junit_xml, root: Path = HERE.parent) -> dict:
    """{tests/...py: seconds} summed over a junit XML report's test cases.

    A case's `classname` is its module's dotted path, plus a class name for methods:
    the longest prefix that is a file under `root` names the file.
    """
    seconds = collections.Counter()
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        for cut in range(len(parts), 0, -1):
            name = "/".join(parts[:cut]) + ".py"
            if (root / name).is_file():
                seconds[name] += float(case.get("time", 0))
                break
    return {name: round(value, 1) for name, value in sorted(seconds.items())}


def longest_first(paths: list, seconds: dict) -> list:
    """Indices of `paths` (each test's file, in collection order) ordered by their file's
    recorded seconds, longest first; ties and unknown files keep collection order."""
    return sorted(range(len(paths)), key=lambda i: -seconds.get(paths[i], 0.0))


def load() -> dict:
    """The recorded seconds per file ({} when there is no record)."""
    try:
        return json.loads(SECONDS.read_text())
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    SECONDS.write_text(json.dumps(file_seconds(sys.argv[1]), indent=1) + "\n")
