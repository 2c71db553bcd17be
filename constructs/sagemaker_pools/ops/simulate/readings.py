"""Where AWS's documents disagree, or say nothing, the simulation follows a named reading.

By default every rule is the reading the AWS reference supports (``docs/simulate.md`` quotes
each source). A reading named here replaces one rule with the other source's (or with the old
model's), so that a setting can be checked under every reading: ``--reading NAME`` (repeatable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import EXIT_USAGE, OpsError

__all__ = [
    "READINGS",
    "LAUNCH_POST",
    "UPDATES_OVERLAP",
    "COOLDOWN_FROM_REQUEST",
    "IDLE_COPIES_MISSING",
    "IDLE_RELEASE_AFTER_COOLDOWN",
    "INSTANCE_COUNT_METRIC",
    "check_readings",
]

LAUNCH_POST = "launch-post"
UPDATES_OVERLAP = "updates-overlap"
COOLDOWN_FROM_REQUEST = "cooldown-from-request"
IDLE_COPIES_MISSING = "idle-copies-missing"
IDLE_RELEASE_AFTER_COOLDOWN = "idle-release-after-cooldown"
INSTANCE_COUNT_METRIC = "instance-count-metric"

#: Every reading, and the rule it puts in place of the default's.
READINGS: Mapping[str, str] = {
    LAUNCH_POST: "a pool without capacity is retried for the whole provisioning timeout before the next pool "
    "(the launch post); default: the next pool at once, the timeout counting the whole operation (developer guide)",
    UPDATES_OVERLAP: "a capacity change is accepted while the endpoint is Updating; default: refused "
    "('Cannot update in-progress endpoint') until the change in progress completes",
    COOLDOWN_FROM_REQUEST: "a policy's cooldown starts when Application Auto Scaling asks for the change; "
    "default: when the change has completed ('after Application Auto Scaling successfully scales out')",
    IDLE_COPIES_MISSING: "inference-component copies that serve no request publish no per-copy datapoint; "
    "default: they publish zeros (undocumented either way)",
    IDLE_RELEASE_AFTER_COOLDOWN: "managed instance scaling releases an instance without copies only after the scale-in "
    "policy's CooldownInMinutes; default: at once (the API reference gives the cooldown to consolidation only)",
    INSTANCE_COUNT_METRIC: "SageMaker publishes the launch post's InstanceCount (AWS/SageMaker, per variant and per "
    "InstanceType); default: not published (no AWS reference documents it: whatever reads it reads nothing)",
}


def check_readings(names: Iterable[str]) -> frozenset[str]:
    """``names`` as a set, each one of :data:`READINGS`.

    Raises:
        OpsError: (exit 2) an unknown reading, naming the allowed ones.
    """
    found = frozenset(names)
    unknown = sorted(found - READINGS.keys())
    if unknown:
        raise OpsError(f"--reading {unknown[0]}: not a reading (readings: {', '.join(READINGS)})", EXIT_USAGE)
    return found
