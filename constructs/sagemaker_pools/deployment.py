"""Deployment policies: how SageMaker moves an endpoint to a new configuration.

Any change to pools, models or variant settings creates a new EndpointConfig and calls
UpdateEndpoint; the policy here (rendered as the Endpoint's ``DeploymentConfig``) decides how
traffic moves to the new fleet and which CloudWatch alarms roll it back.

* blue/green: a full new fleet, traffic shifted all at once, as a canary, or linearly;
* rolling: the fleet replaced in batches (needs no second full fleet: the option when GPU
  capacity is short).

Ranges are SageMaker's (API reference: TrafficRoutingConfig, RollingUpdatePolicy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sagemaker as sagemaker

from ._l1 import l1_properties
from ._tokens import is_unresolved
from ._validate import check_int_range, seconds_in_range
from .errors import PoolConfigError

__all__ = ["CapacitySize", "DeploymentPolicy"]

_MAX_ALARMS = 10


@dataclass(frozen=True)
class CapacitySize:
    """A step of a deployment: a number of instances or a percentage of the variant's fleet."""

    type: str
    value: int

    @staticmethod
    def instances(count: int) -> "CapacitySize":
        """``count`` instances (1 or more)."""
        check_int_range(count, "CapacitySize.instances", 1, None)
        return CapacitySize("INSTANCE_COUNT", count)

    @staticmethod
    def percent(percent: int) -> "CapacitySize":
        """``percent`` % of the variant's instances (1-100)."""
        check_int_range(percent, "CapacitySize.percent", 1, 100)
        return CapacitySize("CAPACITY_PERCENT", percent)

    def _check_percent(self, field: str, low: int, high: int) -> None:
        if self.type == "CAPACITY_PERCENT" and not is_unresolved(self.value) and not low <= self.value <= high:
            raise PoolConfigError(field, f"{self.value}%", f"{low}% to {high}% of the variant's instances")

    def _render(self) -> dict[str, Any]:
        return l1_properties(sagemaker.CfnEndpoint.CapacitySizeProperty, type=self.type, value=self.value)


