"""The README's Python quickstart runs as written (from the repository root) and its numbers
are the pendulum's."""

import re
from pathlib import Path

import pytest

from test_control import pd_equilibrium

ROOT = Path(__file__).resolve().parents[3]


def python_blocks():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## From Python") :]
    section = section[: section.index("\n## ", 3)] if "\n## " in section[3:] else section
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_quickstart_runs(monkeypatch, capsys):
    blocks = python_blocks()
    assert len(blocks) == 2 and "World.from_file" in blocks[1] and "add_controller" in blocks[1]
    monkeypatch.chdir(ROOT)
    ns = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), ns)
    world = ns["world"]
    assert world.time == pytest.approx(5.1)
    assert world.q[0] == pytest.approx(pd_equilibrium(20.0, 0.8), abs=1e-6)
    assert ns["obs"].shape == (64, 14)
    printed = capsys.readouterr().out
    assert "['hinge']" in printed and "9.81" in printed
