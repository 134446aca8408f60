"""What the Python tests share: the package's source folder, a subprocess environment that
finds it, and torch, required where CI installs it."""

import os
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `from conftest import ...`


def without_torch_env():
    """The environment for a fresh interpreter that imports the package from its source."""
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def required():
    """True on CI (which installs torch, transformers and lightning) or with
    SEQPOINT_REQUIRE_TORCH=1: there a missing one fails instead of skipping."""
    return (os.environ.get("CI") in ("true", "1")
            or os.environ.get("SEQPOINT_REQUIRE_TORCH") == "1")


def require(module):
    """``module`` imported, or a skip (which pytest's summary line counts) where it is not
    installed; where it is required, its absence fails instead."""
    if required():
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)


def import_torch():
    return require("torch")
