"""Packages: the library and the top-level `recipes/` folder, installed as `electra_tf.recipes`.

Everything else is declared in setup.cfg.
"""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["electra_tf", "electra_tf.*"]) + ["electra_tf.recipes"])
