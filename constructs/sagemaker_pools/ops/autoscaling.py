"""Keep a variant's Application Auto Scaling through an update that changes its instance types.

SageMaker's guide ("Update endpoints that use auto scaling"): "If the update would change the
instance type for any model that is a target for auto scaling, the update fails. [...] Before you
update the endpoint, delete any scaling policies configured for it and deregister the variant as
a scalable target [...]. After you update the endpoint, you can register the updated variant as a
scalable target and attach a scaling policy." Application Auto Scaling's DeregisterScalableTarget
"deletes the scaling policies and the scheduled actions that are associated with it".

So ``migrate --apply`` records the variant's scalable target (capacities, suspended state, role,
tags), its scaling policies, its scheduled actions and the CloudWatch alarms that drive its step
policies; deregisters the target; updates; and registers the same target, policies and actions
again, whether the update succeeded or failed. Target-tracking alarms are not recorded: Application
Auto Scaling creates them with the policy (and deletes them with it), so PutScalingPolicy makes them
again. Step-scaling alarms are the user's: they survive, but their actions name the policy's ARN,
so when PutScalingPolicy returns a different ARN the alarm's actions are pointed at the new one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from .aws import pages

__all__ = ["NAMESPACE", "DIMENSION", "ScalingRecord", "record_scaling", "deregister", "restore", "restore_requests"]

NAMESPACE = "sagemaker"
#: The scalable dimension of a variant's instance count.
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
_ALARM_ACTIONS = ("AlarmActions", "OKActions", "InsufficientDataActions")


@dataclasses.dataclass(frozen=True)
class ScalingRecord:
    """A variant's autoscaling as Application Auto Scaling and CloudWatch describe it.

    Attributes:
        target: the DescribeScalableTargets entry.
        tags: the target's tags (ListTagsForResource).
        policies: the DescribeScalingPolicies entries.
        scheduled_actions: the DescribeScheduledActions entries.
        alarms: the DescribeAlarms entries of the alarms that invoke the step policies, by name.
    """

    target: Mapping[str, Any]
    tags: Mapping[str, str]
    policies: tuple[Mapping[str, Any], ...]
    scheduled_actions: tuple[Mapping[str, Any], ...]
    alarms: Mapping[str, Mapping[str, Any]]

    @property
    def resource_id(self) -> str:
        """``endpoint/<name>/variant/<variant>``."""
        return str(self.target["ResourceId"])

    def summary(self) -> str:
        """``min 2, max 8; policies: a, b; 1 scheduled action``."""
        text = f"min {self.target['MinCapacity']}, max {self.target['MaxCapacity']}"
        suspended = [k for k, v in (self.target.get("SuspendedState") or {}).items() if v]
        if suspended:
            text += f" (suspended: {', '.join(suspended)})"
        names = [p["PolicyName"] for p in self.policies]
        text += f"; policies: {', '.join(names)}" if names else "; no policies"
        if self.scheduled_actions:
            text += f"; {len(self.scheduled_actions)} scheduled action(s)"
        return text


def record_scaling(aas: Any, cloudwatch: Callable[[], Any], endpoint_name: str, variant_name: str) -> ScalingRecord | None:
    """The variant's autoscaling, or None when it is not a scalable target.

    ``cloudwatch`` makes the CloudWatch client, asked for only when a step policy has alarms.
    """
    resource_id = f"endpoint/{endpoint_name}/variant/{variant_name}"
    where = {"ServiceNamespace": NAMESPACE, "ScalableDimension": DIMENSION}
    targets = list(pages(aas.describe_scalable_targets, "ScalableTargets", ResourceIds=[resource_id], **where))
    if not targets:
        return None
    target = targets[0]
    tags: Mapping[str, str] = {}
    if target.get("ScalableTargetARN"):
        tags = aas.list_tags_for_resource(ResourceARN=target["ScalableTargetARN"]).get("Tags", {})
    policies = tuple(pages(aas.describe_scaling_policies, "ScalingPolicies", ResourceId=resource_id, **where))
    actions = tuple(pages(aas.describe_scheduled_actions, "ScheduledActions", ResourceId=resource_id, **where))
    alarm_names = sorted(
        {a["AlarmName"] for p in policies if p["PolicyType"] == "StepScaling" for a in p.get("Alarms", [])}
    )
    alarms: dict[str, Mapping[str, Any]] = {}
    if alarm_names:
        cw = cloudwatch()
        for start in range(0, len(alarm_names), 100):  # DescribeAlarms takes at most 100 names
            for alarm in pages(cw.describe_alarms, "MetricAlarms", AlarmNames=alarm_names[start : start + 100]):
                alarms[alarm["AlarmName"]] = alarm
    return ScalingRecord(target=target, tags=tags, policies=policies, scheduled_actions=actions, alarms=alarms)


def deregister(aas: Any, record: ScalingRecord) -> None:
    """DeregisterScalableTarget (which deletes the target's policies and scheduled actions)."""
    aas.deregister_scalable_target(ServiceNamespace=NAMESPACE, ResourceId=record.resource_id, ScalableDimension=DIMENSION)


def _input(client: Any, operation: str, source: Mapping[str, Any]) -> dict[str, Any]:
    """The members of ``source`` that ``operation`` accepts (describe output -> put input)."""
    members = client.meta.service_model.operation_model(operation).input_shape.members
    return {k: v for k, v in source.items() if k in members and v is not None}


def restore_requests(aas: Any, record: ScalingRecord) -> list[tuple[str, dict[str, Any]]]:
    """The Application Auto Scaling requests that register the recorded target, policies and actions again."""
    target = _input(aas, "RegisterScalableTarget", record.target)
    # A target on SageMaker's service-linked role is registered without RoleARN: Application Auto
    # Scaling uses (and creates if needed) the service-linked role for services that support one.
    if "/aws-service-role/" in str(target.get("RoleARN", "")):
        del target["RoleARN"]
    if record.tags:
        target["Tags"] = dict(record.tags)
    requests = [("RegisterScalableTarget", target)]
    requests += [("PutScalingPolicy", _input(aas, "PutScalingPolicy", p)) for p in record.policies]
    requests += [("PutScheduledAction", _input(aas, "PutScheduledAction", a)) for a in record.scheduled_actions]
    return requests


def restore(aas: Any, cloudwatch: Callable[[], Any], record: ScalingRecord) -> list[str]:
    """Register the target, put its policies and scheduled actions, re-point step alarms; return what was done."""
    done: list[str] = []
    old_arns = {p["PolicyName"]: p.get("PolicyARN") for p in record.policies}
    alarms_of = {p["PolicyName"]: [a["AlarmName"] for a in p.get("Alarms", [])] for p in record.policies if p["PolicyType"] == "StepScaling"}
    for operation, request in restore_requests(aas, record):
        if operation == "RegisterScalableTarget":
            aas.register_scalable_target(**request)
            done.append(f"registered {record.resource_id} ({record.summary()})")
        elif operation == "PutScalingPolicy":
            name = request["PolicyName"]
            new_arn = aas.put_scaling_policy(**request)["PolicyARN"]
            old_arn = old_arns.get(name)
            for alarm_name in alarms_of.get(name, []):
                alarm = record.alarms.get(alarm_name)
                if alarm is None or not old_arn or new_arn == old_arn:
                    continue
                cw = cloudwatch()
                repointed = dict(alarm)
                for key in _ALARM_ACTIONS:
                    if repointed.get(key):
                        repointed[key] = [new_arn if arn == old_arn else arn for arn in repointed[key]]
                cw.put_metric_alarm(**_input(cw, "PutMetricAlarm", repointed))
                done.append(f"alarm {alarm_name} now invokes the new ARN of policy {name}")
        else:
            aas.put_scheduled_action(**request)
    return done
