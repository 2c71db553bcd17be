"""`npx cdk synth` (the pinned npm CLI) works offline, without AWS credentials."""

from __future__ import annotations

import json
import os
import sys
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT / "node_modules" / ".bin" / "cdk").exists(), reason="run `make test` to install the CDK CLI")
def test_cdk_cli_synthesizes_every_stack_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        {
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
            "AWS_CONFIG_FILE": str(tmp_path / "none"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "CDK_HOME": str(tmp_path / "cdk-home"),
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
            # app.py runs under the project's interpreter, whatever `python3` on PATH is.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    out = tmp_path / "cdk.out"
    result = subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "cdk"), "synth", "--quiet", "--output", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    stacks = [n for n, a in manifest["artifacts"].items() if a["type"] == "aws:cloudformation:stack"]
    assert "RealtimePooledLlm" in stacks
    for name in stacks:
        template = json.loads((out / f"{name}.template.json").read_text())
        assert template["Resources"]
