"""``migrate --apply`` on a variant registered with Application Auto Scaling.

SageMaker refuses an update that changes the instance type of a scalable target, and
DeregisterScalableTarget deletes the target's policies and scheduled actions: --apply records
them, deregisters, updates, waits, and registers the same target, policies and actions again,
also when the update fails. The exact call order over the three services is asserted.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import ops_samples as s
import pytest
from botocore.stub import ANY, Stubber
from ops_support import not_managed

NEW = "my-config-pools-20261129101500"
FALLBACKS = ("--fallback", "ml.g6.48xlarge", "--fallback", "ml.p4d.24xlarge")
RESOURCE_ID = "endpoint/my-endpoint/variant/primary"
WHERE = {"ServiceNamespace": "sagemaker", "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}
T0 = dt.datetime(2026, 11, 1, 8, 0, tzinfo=dt.timezone.utc)
TARGET_ARN = "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/056f4cb3a5b1e4cd2a51f6d3a2fbe1f3c71b"
SLR = (
    "arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)
SUSPENDED = {"DynamicScalingInSuspended": True, "DynamicScalingOutSuspended": False, "ScheduledScalingSuspended": False}
TARGET = {**WHERE, "ResourceId": RESOURCE_ID, "MinCapacity": 2, "MaxCapacity": 8, "RoleARN": SLR,
          "CreationTime": T0, "SuspendedState": SUSPENDED, "ScalableTargetARN": TARGET_ARN}


def _policy_arn(uuid: str, name: str) -> str:
    return f"arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:{uuid}:resource/sagemaker/{RESOURCE_ID}:policyName/{name}"


TRACKING_CONFIG = {
    "TargetValue": 0.7,
    "CustomizedMetricSpecification": {
        "Metrics": [
            {
                "Id": "c1",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/SageMaker",
                        "MetricName": "ConcurrentRequestsPerModel",
                        "Dimensions": [
                            {"Name": "EndpointName", "Value": "my-endpoint"},
                            {"Name": "VariantName", "Value": "primary"},
                            {"Name": "InstanceType", "Value": "ml.g6e.48xlarge"},
                        ],
                    },
                    "Stat": "Maximum",
                },
                "ReturnData": False,
            },
            {"Id": "utilization", "Expression": "c1 / 32", "ReturnData": True},
        ]
    },
    "ScaleInCooldown": 600,
    "ScaleOutCooldown": 300,
}
STEP_CONFIG = {
    "AdjustmentType": "ChangeInCapacity",
    "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}],
    "Cooldown": 300,
    "MetricAggregationType": "Maximum",
}
TRACKING = {
    **WHERE,
    "ResourceId": RESOURCE_ID,
    "PolicyARN": _policy_arn("7c1a5e1b-0000-4000-8000-000000000001", "weighted"),
    "PolicyName": "weighted",
    "PolicyType": "TargetTrackingScaling",
    "TargetTrackingScalingPolicyConfiguration": TRACKING_CONFIG,
    # made by Application Auto Scaling with the policy, and again by PutScalingPolicy: not recorded
    "Alarms": [{"AlarmName": f"TargetTracking-{RESOURCE_ID}-AlarmHigh-1a2b", "AlarmARN": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:tt-high"}],
    "CreationTime": T0,
}
STEP = {
    **WHERE,
    "ResourceId": RESOURCE_ID,
    "PolicyARN": _policy_arn("7c1a5e1b-0000-4000-8000-000000000002", "wake"),
    "PolicyName": "wake",
    "PolicyType": "StepScaling",
    "StepScalingPolicyConfiguration": STEP_CONFIG,
    "Alarms": [{"AlarmName": "llm-overloaded", "AlarmARN": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:llm-overloaded"}],
    "CreationTime": T0,
}
NEW_STEP_ARN = _policy_arn("9d2b6f2c-0000-4000-8000-000000000003", "wake")
ONCALL = "arn:aws:sns:us-east-1:123456789012:oncall"
ALARM = {
    "AlarmName": "llm-overloaded",
    "AlarmArn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:llm-overloaded",
    "AlarmConfigurationUpdatedTimestamp": T0,
    "ActionsEnabled": True,
    "OKActions": [],
    "AlarmActions": [STEP["PolicyARN"], ONCALL],
    "InsufficientDataActions": [],
    "StateValue": "OK",
    "StateReason": "Threshold Crossed",
    "StateUpdatedTimestamp": T0,
    "MetricName": "Invocation5XXErrors",
    "Namespace": "AWS/SageMaker",
    "Statistic": "Sum",
    "Dimensions": [{"Name": "EndpointName", "Value": "my-endpoint"}, {"Name": "VariantName", "Value": "primary"}],
    "Period": 60,
    "EvaluationPeriods": 3,
    "Threshold": 10.0,
    "ComparisonOperator": "GreaterThanOrEqualToThreshold",
    "TreatMissingData": "notBreaching",
}
SCHEDULED = {
    **WHERE,
    "ResourceId": RESOURCE_ID,
    "ScheduledActionName": "night",
    "ScheduledActionARN": "arn:aws:autoscaling:us-east-1:123456789012:scheduledAction:5e1f:resource/sagemaker/x:scheduledActionName/night",
    "Schedule": "cron(0 20 * * ? *)",
    "Timezone": "Europe/Berlin",
    "ScalableTargetAction": {"MinCapacity": 1, "MaxCapacity": 4},
    "CreationTime": T0,
}

REGISTER = {**WHERE, "ResourceId": RESOURCE_ID, "MinCapacity": 2, "MaxCapacity": 8, "SuspendedState": SUSPENDED, "Tags": {"team": "ml-platform"}}
PUT_TRACKING = {**WHERE, "ResourceId": RESOURCE_ID, "PolicyName": "weighted", "PolicyType": "TargetTrackingScaling",
                "TargetTrackingScalingPolicyConfiguration": TRACKING_CONFIG}
PUT_STEP = {**WHERE, "ResourceId": RESOURCE_ID, "PolicyName": "wake", "PolicyType": "StepScaling", "StepScalingPolicyConfiguration": STEP_CONFIG}
PUT_ALARM = {k: ALARM[k] for k in ("AlarmName", "ActionsEnabled", "OKActions", "InsufficientDataActions", "MetricName", "Namespace",
                                    "Statistic", "Dimensions", "Period", "EvaluationPeriods", "Threshold", "ComparisonOperator",
                                    "TreatMissingData")}
PUT_ALARM["AlarmActions"] = [NEW_STEP_ARN, ONCALL]
PUT_SCHEDULED = {**WHERE, "ResourceId": RESOURCE_ID, "ScheduledActionName": "night", "Schedule": "cron(0 20 * * ? *)",
                 "Timezone": "Europe/Berlin", "ScalableTargetAction": {"MinCapacity": 1, "MaxCapacity": 4}}

LIVE = s.endpoint("my-endpoint", "my-config", [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")])
DONE = s.endpoint("my-endpoint", NEW, [s.live_variant({"ml.g6e.48xlarge": 2, "ml.g6.48xlarge": 1, "ml.p4d.24xlarge": 0}, name="primary")])
_POOLED = {k: v for k, v in s.SINGLE_CONFIG["ProductionVariants"][0].items() if k != "InstanceType"}
NEW_CONFIG = s.config(NEW, [dict(_POOLED, InstancePools=[{"InstanceType": t, "Priority": i + 1} for i, t in enumerate(
    ("ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"))])])
FAILED = {k: v for k, v in LIVE.items() if k != "ProductionVariants"} | {
    "EndpointStatus": "Failed", "FailureReason": "Model container failed the ping health check"}
ROLLED_BACK = s.endpoint("my-endpoint", "my-config", [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")],
                         FailureReason="Insufficient capacity for ml.p4d.24xlarge")

RECORD_CALLS = [
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:ListTags",
    "cloudformation:DescribeStackResources",
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:ListTagsForResource",
    "application-autoscaling:DescribeScalingPolicies",
    "application-autoscaling:DescribeScheduledActions",
    "cloudwatch:DescribeAlarms",
]
RESTORE_CALLS = [
    "application-autoscaling:RegisterScalableTarget",
    "application-autoscaling:PutScalingPolicy",
    "application-autoscaling:PutScalingPolicy",
    "cloudwatch:PutMetricAlarm",
    "application-autoscaling:PutScheduledAction",
]


def _recorded(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber) -> None:
    """The live endpoint (no stack owns it) and its autoscaling, as the describe calls return them."""
    stub.add_response("describe_endpoint", LIVE, {"EndpointName": "my-endpoint"})
    stub.add_response("describe_endpoint_config", s.SINGLE_CONFIG, {"EndpointConfigName": "my-config"})
    stub.add_response("list_tags", s.SINGLE_TAGS, {"ResourceArn": s.SINGLE_CONFIG["EndpointConfigArn"]})
    not_managed(cfn_stub, LIVE["EndpointArn"])
    aas_stub.add_response("describe_scalable_targets", {"ScalableTargets": [TARGET]}, {"ResourceIds": [RESOURCE_ID], **WHERE})
    aas_stub.add_response("list_tags_for_resource", {"Tags": {"team": "ml-platform"}}, {"ResourceARN": TARGET_ARN})
    aas_stub.add_response("describe_scaling_policies", {"ScalingPolicies": [TRACKING, STEP]}, {"ResourceId": RESOURCE_ID, **WHERE})
    aas_stub.add_response("describe_scheduled_actions", {"ScheduledActions": [SCHEDULED]}, {"ResourceId": RESOURCE_ID, **WHERE})
    cw_stub.add_response("describe_alarms", {"MetricAlarms": [ALARM]}, {"AlarmNames": ["llm-overloaded"]})


def _created_and_deregistered(stub: Stubber, aas_stub: Stubber) -> None:
    stub.add_response(
        "create_endpoint_config",
        {"EndpointConfigArn": s.arn("endpoint-config", NEW)},
        {"EndpointConfigName": NEW, "ProductionVariants": ANY, "Tags": ANY},
    )
    aas_stub.add_response("deregister_scalable_target", {}, {"ResourceId": RESOURCE_ID, **WHERE})


def _updated(stub: Stubber) -> None:
    stub.add_response(
        "update_endpoint",
        {"EndpointArn": s.arn("endpoint", "my-endpoint")},
        {"EndpointName": "my-endpoint", "EndpointConfigName": NEW, "RetainAllVariantProperties": True},
    )


def _restored(aas_stub: Stubber, cw_stub: Stubber, step_arn: str = NEW_STEP_ARN) -> None:
    aas_stub.add_response("register_scalable_target", {"ScalableTargetARN": TARGET_ARN}, REGISTER)
    aas_stub.add_response("put_scaling_policy", {"PolicyARN": TRACKING["PolicyARN"], "Alarms": TRACKING["Alarms"]}, PUT_TRACKING)
    aas_stub.add_response("put_scaling_policy", {"PolicyARN": step_arn}, PUT_STEP)
    if step_arn != STEP["PolicyARN"]:
        cw_stub.add_response("put_metric_alarm", {}, PUT_ALARM)
    aas_stub.add_response("put_scheduled_action", {}, PUT_SCHEDULED)


def _restore_json(out: str) -> dict[str, Any]:
    """The restore requests --apply printed (the last JSON document on stdout)."""
    return json.loads(out[out.rindex('{\n  "restore_autoscaling"') :])  # type: ignore[no-any-return]


def test_apply_deregisters_updates_waits_and_restores_the_same_scaling(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    _updated(stub)
    stub.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    _restored(aas_stub, cw_stub)
    stub.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})  # the final status
    stub.add_response("describe_endpoint_config", NEW_CONFIG, {"EndpointConfigName": NEW})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 0, result.err
    assert calls == [
        *RECORD_CALLS,
        "sagemaker:CreateEndpointConfig",
        "application-autoscaling:DeregisterScalableTarget",
        "sagemaker:UpdateEndpoint",
        "sagemaker:DescribeEndpoint",
        *RESTORE_CALLS,
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeEndpointConfig",
    ]
    err = result.err.splitlines()
    assert err[1] == (
        f"deregistered scalable target {RESOURCE_ID} (min 2, max 8 (suspended: DynamicScalingInSuspended); policies: weighted, wake; "
        "1 scheduled action(s)): SageMaker refuses to change the instance type of a registered variant; it is registered again after the update"
    )
    assert f"registered {RESOURCE_ID} (min 2, max 8 (suspended: DynamicScalingInSuspended); policies: weighted, wake; 1 scheduled action(s))" in err
    assert "alarm llm-overloaded now invokes the new ARN of policy wake" in err


def test_an_unchanged_policy_arn_leaves_the_alarm_alone(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    _updated(stub)
    stub.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    _restored(aas_stub, cw_stub, step_arn=STEP["PolicyARN"])
    stub.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    stub.add_response("describe_endpoint_config", NEW_CONFIG, {"EndpointConfigName": NEW})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 0, result.err
    assert "cloudwatch:PutMetricAlarm" not in calls


def test_an_update_endpoint_error_restores_the_scaling(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    stub.add_client_error(
        "update_endpoint",
        service_error_code="ResourceLimitExceeded",
        service_message="The account-level service limit 'ml.p4d.24xlarge for endpoint usage' is 0 Instances",
        http_status_code=400,
    )
    _restored(aas_stub, cw_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert calls == [*RECORD_CALLS, "sagemaker:CreateEndpointConfig", "application-autoscaling:DeregisterScalableTarget",
                     "sagemaker:UpdateEndpoint", *RESTORE_CALLS]
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: UpdateEndpoint failed: ResourceLimitExceeded: The account-level service limit "
        f"'ml.p4d.24xlarge for endpoint usage' is 0 Instances; autoscaling restored on {RESOURCE_ID}"
    )


@pytest.mark.parametrize(
    ("ending", "message"),
    [
        (
            FAILED,
            "the update failed: endpoint my-endpoint is Failed: Model container failed the ping health check",
        ),
        (
            ROLLED_BACK,
            f"the update rolled back: endpoint my-endpoint is InService on config my-config, not {NEW}; "
            "reason: Insufficient capacity for ml.p4d.24xlarge",
        ),
    ],
    ids=["failed", "rolled-back"],
)
def test_a_failed_or_rolled_back_update_restores_the_scaling(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str], ending: dict[str, Any], message: str
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    _updated(stub)
    stub.add_response("describe_endpoint", ending, {"EndpointName": "my-endpoint"})
    _restored(aas_stub, cw_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert calls[-len(RESTORE_CALLS) - 2 :] == ["sagemaker:UpdateEndpoint", "sagemaker:DescribeEndpoint", *RESTORE_CALLS]
    assert result.err.splitlines()[-1] == f"sagemaker-pools: error: {message}; autoscaling restored on {RESOURCE_ID}"
    assert result.err.count("error:") == 1


def _a_rollback_whose_restore_fails(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber) -> None:
    """An autoscaled variant's update rolls back, and registering its target again is refused."""
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    _updated(stub)
    stub.add_response("describe_endpoint", ROLLED_BACK, {"EndpointName": "my-endpoint"})
    aas_stub.add_client_error("register_scalable_target", service_error_code="ValidationException", service_message="Endpoint is not ready")


