"""The README's Python examples run as written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 5


def _run_with_nag(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run a README block with cdk-nag's AwsSolutionsChecks on every App it makes; return those apps, synthesized."""
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    monkeypatch.chdir(tmp_path)  # an App() synthesizes into a temporary folder, never the checkout
    real_app = cdk.App
    apps: list[Any] = []

    def nagged_app(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("outdir", str(tmp_path / f"assembly{len(apps)}"))
        app = real_app(*args, **kwargs)
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
        apps.append(app)
        return app

    monkeypatch.setattr(cdk, "App", nagged_app)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    for app in apps:
        app.synth()  # the block may have synthesized already: then this returns that assembly
    return apps


def _nag_violations(app: Any) -> list[str]:
    """AwsSolutions findings without an acknowledgment (cdk-nag writes no plugin report when it has nothing to say)."""
    report = json.loads((Path(app.outdir) / "validation-report.json").read_text())
    nag = [r for r in report["pluginReports"] if r["pluginName"] == "AwsSolutions"]
    assert len(nag) <= 1
    for suppressed in (s for r in nag for s in r.get("suppressedViolations", [])):
        assert len(suppressed.get("reason", "")) > 20, suppressed["ruleName"]
    return [
        f"{v['ruleName']}: {[c['constructPath'] for c in v.get('violatingConstructs', [])]}" for r in nag for v in r["violations"]
    ]


def test_the_nag_run_catches_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a bucket without access logs or TLS is two findings."""
    code = "from aws_cdk import App, Stack\nfrom aws_cdk import aws_s3 as s3\ns3.Bucket(Stack(App(), 'Bare'), 'B')\n"
    with pytest.raises(Exception, match="AwsSolutions-S1"):
        _run_with_nag(code, tmp_path, monkeypatch)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Each block runs as written, prints what it says, and its stacks pass cdk-nag's AwsSolutionsChecks."""
    apps = _run_with_nag(code, tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    # A printed comment in a block states what it prints: check it.
    for expected in re.findall(r"print\(.*?\)\s*#\s*(.+)", code):
        assert expected.strip() in printed
    assert apps, "the block makes no App"
    for app in apps:
        assert _nag_violations(app) == []


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
