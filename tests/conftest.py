"""Shared fixtures: the example app is synthesized once per run, with cdk-nag attached.

Every fixture shared between tests (module or session scope) must hand out read-only data
(``support.frozen.frozen``): the guard below fails a test whose shared fixture holds an editable
dict or list, so no test can change what the next one sees, whatever the order (the suite runs
in random order, pytest-randomly; its seed is printed in the header and ``-p randomly
--randomly-seed=N`` replays it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No hypothesis deadlines: a test checks results, not speed (timings come from benchmarks/), and on
# a shared machine a slow first call made the same example fail once and pass on replay.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # app.py
sys.path.insert(0, str(ROOT / "tests"))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the order's seed at the end too (``-q`` hides pytest-randomly's header line)."""
    seed = getattr(config.option, "randomly_seed", None)
    if config.pluginmanager.hasplugin("randomly") and isinstance(seed, int):
        terminalreporter.write_line(f"tests ran in random order: replay it with -p randomly --randomly-seed={seed}")


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    """Fail a shared (not function-scoped) fixture whose value has an editable dict or list."""
    value = yield
    if fixturedef.scope != "function":
        from support.frozen import is_frozen

        if not is_frozen(value):
            pytest.fail(
                f"fixture {fixturedef.argname!r} ({fixturedef.scope} scope) is shared between tests but editable: "
                "return support.frozen.frozen(value)",
                pytrace=False,
            )
    return value


@pytest.fixture(scope="session")
def example_outdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example app (app.py) synthesized once, with cdk-nag's AwsSolutionsChecks as a validation plugin.

    The plugin makes synthesis fail on any unacknowledged finding.
    """
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    import app as example_app

    outdir = tmp_path_factory.mktemp("example-assembly")
    app = cdk.App(outdir=str(outdir))
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    example_app.build_app(app)
    app.synth()
    return outdir


@pytest.fixture(scope="session")
def example_templates(example_outdir: Path) -> dict[str, dict[str, Any]]:
    """``{stack name: template}`` for every example stack."""
    from support.frozen import frozen
    from support.synth import read_assembly

    return frozen(read_assembly(example_outdir))  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def nag_report(example_outdir: Path) -> dict[str, Any]:
    """cdk-nag's validation report for the example app."""
    from support.frozen import frozen

    return frozen(json.loads((example_outdir / "validation-report.json").read_text()))  # type: ignore[no-any-return]
