"""``sagemaker-pools gate``: does a fallback build answer like the primary?

Modules: :mod:`.decoding` (deterministic decoding where the payload format is known),
:mod:`.live` (the same requests to both sides, on bench's transport), :mod:`.capture` (data
capture files of a production and a shadow variant, paired), :mod:`.compare` (exact match,
token agreement, length ratio, latency, errors), :mod:`.thresholds` (``--threshold``) and
:mod:`.report` (the report, ``--json``).
"""

from __future__ import annotations

__all__: list[str] = []
