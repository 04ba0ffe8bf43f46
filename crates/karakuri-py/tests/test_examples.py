"""examples/ray_sweep.py runs in its serial fallback (Ray absent or --serial) and its numbers
are the pendulum's: the steady state of each well-damped PD pair is the analytic equilibrium."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from test_control import pd_equilibrium

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ray_sweep.py"


def load_example():
    spec = importlib.util.spec_from_file_location("ray_sweep", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_runs_serially():
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--serial", "--kp", "10", "20", "--kd", "2", "4", "--duration", "3"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert out.splitlines()[0].split()[:2] == ["kp", "kd"] and "best: kp =" in out and "4 runs" in out


def test_without_ray_the_sweep_falls_back_to_serial(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    ray_sweep = load_example()
    results = ray_sweep.sweep([10.0, 30.0], [4.0], duration=6.0, chunk=1)
    assert "running the tasks serially" in capsys.readouterr().err
    assert [r["kp"] for r in results] == [10.0, 30.0]
    for r in results:
        assert r["q"] == pytest.approx(pd_equilibrium(r["kp"], 0.8), abs=1e-6)