@dataclass(frozen=True)
class DeploymentPolicy:
    """A validated ``DeploymentConfig``. Build one with the static methods.

    Every policy takes ``rollback_alarms``: up to 10 CloudWatch alarms; if any goes to ALARM
    during the deployment SageMaker rolls back to the old fleet.
    """

    _blue_green: Mapping[str, Any] | None = None
    _rolling: Mapping[str, Any] | None = None
    rollback_alarms: tuple[cloudwatch.IAlarm, ...] = field(default=())
    # (traffic routing type or "ROLLING", step size, wait/bake seconds, termination wait seconds)
    _timing: tuple[str, CapacitySize | None, int | None, int | None] | None = None
    # MaximumExecutionTimeoutInSeconds, when given
    _timeout: int | None = None

    def with_rollback_alarms(self, rollback_alarms: Sequence[cloudwatch.IAlarm]) -> "DeploymentPolicy":
        """This policy with ``rollback_alarms`` (0-10) instead of its own.

        For alarms that need the policy first: ``PoolAlarms(deployment=policy)`` sizes its
        at-max-capacity window from the policy, then the endpoint rolls back on those alarms.
        """
        return replace(self, rollback_alarms=DeploymentPolicy._check_alarms(rollback_alarms))

    def waits_seconds(self, fleet: int) -> int | None:
        """Every wait of a deployment of a ``fleet``-instance variant, in seconds: the least it can take.

        Blue/green: every traffic step is followed by a baking period of ``wait_interval``
        (all at once: 1 step; canary: the canary and the final step; linear: one per step of
        ``step_size``), then the old fleet stays for ``termination_wait``. Rolling: each batch
        is baked for ``bake_time``. Provisioning comes on top (:meth:`duration_seconds`).
        ``None`` when a value is a token or there is no traffic policy (SageMaker's default).
        """
        steps = self._steps(fleet)
        if steps is None or self._timing is None:
            return None
        _, _, wait, termination = self._timing
        if any(is_unresolved(v) for v in (wait, termination) if v is not None):
            return None
        return steps * (wait or 0) + (termination or 0)

    def duration_seconds(self, fleet: int, provision_seconds: int) -> int | None:
        """The longest a deployment of a ``fleet``-instance variant can take while capacity is short.

        Its waits (:meth:`waits_seconds`) plus the provisioning they wait for: blue/green
        provisions the new fleet once before the first shift; rolling provisions each batch
        before it takes traffic. ``provision_seconds`` is the variant's
        ``VariantInstanceProvisionTimeoutInSeconds``: "the total time SageMaker AI spends
        attempting to provision instances across all pools before the operation fails"
        (developer guide, instance pools). ``None`` as for :meth:`waits_seconds`.
        """
        waits = self.waits_seconds(fleet)
        steps = self._steps(fleet)
        if waits is None or steps is None or is_unresolved(provision_seconds):
            return None
        assert self._timing is not None
        provisions = steps if self._timing[0] == "ROLLING" else 1
        return waits + provisions * provision_seconds

    def _steps(self, fleet: int) -> int | None:
        if self._timing is None or is_unresolved(fleet):
            return None
        kind, size, _, _ = self._timing
        if size is not None and is_unresolved(size.value):
            return None
        if kind == "ALL_AT_ONCE":
            return 1
        if kind == "CANARY":
            return 2
        assert size is not None  # LINEAR and ROLLING: one bake per step
        if size.type == "INSTANCE_COUNT":
            return math.ceil(max(fleet, size.value) / size.value)
        if kind == "LINEAR":  # traffic moves in steps of the percentage, whatever the fleet
            return math.ceil(100 / size.value)
        # A rolling batch is whole instances: the fewest steps are batches rounded up.
        return math.ceil(fleet / math.ceil(fleet * size.value / 100))

    def _kind(self) -> str:
        """The policy's kind as its factory is named (``canary``, ``rolling`` ...), for messages."""
        return self._timing[0].lower() if self._timing is not None else "SageMaker's default"

    def check_fleet(self, smallest: int, largest: int, provision_seconds: int, field: str) -> None:
        """Refuse what SageMaker refuses, or what rolls back on every deploy, for a fleet of ``smallest``-``largest`` instances.

        * A step given in instances, against the fleet it may meet: the canary at most 50 % of
          the smallest fleet; a linear step 10-50 %, a rolling batch 5-50 % of every fleet size
          (API reference: TrafficRoutingConfig, RollingUpdatePolicy: "of the variant's total
          instance count").
        * ``max_execution_timeout`` against the whole deployment of the largest fleet: every
          wait and bake plus provisioning (:meth:`duration_seconds`). A timeout under that rolls
          back a deployment that meets a capacity shortage, exactly when the pools are needed.

        Tokens are left to deploy time.
        """
        if self._timing is None or any(is_unresolved(v) for v in (smallest, largest)):
            return
        kind, size, _, _ = self._timing
        if size is not None and size.type == "INSTANCE_COUNT" and not is_unresolved(size.value):
            low, high = {"CANARY": (0, 50), "LINEAR": (10, 50), "ROLLING": (5, 50)}[kind]
            name = {"CANARY": "canary_size", "LINEAR": "step_size", "ROLLING": "batch_size"}[kind]
            if size.value * 100 > high * smallest or size.value * 100 < low * largest:
                fleet = f"{smallest}" if smallest == largest else f"{smallest}-{largest}"
                raise PoolConfigError(
                    f"{field}.deployment.{name}",
                    f"{size.value} instances",
                    (f"at most {high}%" if low == 0 else f"{low}% to {high}%")
                    + f" of the variant's instances for every fleet size it may have ({fleet} instances): "
                    "SageMaker checks the step against the fleet it deploys; use CapacitySize.percent(...)",
                )
        timeout = self._timeout
        duration = self.duration_seconds(largest, provision_seconds)
        if timeout is not None and not is_unresolved(timeout) and duration is not None and timeout <= duration:
            raise PoolConfigError(
                f"{field}.deployment.max_execution_timeout",
                f"{timeout} seconds",
                f"more than the whole deployment of {largest} instances ({duration} seconds: every wait and bake, "
                f"{self.waits_seconds(largest)} s, plus the provisioning timeout of {provision_seconds} s "
                + ("for each batch" if kind == "ROLLING" else "for the new fleet")
                + "); or no timeout",
            )

    # -- blue/green ------------------------------------------------------------------------

    @staticmethod
    def all_at_once(
        *,
        wait_interval: Duration = Duration.seconds(0),
        termination_wait: Duration | None = None,
        max_execution_timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> "DeploymentPolicy":
        """Blue/green, all traffic shifted in one step after ``wait_interval`` (default 0 s).

        Args:
            wait_interval: wait before the shift (0-3600 s). Default: 0.
            termination_wait: keep the old fleet this long after the shift (0-3600 s). Default: 0.
            max_execution_timeout: give up after (600-28800 s, more than the waits). Default: SageMaker's.
            rollback_alarms: 0-10 alarms that roll the deployment back. Default: none.
        """
        return DeploymentPolicy._blue_green_policy(
            "ALL_AT_ONCE", None, wait_interval, termination_wait, max_execution_timeout, rollback_alarms
        )

    @staticmethod
    def canary(
        *,
        canary_size: CapacitySize,
        wait_interval: Duration,
        termination_wait: Duration | None = None,
        max_execution_timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> "DeploymentPolicy":
        """Blue/green canary: ``canary_size`` (at most 50 %) first, the rest after ``wait_interval``.

        Args: as :meth:`all_at_once`; ``canary_size`` is ``CapacitySize.percent(1-50)`` or
        ``CapacitySize.instances(n)`` (SageMaker checks n against the fleet: at most half).
        """
        DeploymentPolicy._check_size(canary_size, "DeploymentPolicy.canary.canary_size", 1, 50)
        return DeploymentPolicy._blue_green_policy(
            "CANARY", canary_size, wait_interval, termination_wait, max_execution_timeout, rollback_alarms
        )

    @staticmethod
    def linear(
        *,
        step_size: CapacitySize,
        wait_interval: Duration,
        termination_wait: Duration | None = None,
        max_execution_timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> "DeploymentPolicy":
        """Blue/green linear: traffic moves in steps of ``step_size`` (10-50 %) every ``wait_interval``."""
        DeploymentPolicy._check_size(step_size, "DeploymentPolicy.linear.step_size", 10, 50)
        return DeploymentPolicy._blue_green_policy(
            "LINEAR", step_size, wait_interval, termination_wait, max_execution_timeout, rollback_alarms
        )

    # -- rolling ---------------------------------------------------------------------------

    @staticmethod
    def rolling(
        *,
        batch_size: CapacitySize,
        bake_time: Duration,
        rollback_batch_size: CapacitySize | None = None,
        max_execution_timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> "DeploymentPolicy":
        """Rolling: replace ``batch_size`` (5-50 % of the fleet) at a time, watching alarms for ``bake_time``.

        Args:
            batch_size: instances per step, ``CapacitySize.percent(5-50)`` or ``instances(n)``.
            bake_time: how long each batch is watched before the next (0-3600 s).
            rollback_batch_size: batch size when rolling back. Default: the whole old fleet at once.
            max_execution_timeout: give up after (600-28800 s). Default: SageMaker's.
            rollback_alarms: 0-10 alarms that roll the deployment back. Default: none.
        """
        DeploymentPolicy._check_size(batch_size, "DeploymentPolicy.rolling.batch_size", 5, 50)
        if rollback_batch_size is not None:
            DeploymentPolicy._check_size(rollback_batch_size, "DeploymentPolicy.rolling.rollback_batch_size", 1, 100)
        bake = seconds_in_range(bake_time, "DeploymentPolicy.rolling.bake_time", 0, 3600)
        timeout = seconds_in_range(max_execution_timeout, "DeploymentPolicy.rolling.max_execution_timeout", 600, 28800)
        policy = DeploymentPolicy(
            _rolling=l1_properties(
                sagemaker.CfnEndpoint.RollingUpdatePolicyProperty,
                maximum_batch_size=batch_size._render(),
                wait_interval_in_seconds=bake,
                maximum_execution_timeout_in_seconds=timeout,
                rollback_maximum_batch_size=rollback_batch_size._render() if rollback_batch_size else None,
            ),
            rollback_alarms=DeploymentPolicy._check_alarms(rollback_alarms),
            _timing=("ROLLING", batch_size, bake, None),
            _timeout=timeout,
        )
        policy._check_timeout("DeploymentPolicy.rolling.max_execution_timeout")
        return policy

    # -- rendering -------------------------------------------------------------------------

    def _render(self) -> dict[str, Any]:
        endpoint = sagemaker.CfnEndpoint
        rollback = None
        if self.rollback_alarms:
            rollback = l1_properties(
                endpoint.AutoRollbackConfigProperty,
                alarms=[l1_properties(endpoint.AlarmProperty, alarm_name=a.alarm_name) for a in self.rollback_alarms],
            )
        return l1_properties(
            endpoint.DeploymentConfigProperty,
            blue_green_update_policy=self._blue_green,
            rolling_update_policy=self._rolling,
            auto_rollback_configuration=rollback,
        )

    # -- checks ----------------------------------------------------------------------------

    @staticmethod
    def _blue_green_policy(
        kind: str,
        size: CapacitySize | None,
        wait_interval: Duration,
        termination_wait: Duration | None,
        max_execution_timeout: Duration | None,
        rollback_alarms: Sequence[cloudwatch.IAlarm],
    ) -> "DeploymentPolicy":
        name = f"DeploymentPolicy.{kind.lower()}"
        wait = seconds_in_range(wait_interval, f"{name}.wait_interval", 0, 3600)
        term = seconds_in_range(termination_wait, f"{name}.termination_wait", 0, 3600)
        timeout = seconds_in_range(max_execution_timeout, f"{name}.max_execution_timeout", 600, 28800)
        routing = l1_properties(
            sagemaker.CfnEndpoint.TrafficRoutingConfigProperty,
            type=kind,
            wait_interval_in_seconds=wait,
            canary_size=size._render() if kind == "CANARY" and size else None,
            linear_step_size=size._render() if kind == "LINEAR" and size else None,
        )
        policy = DeploymentPolicy(
            _blue_green=l1_properties(
                sagemaker.CfnEndpoint.BlueGreenUpdatePolicyProperty,
                traffic_routing_configuration=routing,
                termination_wait_in_seconds=term,
                maximum_execution_timeout_in_seconds=timeout,
            ),
            rollback_alarms=DeploymentPolicy._check_alarms(rollback_alarms),
            _timing=(kind, size, wait, term),
            _timeout=timeout,
        )
        policy._check_timeout(f"{name}.max_execution_timeout")
        return policy

    @staticmethod
    def _check_size(size: object, field: str, low: int, high: int) -> None:
        if not isinstance(size, CapacitySize):
            raise PoolConfigError(field, size, "CapacitySize.percent(...) or CapacitySize.instances(...)")
        size._check_percent(field, low, high)

    def _check_timeout(self, field: str) -> None:
        """The timeout against every wait, counted for the fewest steps the policy can take.

        SageMaker: "the timeout value should be larger than the total waiting time specified in
        TerminationWaitInSeconds and WaitIntervalInSeconds" (BlueGreenUpdatePolicy), counted
        here over every step: a linear policy of 10 % steps waits ten times. Steps given in
        instances are counted once here and against the fleet by :meth:`check_fleet`.
        """
        waits = self.waits_seconds(1)
        timeout = self._timeout
        if timeout is not None and not is_unresolved(timeout) and waits is not None and timeout <= waits:
            raise PoolConfigError(field, f"{timeout} seconds", f"more than the waits it must cover ({waits} seconds over every step)")

    @staticmethod
    def _check_alarms(alarms: Sequence[cloudwatch.IAlarm]) -> tuple[cloudwatch.IAlarm, ...]:
        items = tuple(alarms)
        if len(items) > _MAX_ALARMS:
            raise PoolConfigError("DeploymentPolicy.rollback_alarms", f"{len(items)} alarms", "at most 10 CloudWatch alarms")
        for alarm in items:
            # jsii interfaces are not runtime-checkable protocols: check the members we use.
            # On the class: reading the properties would be a round trip to Node each.
            if not hasattr(type(alarm), "alarm_name") or not hasattr(type(alarm), "alarm_arn"):
                raise PoolConfigError("DeploymentPolicy.rollback_alarms", alarm, "aws_cloudwatch.IAlarm objects (Alarm, Alarm.from_alarm_name ...)")
        return items
