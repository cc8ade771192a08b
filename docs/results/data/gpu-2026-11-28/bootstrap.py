"""On the device: unpack the carried wheels this Python lacks into SITE (a wheel is a zip).

    python3 bootstrap.py WHEEL_DIR SITE   # then PYTHONPATH=SITE

A wheel is unpacked only when the machine cannot already import its top-level package, so
the machine's own JAX, PyTorch, transformers, numpy (and what they need) are never shadowed.
"""

import importlib.util
import sys
import zipfile
from pathlib import Path


def top_levels(wheel: zipfile.ZipFile) -> list[str]:
    """The importable names a wheel provides (its top_level.txt, else its top folders)."""
    for name in wheel.namelist():
        if name.endswith(".dist-info/top_level.txt"):
            return [line.strip() for line in wheel.read(name).decode().splitlines() if line.strip()]
    tops = {name.split("/")[0] for name in wheel.namelist() if "/" in name}
    return sorted(t for t in tops if not t.endswith((".dist-info", ".data")))


def main(wheels: str, site: str) -> None:
    Path(site).mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(wheels).glob("*.whl")):
        with zipfile.ZipFile(path) as wheel:
            names = top_levels(wheel)
            present = all(importlib.util.find_spec(n.replace("-", "_")) for n in names)
            print(f"{'kept ' if present else 'unpack'} {path.name} ({', '.join(names)})")
            if not present:
                wheel.extractall(site)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
