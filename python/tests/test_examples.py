"""The Python examples run as shipped (at a few envs: the test build is debug)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = ROOT / "examples" / "python"


@pytest.mark.parametrize("name", ["g1_numpy.py", "g1_torch.py"])
def test_example_runs(name):
    if name.endswith("torch.py") and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    env = dict(os.environ, SINEW_EXAMPLE_ENVS="16")
    run = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "non-finite envs: 0" in run.stdout or "non-finite envs: []" in run.stdout