def test_a_failed_restore_prints_the_requests_and_says_both(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _a_rollback_whose_restore_fails(stub, aas_stub, cw_stub, cfn_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"sagemaker-pools: error: the update rolled back: endpoint my-endpoint is InService on config my-config, not {NEW}; "
        "reason: Insufficient capacity for ml.p4d.24xlarge; restoring autoscaling on "
        f"{RESOURCE_ID} failed: RegisterScalableTarget failed: ValidationException: Endpoint is not ready; the requests that "
        "restore it are printed above"
    )
    printed = _restore_json(result.out)
    assert [r["operation"] for r in printed["restore_autoscaling"]] == [
        "RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy", "PutScheduledAction"
    ]
    assert printed["restore_autoscaling"][0]["request"] == REGISTER


def test_with_json_a_failed_restore_is_in_the_one_document(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _a_rollback_whose_restore_fails(stub, aas_stub, cw_stub, cfn_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--json")
    assert result.code == 1
    document = json.loads(result.out)  # the plan, the error and the restore requests: one document
    assert [r["operation"] for r in document["restore_autoscaling"]] == [
        "RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy", "PutScheduledAction"
    ]
    assert document["restore_autoscaling"][0]["request"] == REGISTER
    assert document["error"].endswith("the requests that restore it are in the JSON output's restore_autoscaling")
    assert result.err.splitlines()[-1] == f"sagemaker-pools: error: {document['error']}"
    assert document["endpoint"] == "my-endpoint" and "applied" not in document


def test_a_wait_timeout_leaves_the_target_deregistered_and_prints_how_to_restore(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    _created_and_deregistered(stub, aas_stub)
    _updated(stub)
    updating = dict(LIVE, EndpointStatus="Updating")
    stub.add_response("describe_endpoint", updating, {"EndpointName": "my-endpoint"})
    clock = iter([0.0, 100.0])
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--wait-timeout", "90", monotonic=lambda: next(clock))
    assert result.code == 1
    assert not any(c.startswith("application-autoscaling:Register") for c in calls)  # the update goes on: nothing restored yet
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: gave up waiting after 100 s: endpoint my-endpoint is still Updating; the update goes on "
        "(watch it with: sagemaker-pools status my-endpoint --watch); the scalable target stays deregistered until then: "
        "the requests that restore it are printed above"
    )
    printed = _restore_json(result.out)
    assert printed["restore_autoscaling"][1]["request"] == PUT_TRACKING


def test_no_wait_is_refused_for_an_autoscaled_variant_before_any_change(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _recorded(stub, aas_stub, cw_stub, cfn_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--no-wait")
    assert (result.code, result.err.splitlines()[-1]) == (
        2,
        f"sagemaker-pools: error: --no-wait: variant primary is registered with Application Auto Scaling ({RESOURCE_ID}); "
        "--apply deregisters it for the update and must wait to register it again: drop --no-wait",
    )
    assert calls == RECORD_CALLS


def test_a_denied_autoscaling_call_names_its_own_permission(
    stub: Stubber, aas_stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    stub.add_response("describe_endpoint", LIVE, {"EndpointName": "my-endpoint"})
    stub.add_response("describe_endpoint_config", s.SINGLE_CONFIG, {"EndpointConfigName": "my-config"})
    stub.add_response("list_tags", s.SINGLE_TAGS, {"ResourceArn": s.SINGLE_CONFIG["EndpointConfigArn"]})
    not_managed(cfn_stub, LIVE["EndpointArn"])
    aas_stub.add_client_error("describe_scalable_targets", service_error_code="AccessDeniedException", service_message="denied")
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert (result.code, result.err.splitlines()[-1]) == (
        1,
        "sagemaker-pools: error: access denied: DescribeScalableTargets: denied "
        "(the caller needs application-autoscaling:DescribeScalableTargets)",
    )
    assert "sagemaker:CreateEndpointConfig" not in calls  # nothing changed
