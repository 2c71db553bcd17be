"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # an App() synthesizes into a temporary folder, never the checkout
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out
    # A printed comment in a block states what it prints: check it.
    for expected in re.findall(r"print\(.*?\)\s*#\s*(.+)", code):
        assert expected.strip() in printed


def _command_lines() -> list[str]:
    """The ``sagemaker-pools ...`` commands of the README's bash blocks (continuations joined, comments cut)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split("#", 1)[0].split(">", 1)[0].strip()
            if command.startswith("sagemaker-pools "):
                commands.append(command)
    return commands


def test_readme_commands_parse() -> None:
    import shlex

    from sagemaker_pools.ops.cli import build_parser

    commands = _command_lines()
    assert len(commands) >= 5
    for command in commands:
        argv = [a for a in shlex.split(command)[1:] if a != "..."]
        build_parser().parse_args(argv)  # exits (SystemExit) on an unknown flag
