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
