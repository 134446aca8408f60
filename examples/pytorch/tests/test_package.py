"""The package as a user installs it: a wheel built from ``examples/pytorch`` installs into a
fresh virtual environment (no torch there) and imports, typed (``py.typed``)."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import SRC, required

PROJECT = os.path.dirname(SRC)


def run(*args, **kwargs):
    out = subprocess.run(list(args), capture_output=True, text=True, **kwargs)
    assert out.returncode == 0, f"{args}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_pip_installs_the_package_into_a_fresh_venv(tmp_path):
    try:
        import setuptools  # noqa: F401  (the build backend pyproject.toml names)
    except ImportError:
        if required():
            raise
        pytest.skip("SKIP: setuptools is not installed here, so the wheel cannot be built")
    # A copy: building in the checkout would leave build/ and *.egg-info in it.
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__"))
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", str(tmp_path / "dist"), str(project))
    (wheel,) = os.listdir(tmp_path / "dist")
    assert wheel.startswith("seqpoint_log-") and wheel.endswith("-py3-none-any.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    run(python, "-m", "pip", "install", "-q", "--no-index", str(tmp_path / "dist" / wheel))
    code = (
        "import os, sys, seqpoint_log, seqpoint_log.hf, seqpoint_log.lightning\n"
        "here = os.path.dirname(seqpoint_log.__file__)\n"
        "print(here.startswith(sys.prefix), os.path.exists(os.path.join(here, 'py.typed')),\n"
        "      'torch' in sys.modules, seqpoint_log.__version__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    said = run(python, "-c", code, cwd=str(tmp_path), env=env).split()
    assert said[:3] == ["True", "True", "False"]
    assert said[3] in wheel
    # Plain timing works there without torch.
    code = (
        "import seqpoint_log\n"
        "with seqpoint_log.TimedLog('run.jsonl') as log:\n"
        "    with log.step(seq_len=5, batch_size=2):\n"
        "        pass\n"
    )
    run(python, "-c", code, cwd=str(tmp_path), env=env)
    assert '"seq_len": 5' in (tmp_path / "run.jsonl").read_text()


def test_the_package_type_checks_strictly():
    try:
        import mypy  # noqa: F401
    except ImportError:
        if required():
            raise
        pytest.skip("SKIP: mypy is not installed here")
    said = run(sys.executable, "-m", "mypy", "--config-file", os.path.join(PROJECT, "pyproject.toml"),
               "--cache-dir", os.devnull, SRC, cwd=PROJECT)
    assert "Success: no issues found" in said
