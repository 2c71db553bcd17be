"""The new-user path: `make synth`'s command and `npx cdk synth` work in a fresh shell, agree, and are quiet.

A fresh shell has no activated .venv (PATH lacks it, ``python3`` is the system one, without
aws_cdk), no ``JSII_*`` variable and no AWS credentials. Both paths must synthesize the same
templates as the tests (one source of feature flags: cdk.json's context), print no jsii Node
end-of-life banner and no "feature flags are not configured" notice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from support.synth import read_assembly

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "node_modules" / ".bin" / "cdk"
BANNER = re.compile(r"end-of-life|not supported anymore", re.IGNORECASE)


def _fresh_shell(tmp_path: Path) -> dict[str, str]:
    """The environment of a new shell: PATH without the virtual environment, nothing of ours set."""
    venv_bin = Path(sys.executable).parent
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and ".venv" not in p and Path(p) != venv_bin]
    return {
        "PATH": os.pathsep.join(path),
        "HOME": os.environ.get("HOME", str(tmp_path)),  # keeps the jsii cache warm; nothing of ours lives there
        "LANG": "C.UTF-8",
        "CDK_HOME": str(tmp_path / "cdk-home"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


@pytest.fixture(scope="module")
def make_synth(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`make synth`'s command (`.venv/bin/python app.py`) in a fresh shell: (output folder, what it printed)."""
    tmp = tmp_path_factory.mktemp("make-synth")
    env = {**_fresh_shell(tmp), "CDK_OUTDIR": str(tmp / "cdk.out")}
    result = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "cdk.out", result.stdout + result.stderr


def test_make_synth_is_quiet_and_equals_the_tests_templates(
    make_synth: tuple[Path, str], example_templates: dict[str, dict[str, Any]]
) -> None:
    outdir, printed = make_synth
    assert not BANNER.search(printed), printed[:2000]
    assert read_assembly(outdir) == example_templates


def test_the_readme_quotes_what_make_synth_prints(make_synth: tuple[Path, str]) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from synth_summary import summarize

    readme = (ROOT / "README.md").read_text()
    quoted = re.findall(r"`make synth` prints, for example, `([^`]+?) -> cdk\.out/…`", readme)
    assert len(quoted) == 1, "the README's sample line of `make synth` moved: keep this test pointing at it"
    printed = [line.split(" -> ")[0] for line in summarize(make_synth[0])]
    assert quoted[0] in printed


