"""Guards for the source-root layout (DESIGN.md, "Name clash")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_constructs_folder_is_not_a_package() -> None:
    assert not (ROOT / "constructs" / "__init__.py").exists()
    assert not (ROOT / "stacks" / "__init__.py").exists()


def test_constructs_resolves_to_the_pypi_package() -> None:
    import constructs

    assert "site-packages" in str(constructs.__file__), constructs.__file__


def test_no_import_through_the_source_root() -> None:
    offenders = []
    for path in ROOT.rglob("*.py"):
        if any(part in {".venv", "node_modules", "cdk.out", "build"} for part in path.parts) or path == Path(__file__):
            continue
        text = path.read_text()
        if "import constructs.sagemaker_pools" in text or "from constructs.sagemaker_pools" in text:
            offenders.append(str(path))
    assert offenders == []


def test_py_typed_and_instance_type_data_ship_with_the_package() -> None:
    import sagemaker_pools

    package = Path(sagemaker_pools.__file__).parent
    assert (package / "py.typed").exists()
    assert len((package / "data" / "sagemaker-instance-types.txt").read_text().split()) == 277


def test_value_objects_do_not_start_cdk() -> None:
    code = (
        "import sys, sagemaker_pools, sagemaker_pools.pools, sagemaker_pools.instance_types\n"
        "p = sagemaker_pools.InstancePool(instance_type='ml.g6e.48xlarge')\n"
        "assert 'aws_cdk' not in sys.modules and 'jsii' not in sys.modules, sorted(sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_lazy_exports_resolve() -> None:
    import sagemaker_pools

    for name in sagemaker_pools.__all__:
        assert getattr(sagemaker_pools, name) is not None, name


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (lazy and TYPE_CHECKING imports included)."""
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_scaling_and_components_sit_below_the_endpoint() -> None:
    """The endpoint builds its scaling and its components: they must not import it back, not even
    lazily or for type checking (they depend on the protocols in ``sources.py``)."""
    package = ROOT / "constructs" / "sagemaker_pools"
    for module in ("scaling.py", "inference_component.py", "sources.py", "queries.py", "metrics.py"):
        imported = _imported_modules(package / module)
        assert not {".endpoint", "sagemaker_pools.endpoint"} & imported, module
    # and the rule is not vacuous: the endpoint does import them
    assert {".scaling", ".inference_component"} <= _imported_modules(package / "endpoint.py")


def test_every_benchmark_result_the_docs_cite_is_on_record() -> None:
    """A figure in the README or docs names the results file it came from; that file exists."""
    import re

    cited = set()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        cited |= set(re.findall(r"\b((?:synth|ops)-20\d\d-\d\d-\d\d[A-Za-z0-9-]*|against-[A-Za-z0-9-]+)(?:\.md|\.json|\.txt)?\b", doc.read_text()))
    assert {"synth-2026-12-02-lean-alarms", "against-2f548b5-n50-21-triples"} <= cited  # the pattern finds what the README cites
    results = ROOT / "benchmarks" / "results"
    missing = sorted(name for name in cited if not any((results / f"{name}{ext}").exists() for ext in (".md", ".txt")))
    assert missing == []
