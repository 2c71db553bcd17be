"""Print one line per synthesized stack: resources and template size (used by ``make synth``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def summarize(outdir: Path) -> list[str]:
    """One summary line per stack in the cloud assembly at ``outdir``."""
    manifest = json.loads((outdir / "manifest.json").read_text())
    lines = []
    for name, artifact in sorted(manifest["artifacts"].items()):
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        template_path = outdir / artifact["properties"]["templateFile"]
        template = json.loads(template_path.read_text())
        lines.append(
            f"{name}: {len(template.get('Resources', {}))} resources, "
            f"{template_path.stat().st_size:,} bytes -> {template_path}"
        )
    return lines


if __name__ == "__main__":
    print("\n".join(summarize(Path(sys.argv[1] if len(sys.argv) > 1 else "cdk.out"))))
