"""``python -m sagemaker_pools.ops``: the same as the ``sagemaker-pools`` console script."""

from __future__ import annotations

from .entry import main

if __name__ == "__main__":  # guarded: bench worker processes re-import the main module
    raise SystemExit(main())