@pytest.mark.skipif(not CLI.exists(), reason="run `make synth` or `make test` to install the CDK CLI")
def test_plain_npx_cdk_synth_in_a_fresh_shell_writes_make_synths_templates(
    tmp_path: Path, make_synth: tuple[Path, str]
) -> None:
    """`npx cdk synth`, as a user types it (no flags), writes byte-for-byte the templates `make synth` does.

    By default the CLI adds ``aws:cdk:path`` metadata to every resource and a ``CDKMetadata``
    resource (version reporting); cdk.json's ``"pathMetadata": false`` and ``"versionReporting":
    false`` turn both off. The command runs in a folder holding links to this checkout's cdk.json,
    app.py, .venv and node_modules, so that its ``cdk.out`` is the test's own.
    """
    project = tmp_path / "project"
    project.mkdir()
    for name in ("cdk.json", "app.py", ".venv", "node_modules"):
        (project / name).symlink_to(ROOT / name)
    result = subprocess.run(
        ["npx", "cdk", "synth"], cwd=project, env=_fresh_shell(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout + result.stderr
    assert not BANNER.search(printed), printed[:2000]
    assert "feature flags" not in printed, printed[:2000]
    out = project / "cdk.out"
    templates = read_assembly(out)
    assert set(templates) == {"RealtimePooledLlm", "InferenceComponentPools", "AsyncScaleToZero"}
    assert templates == read_assembly(make_synth[0])
    for name in templates:  # the same bytes, so the README's "N resources, M bytes" holds for both
        assert (out / f"{name}.template.json").read_bytes() == (make_synth[0] / f"{name}.template.json").read_bytes()


@pytest.mark.skipif(not CLI.exists(), reason="run `make synth` or `make test` to install the CDK CLI")
def test_the_readme_says_what_cdk_jsons_two_settings_remove(tmp_path: Path, make_synth: tuple[Path, str]) -> None:
    """With path metadata and version reporting back on, the CLI adds a ``CDKMetadata`` resource and an
    ``aws:cdk:path`` to every resource, and the example grows by the figures the README quotes."""
    sys.path.insert(0, str(ROOT / "tools"))
    from synth_summary import summarize

    config = json.loads((ROOT / "cdk.json").read_text())
    assert (config["pathMetadata"], config["versionReporting"]) == (False, False)
    out = tmp_path / "cdk.out"
    result = subprocess.run(
        [str(CLI), "synth", "--output", str(out), "--path-metadata", "--version-reporting", "RealtimePooledLlm"],
        cwd=ROOT,
        env=_fresh_shell(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    resources = read_assembly(out)["RealtimePooledLlm"]["Resources"]
    assert resources["CDKMetadata"]["Type"] == "AWS::CDK::Metadata"
    assert all("aws:cdk:path" in r.get("Metadata", {}) for k, r in resources.items() if k != "CDKMetadata")

    readme = (ROOT / "README.md").read_text()
    (quoted,) = re.findall(r"grew from (\d+) resources and ([\d,]+) bytes to (\d+) and ([\d,]+)\.", readme)

    def figures(outdir: Path) -> tuple[str, str]:
        (line,) = [line for line in summarize(outdir) if line.startswith("RealtimePooledLlm:")]
        match = re.match(r"RealtimePooledLlm: (\d+) resources, ([\d,]+) bytes", line)
        assert match
        return match[1], match[2]

    assert quoted == (*figures(make_synth[0]), *figures(out))


def _fake_checkout(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A copy of the Makefile and the files its targets depend on, with an installed .venv stub, and a
    PATH whose ``npm`` and ``.venv/bin/python`` only log their arguments: (folder, environment, log)."""
    checkout, tools, log = tmp_path / "clone", tmp_path / "bin", tmp_path / "calls.log"
    checkout.mkdir()
    tools.mkdir()
    for name in ("Makefile", "package.json", "package-lock.json", "pyproject.toml"):
        (checkout / name).write_bytes((ROOT / name).read_bytes())
    logger = "#!/bin/sh\necho \"{name} $*\" >> " + str(log) + "\n"
    npm = tools / "npm"
    npm.write_text(logger.format(name="npm") + "mkdir -p node_modules/.bin && touch node_modules/.bin/cdk\n")
    python = checkout / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(logger.format(name="python"))
    for script in (npm, python):
        script.chmod(0o755)
    stamp = checkout / ".venv" / ".installed-base"  # the package is installed, after pyproject.toml changed
    stamp.touch()
    later = (checkout / "pyproject.toml").stat().st_mtime + 10
    os.utime(stamp, (later, later))
    env = _fresh_shell(tmp_path)
    env["PATH"] = f"{tools}{os.pathsep}{env['PATH']}"
    return checkout, env, log


def test_make_synth_installs_the_pinned_cli_once(tmp_path: Path) -> None:
    """`make synth` in a fresh clone runs `npm ci` (the CLI pinned in package-lock.json) before the app,
    so that `npx cdk ...` works right after; a second `make synth` does not run it again, a changed
    package-lock.json does."""
    checkout, env, log = _fake_checkout(tmp_path)

    def make_synth() -> list[str]:
        result = subprocess.run(["make", "synth"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return calls

    first = make_synth()
    assert [c.split()[:2] for c in first] == [["npm", "ci"], ["python", "app.py"], ["python", "tools/synth_summary.py"]]
    assert (checkout / "node_modules" / ".bin" / "cdk").exists()
    assert [c.split()[0] for c in make_synth()] == ["python", "python"]  # installed: no npm
    later = (checkout / "node_modules" / ".installed").stat().st_mtime + 10
    os.utime(checkout / "package-lock.json", (later, later))
    assert [c.split()[:2] for c in make_synth()][0] == ["npm", "ci"]


def test_cdk_json_runs_the_projects_interpreter_and_sets_the_recommended_flags() -> None:
    """cdk.json's app is the virtual environment's Python (the system one lacks aws_cdk), and its
    context holds exactly the flags `cdk init` writes for the installed aws-cdk-lib."""
    config = json.loads((ROOT / "cdk.json").read_text())
    assert config["app"].split()[0] == ".venv/bin/python"
    import aws_cdk

    bundle = next((Path(aws_cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz"))
    with tarfile.open(bundle) as tar:
        member = tar.extractfile("package/recommended-feature-flags.json")
        assert member is not None
        recommended = json.load(member)
    context = config["context"]
    assert {k: v for k, v in context.items() if k.startswith("@aws-cdk")} == recommended
    assert context["cli-telemetry"] is False


def test_the_package_declares_its_license_as_an_spdx_expression() -> None:
    """setuptools deprecates ``license = { text = ... }``: every install printed the warning."""
    import importlib.metadata
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in project["build-system"]["requires"]  # the first to read SPDX strings
    assert importlib.metadata.metadata("cdk-sagemaker-pools")["License-Expression"] == "Apache-2.0"
