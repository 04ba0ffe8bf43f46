"""examples/ray_sweep.py runs in its serial fallback (Ray absent or --serial) and its numbers
are the pendulum's: the steady state of each well-damped PD pair is the analytic equilibrium.
examples/mpc_quadruped.py's MPC on the step derivatives keeps Solo-12 standing through a push
that topples it under PD alone (record 0083)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from test_control import pd_equilibrium

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ray_sweep.py"
MPC_EXAMPLE = EXAMPLE.with_name("mpc_quadruped.py")


def load_example(path=EXAMPLE):
    spec = importlib.util.spec_from_file_location(path.stem, path)
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


def push_both(push):
    """The example's summaries of PD alone and of the MPC after a sideways push (N, 0.1 s)."""
    m = load_example(MPC_EXAMPLE)
    out = []
    for mpc in (False, True):
        rec, ref = m.run([0.0, push, 0.0], mpc)
        assert ref["held_other"] == 0  # every step's derivatives came, but in the push's 20
        assert ref["held_push"] == (20 if mpc else 0)
        out.append(m.summary(rec, ref))
    return out


def test_the_mpc_keeps_solo12_standing_through_a_push_that_topples_pd_alone():
    # 27 N for 0.1 s on 2.5 kg, more than the feet's friction holds (24.5 N): both slide.
    # PD alone rolls onto its back (it stands 22 N, falls from 24 N); the MPC rights the base
    # over its slid feet (it stands 33 N, falls at 36 N)
    pd, mpc = push_both(27.0)
    assert pd["fallen"] and pd["max_deg"] > 90 and not pd["four_feet"], pd
    assert not mpc["fallen"] and mpc["four_feet"], mpc
    assert mpc["max_deg"] < 6 and mpc["final_deg"] < 0.5, mpc  # upright: 3.1 and 0.02 degrees
    assert mpc["over_feet_cm"] < 0.5 and abs(mpc["final_dz_cm"]) < 2, mpc  # 0.03 cm over them, 1.0 cm low


def test_after_a_push_pd_alone_stands_the_mpc_sways_less():
    pd, mpc = push_both(12.0)
    assert not pd["fallen"] and not mpc["fallen"], (pd, mpc)
    # largest tilt 4.6 degrees under PD alone, 0.26 under the MPC; largest sway 4.6 cm and 1.6 cm
    assert mpc["max_deg"] < 0.2 * pd["max_deg"] and mpc["max_cm"] < 0.5 * pd["max_cm"], (pd, mpc)
    assert mpc["final_deg"] < 0.5 and mpc["over_feet_cm"] < 0.5, mpc
