"""The installed packages meet setup.cfg's pins (a venv made before a pin changed does not),
and the pins hold what they are there for."""

import configparser
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _requirements(section: str, key: str) -> list[Requirement]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config[section][key].splitlines()
    return [Requirement(line) for line in map(str.strip, lines) if line and line[0] != "#"]


def test_every_pinned_requirement_is_met_by_what_is_installed():
    requirements = _requirements("options", "install_requires")
    requirements += _requirements("options.extras_require", "test")
    pinned = [r for r in requirements if r.specifier and not r.marker]
    assert len(pinned) > 10 and any(r.name == "ml_dtypes" for r in pinned)
    unmet = [
        f"{r} (installed: {metadata.version(r.name)})"
        for r in pinned
        if not r.specifier.contains(metadata.version(r.name), prereleases=True)
    ]
    assert not unmet, f"reinstall with pip install -e '.[test]': {unmet}"


def test_ml_dtypes_gives_tensorflow_its_bfloat16_and_float8_types():
    """The pinned ml_dtypes (below 0.7, whose import spends 0.7 s in numpy's loop
    registration) still gives TensorFlow its bfloat16 (`export --bfloat16`, mixed_bfloat16)
    and rounds to a float8 type as JAX's float8 dtypes expect."""
    import ml_dtypes
    import numpy as np
    import tensorflow as tf

    x = np.array([1.0, 2.5, 3.0], dtype=ml_dtypes.bfloat16)
    assert tf.constant(x).dtype == tf.bfloat16 and tf.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16
    assert float((x * 2).astype(np.float32).sum()) == 13.0  # 2 + 5 + 6, exact in bfloat16
    y = np.array([0.1], np.float32).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert float(y[0]) == 0.1015625  # 1.625 * 2**-4, e4m3's nearest to 0.1
