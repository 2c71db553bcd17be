"""``sagemaker-pools status ENDPOINT --check-metrics``: do the metrics the endpoint's alarms, scaling
policies and dashboards read exist? Against Stubber-checked DescribeAlarms, DescribeScalingPolicies,
GetDashboard and ListMetrics responses (CloudWatch and Application Auto Scaling service models)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import ops_samples as s
import pytest
from botocore.stub import Stubber

from sagemaker_pools.ops.metric_reads import MetricId, alarm_metrics, dashboard_metrics

ENDPOINT = "llm-prod"
VARIANT_ID = f"endpoint/{ENDPOINT}/variant/AllTraffic"
VARIANT_WHERE = {"ServiceNamespace": "sagemaker", "ResourceId": VARIANT_ID, "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}
#: Three pools: the fallback ml.p4d.24xlarge has never run an instance.
LIVE = s.endpoint(ENDPOINT, "llm-prod-config-2", [s.live_variant({"ml.g6e.48xlarge": 2, "ml.g6.48xlarge": 1, "ml.p4d.24xlarge": 0})])


def _dims(**dims: str) -> list[dict[str, str]]:
    return [{"Name": k, "Value": v} for k, v in dims.items()]


def _variant_dims(**more: str) -> list[dict[str, str]]:
    return _dims(EndpointName=ENDPOINT, VariantName="AllTraffic", **more)


def _metric(name: str, dimensions: list[dict[str, str]]) -> dict[str, Any]:
    return {"Namespace": "AWS/SageMaker", "MetricName": name, "Dimensions": dimensions}


def _alarm(name: str, **fields: Any) -> dict[str, Any]:
    """A DescribeAlarms MetricAlarm that treats missing data as not breaching (silent when nothing is published)."""
    return {
        "AlarmName": name,
        "AlarmArn": f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}",
        "EvaluationPeriods": 3,
        "Threshold": 0.0,
        "ComparisonOperator": "GreaterThanThreshold",
        "TreatMissingData": "notBreaching",
        "StateValue": "OK",
        **fields,
    }


def _single(name: str, metric: str, dimensions: list[dict[str, str]]) -> dict[str, Any]:
    return _alarm(name, Namespace="AWS/SageMaker", MetricName=metric, Dimensions=dimensions, Statistic="Sum", Period=60)


def _stat(ident: str, metric: str, dimensions: list[dict[str, str]], stat: str = "Maximum") -> dict[str, Any]:
    return {"Id": ident, "MetricStat": {"Metric": _metric(metric, dimensions), "Period": 60, "Stat": stat}, "ReturnData": False}


ERRORS_5XX = _single("llm-prod-5xx", "Invocation5XXErrors", _variant_dims())
G6_COUNT = _single("llm-prod-g6-count", "InstanceCount", _variant_dims(InstanceType="ml.g6.48xlarge"))
OTHER_ENDPOINT = _single("other-endpoint-5xx", "Invocation5XXErrors", _dims(EndpointName="other", VariantName="AllTraffic"))
#: A metric-math alarm on the launch post's per-type InstanceCount (no AWS reference documents it).
FALLBACK_IN_USE = _alarm(
    "llm-prod-fallback-in-use",
    Metrics=[
        _stat("g6", "InstanceCount", _variant_dims(InstanceType="ml.g6.48xlarge")),
        _stat("p4d", "InstanceCount", _variant_dims(InstanceType="ml.p4d.24xlarge")),
        {"Id": "fallback", "Expression": "g6 + p4d", "ReturnData": True},
    ],
)
TRACKING_ALARM = _alarm(
    f"TargetTracking-{VARIANT_ID}-AlarmHigh-1a2b",
    Metrics=[
        _stat("c1", "ConcurrentRequestsPerModel", _variant_dims(InstanceType="ml.g6e.48xlarge")),
        {"Id": "utilization", "Expression": "c1 / 32", "ReturnData": True},
    ],
)


def _policy(name: str, config: dict[str, Any], alarms: Sequence[str] = ()) -> dict[str, Any]:
    return {
        **VARIANT_WHERE,
        "PolicyARN": f"arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:7c1a:resource/sagemaker/{VARIANT_ID}:policyName/{name}",
        "PolicyName": name,
        "PolicyType": "TargetTrackingScaling",
        "TargetTrackingScalingPolicyConfiguration": config,
        "Alarms": [{"AlarmName": a, "AlarmARN": f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{a}"} for a in alarms],
        "CreationTime": s.T0,
    }


#: Target tracking on metric math (the ``Metrics`` form), as PooledEndpoint's weighted utilization writes it.
WEIGHTED = _policy(
    "weighted",
    {
        "TargetValue": 0.7,
        "CustomizedMetricSpecification": {
            "Metrics": [
                {"Id": "c1", "MetricStat": {"Metric": _metric("ConcurrentRequestsPerModel", _variant_dims(InstanceType="ml.g6e.48xlarge")),
                                            "Stat": "Maximum"}, "ReturnData": False},
                {"Id": "utilization", "Expression": "c1 / 32", "ReturnData": True},
            ]
        },
    },
    [TRACKING_ALARM["AlarmName"]],
)
PREDEFINED = _policy(
    "per-instance", {"TargetValue": 70.0, "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}
)


def _describe(stub: Stubber) -> None:
    stub.add_response("describe_endpoint", LIVE, {"EndpointName": ENDPOINT})
    stub.add_response("describe_endpoint_config", s.THREE_POOLS_CONFIG, {"EndpointConfigName": "llm-prod-config-2"})


def _policies(aas_stub: Stubber, *policies: dict[str, Any], where: dict[str, str] = VARIANT_WHERE) -> None:
    aas_stub.add_response("describe_scaling_policies", {"ScalingPolicies": list(policies)}, where)


def _alarms(cw_stub: Stubber, *pages: list[dict[str, Any]]) -> None:
    """DescribeAlarms, one response per page (each but the last says there is a next one)."""
    for i, alarms in enumerate(pages):
        response: dict[str, Any] = {"MetricAlarms": alarms}
        request: dict[str, Any] = {"AlarmTypes": ["MetricAlarm"]}
        if i + 1 < len(pages):
            response["NextToken"] = f"alarms-{i + 1}"
        if i:
            request["NextToken"] = f"alarms-{i}"
        cw_stub.add_response("describe_alarms", response, request)


def _listed(cw_stub: Stubber, name: str, dimensions: list[dict[str, str]], *pages: list[list[dict[str, str]]]) -> None:
    """ListMetrics for one metric; each page lists metrics (by their dimensions) with that namespace and name."""
    for i, found in enumerate(pages or ([],)):
        # the request's dimensions in name order (the order does not matter to CloudWatch; the Stubber compares lists)
        request: dict[str, Any] = {"Namespace": "AWS/SageMaker", "MetricName": name, "Dimensions": sorted(dimensions, key=lambda d: d["Name"])}
        response: dict[str, Any] = {"Metrics": [_metric(name, d) for d in found]}
        if i + 1 < len(pages):
            response["NextToken"] = f"{name}-{i + 1}"
        if i:
            request["NextToken"] = f"{name}-{i}"
        cw_stub.add_response("list_metrics", response, request)


def _full_scenario(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber) -> None:
    """Alarms on two DescribeAlarms pages, a metric-math tracking policy and a predefined one; the
    per-type InstanceCount is not published for ml.g6.48xlarge although that pool has an instance."""
    _describe(stub)
    _policies(aas_stub, WEIGHTED, PREDEFINED)
    _alarms(cw_stub, [ERRORS_5XX, OTHER_ENDPOINT, TRACKING_ALARM], [FALLBACK_IN_USE, G6_COUNT])
    # ListMetrics, once per distinct metric, in metric order
    _listed(cw_stub, "ConcurrentRequestsPerModel", _variant_dims(InstanceType="ml.g6e.48xlarge"), [_variant_dims(InstanceType="ml.g6e.48xlarge")])
    _listed(cw_stub, "InstanceCount", _variant_dims(InstanceType="ml.g6.48xlarge"))
    _listed(cw_stub, "InstanceCount", _variant_dims(InstanceType="ml.p4d.24xlarge"))
    _listed(cw_stub, "Invocation5XXErrors", _variant_dims(), [_variant_dims()])
    # the dimension filter also matches the per-type metrics: the exact one is on the second page
    _listed(
        cw_stub,
        "InvocationsPerInstance",
        _variant_dims(),
        [_variant_dims(InstanceType="ml.g6e.48xlarge"), _variant_dims(InstanceType="ml.g6.48xlarge")],
        [_variant_dims()],
    )


def test_a_missing_metric_is_named_and_fails_an_empty_pool_does_not(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    _full_scenario(stub, aas_stub, cw_stub)
    result = run_cli("status", ENDPOINT, "--check-metrics")
    assert result.code == 1
    assert result.err == (
        "sagemaker-pools: error: 1 metric(s) read by the endpoint's alarms, policies or dashboards have no data in the last "
        "2 weeks: AWS/SageMaker InstanceCount {EndpointName=llm-prod, InstanceType=ml.g6.48xlarge, VariantName=AllTraffic} "
        "(read by alarm llm-prod-fallback-in-use, alarm llm-prod-g6-count)\n"
    )
    status, check = result.out.split("\n\n", 1)[0], result.out.split("\n\nMetrics read by", 1)[1]
    assert status.startswith("Endpoint llm-prod: InService")  # the usual status comes first
    d = "EndpointName=llm-prod, InstanceType={}, VariantName=AllTraffic"
    both = "alarm llm-prod-fallback-in-use, alarm llm-prod-g6-count"
    assert check.splitlines() == [  # columns as wide as their widest cell (40, 75, 55), two spaces apart
        " alarms, scaling policies and dashboards (ListMetrics: data in the last 2 weeks):",
        f"  {'METRIC':40}  {'DIMENSIONS':75}  {'READ BY':55}  RESULT",
        f"  {'AWS/SageMaker ConcurrentRequestsPerModel':40}  {d.format('ml.g6e.48xlarge'):75}  {'policy weighted':55}  exists",
        f"  {'AWS/SageMaker InstanceCount':40}  {d.format('ml.g6.48xlarge'):75}  {both:55}  MISSING",
        f"  {'AWS/SageMaker InstanceCount':40}  {d.format('ml.p4d.24xlarge'):75}  {'alarm llm-prod-fallback-in-use':55}  "
        "no data yet (pool empty)",
        f"  {'AWS/SageMaker Invocation5XXErrors':40}  {'EndpointName=llm-prod, VariantName=AllTraffic':75}  {'alarm llm-prod-5xx':55}  exists",
        f"  {'AWS/SageMaker InvocationsPerInstance':40}  {'EndpointName=llm-prod, VariantName=AllTraffic':75}  "
        f"{'policy per-instance':55}  exists",
        f"  AWS/SageMaker InstanceCount {{{d.format('ml.g6.48xlarge')}}}: no data in the last 2 weeks, "
        "though the ml.g6.48xlarge pool has 1 instance(s)",
        f"  AWS/SageMaker InstanceCount {{{d.format('ml.p4d.24xlarge')}}}: the ml.p4d.24xlarge pool has 0 instances: "
        "it publishes nothing until one runs",
    ]
    # not listed: another endpoint's alarm, and the alarms a target-tracking policy made (the policy stands for them)
    assert "other-endpoint" not in result.out and "TargetTracking-" not in check


def test_json_has_the_status_and_the_check(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any) -> None:
    _full_scenario(stub, aas_stub, cw_stub)
    result = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    assert result.code == 1
    document = json.loads(result.out)
    assert document["name"] == ENDPOINT and document["variants"][0]["name"] == "AllTraffic"
    check = document["metric_check"]
    assert check["failures"] == 1 and check["skipped"] == []
    assert [(m["metric_name"], m["dimensions"].get("InstanceType"), m["result"]) for m in check["metrics"]] == [
        ("ConcurrentRequestsPerModel", "ml.g6e.48xlarge", "exists"),
        ("InstanceCount", "ml.g6.48xlarge", "missing"),
        ("InstanceCount", "ml.p4d.24xlarge", "pool_empty"),
        ("Invocation5XXErrors", None, "exists"),
        ("InvocationsPerInstance", None, "exists"),
    ]
    missing = check["metrics"][1]
    assert missing == {
        "namespace": "AWS/SageMaker",
        "metric_name": "InstanceCount",
        "dimensions": {"EndpointName": ENDPOINT, "InstanceType": "ml.g6.48xlarge", "VariantName": "AllTraffic"},
        "read_by": [{"kind": "alarm", "name": "llm-prod-fallback-in-use"}, {"kind": "alarm", "name": "llm-prod-g6-count"}],
        "result": "missing",
        "detail": "no data in the last 2 weeks, though the ml.g6.48xlarge pool has 1 instance(s)",
    }
    assert result.err.startswith("sagemaker-pools: error: 1 metric(s) read by")


def test_an_alarm_on_an_empty_fallback_pool_is_not_a_failure(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any) -> None:
    on_p4d = _single("llm-prod-p4d-count", "InstanceCount", _variant_dims(InstanceType="ml.p4d.24xlarge"))
    _describe(stub)
    _policies(aas_stub)
    _alarms(cw_stub, [on_p4d])
    _listed(cw_stub, "InstanceCount", _variant_dims(InstanceType="ml.p4d.24xlarge"))
    result = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    assert result.code == 0, result.err
    (finding,) = json.loads(result.out)["metric_check"]["metrics"]
    assert (finding["result"], finding["read_by"]) == ("pool_empty", [{"kind": "alarm", "name": "llm-prod-p4d-count"}])


def test_a_metric_math_alarm_counts_with_every_input(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any) -> None:
    """One input names the endpoint; the other (a metric of another namespace) is checked too: a missing input breaks the expression."""
    ratio = _alarm(
        "llm-prod-errors-per-request",
        Metrics=[
            _stat("errors", "Invocation5XXErrors", _variant_dims(), "Sum"),
            {"Id": "gate", "MetricStat": {"Metric": {"Namespace": "Custom/Gateway", "MetricName": "Requests",
                                                     "Dimensions": _dims(Route="/llm")}, "Period": 60, "Stat": "Sum"}},
            {"Id": "ratio", "Expression": "errors / gate", "ReturnData": True},
        ],
    )
    _describe(stub)
    _policies(aas_stub)
    _alarms(cw_stub, [ratio])
    _listed(cw_stub, "Invocation5XXErrors", _variant_dims(), [_variant_dims()])
    cw_stub.add_response("list_metrics", {"Metrics": []},
                         {"Namespace": "Custom/Gateway", "MetricName": "Requests", "Dimensions": _dims(Route="/llm")})
    result = run_cli("status", ENDPOINT, "--check-metrics")
    assert result.code == 1
    assert "Custom/Gateway Requests {Route=/llm} (read by alarm llm-prod-errors-per-request)" in result.err
    assert "  Custom/Gateway Requests {Route=/llm}: no data in the last 2 weeks" in result.out


def test_nothing_reads_the_endpoint(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any) -> None:
    _describe(stub)
    _policies(aas_stub)
    _alarms(cw_stub, [OTHER_ENDPOINT])
    result = run_cli("status", ENDPOINT, "--check-metrics")
    assert result.code == 0, result.err
    assert result.out.endswith("\n\nMetrics: no alarm, scaling policy or dashboard reads a metric of endpoint llm-prod\n")


def test_a_step_policys_alarm_counts_even_when_its_metric_names_no_endpoint(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    step = {**_policy("wake", {}, ["llm-prod-queue-deep"]), "PolicyType": "StepScaling"}
    del step["TargetTrackingScalingPolicyConfiguration"]
    step["StepScalingPolicyConfiguration"] = {"AdjustmentType": "ChangeInCapacity", "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}
    queue = _alarm("llm-prod-queue-deep", Namespace="Custom/Queue", MetricName="Depth", Dimensions=_dims(Queue="llm"), Statistic="Maximum", Period=60)
    _describe(stub)
    _policies(aas_stub, step)
    _alarms(cw_stub, [queue])
    cw_stub.add_response("list_metrics", {"Metrics": [{"Namespace": "Custom/Queue", "MetricName": "Depth", "Dimensions": _dims(Queue="llm")}]},
                         {"Namespace": "Custom/Queue", "MetricName": "Depth", "Dimensions": _dims(Queue="llm")})
    result = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    assert result.code == 0, result.err
    (finding,) = json.loads(result.out)["metric_check"]["metrics"]
    assert (finding["metric_name"], finding["read_by"], finding["result"]) == ("Depth", [{"kind": "alarm", "name": "llm-prod-queue-deep"}], "exists")


def test_a_type_that_is_no_pool_of_the_endpoint_is_a_failure_and_an_unmapped_policy_is_said(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    wrong = _policy("wrong-scope", {"TargetValue": 5.0, "PredefinedMetricSpecification": {
        "PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"}})  # a component's type on a variant
    on_p5 = _single("llm-prod-p5-count", "InstanceCount", _variant_dims(InstanceType="ml.p5.48xlarge"))
    errors_4xx = _single("llm-prod-4xx", "Invocation4XXErrors", _variant_dims())
    _describe(stub)
    _policies(aas_stub, wrong)
    _alarms(cw_stub, [on_p5, errors_4xx])
    _listed(cw_stub, "InstanceCount", _variant_dims(InstanceType="ml.p5.48xlarge"))
    _listed(cw_stub, "Invocation4XXErrors", _variant_dims())
    result = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    assert result.code == 1
    assert result.err == (
        "sagemaker-pools: error: 2 metric(s) read by the endpoint's alarms, policies or dashboards have no data in the last 2 weeks: "
        "AWS/SageMaker InstanceCount {EndpointName=llm-prod, InstanceType=ml.p5.48xlarge, VariantName=AllTraffic} "
        "(read by alarm llm-prod-p5-count); "
        "AWS/SageMaker Invocation4XXErrors {EndpointName=llm-prod, VariantName=AllTraffic} (read by alarm llm-prod-4xx)\n"
    )
    check = json.loads(result.out)["metric_check"]
    assert check["failures"] == 2
    assert [m["detail"] for m in check["metrics"]] == [
        "no data in the last 2 weeks, and ml.p5.48xlarge is not a pool of the endpoint",
        "no data in the last 2 weeks",
    ]
    assert check["skipped"] == [
        f"policy wrong-scope: predefined metric SageMakerInferenceComponentInvocationsPerCopy on {VARIANT_ID} is not mapped to a metric here"
    ]


def _step(name: str, alarms: Sequence[str]) -> dict[str, Any]:
    policy = {**_policy(name, {}, alarms), "PolicyType": "StepScaling"}
    del policy["TargetTrackingScalingPolicyConfiguration"]
    if not alarms:
        del policy["Alarms"]  # a step policy no alarm invokes yet
    policy["StepScalingPolicyConfiguration"] = {
        "AdjustmentType": "ChangeInCapacity", "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]
    }
    return policy


def test_every_step_policys_alarms_count_and_every_source_of_skipped_lines_is_kept(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    """Step policies (one without alarms, two with one each) before a tracking policy; notes from a
    policy and from a dashboard; a metric without dimensions is shown with "-"."""
    unmapped = _policy("wrong-scope", {"TargetValue": 5.0, "PredefinedMetricSpecification": {
        "PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"}})
    _describe(stub)
    _policies(aas_stub, _step("idle", []), _step("wake", ["queue-deep"]), _step("drain", ["queue-empty"]), unmapped)
    queue = {"Namespace": "Custom/Queue", "Statistic": "Maximum", "Period": 60}
    _alarms(cw_stub, [_alarm("queue-deep", MetricName="Depth", **queue), _alarm("queue-empty", MetricName="Empty", **queue)])
    search = {"widgets": [{"type": "metric", "properties": {"metrics": [[{"expression": "SEARCH('{AWS/SageMaker} llm', 'Sum', 60)"}]]}}]}
    cw_stub.add_response("get_dashboard", {"DashboardBody": json.dumps(search), "DashboardName": "llm"}, {"DashboardName": "llm"})
    for name in ("Depth", "Empty"):
        cw_stub.add_response("list_metrics", {"Metrics": [{"Namespace": "Custom/Queue", "MetricName": name, "Dimensions": []}]},
                             {"Namespace": "Custom/Queue", "MetricName": name})
    result = run_cli("status", ENDPOINT, "--check-metrics", "--dashboard", "llm")
    assert result.code == 0, result.err
    rows = [line.split() for line in result.out.split("RESULT\n", 1)[1].splitlines()[:2]]
    assert rows == [["Custom/Queue", "Depth", "-", "alarm", "queue-deep", "exists"], ["Custom/Queue", "Empty", "-", "alarm", "queue-empty", "exists"]]
    assert result.out.endswith(
        f"  not checked: policy wrong-scope: predefined metric SageMakerInferenceComponentInvocationsPerCopy on {VARIANT_ID} is not "
        "mapped to a metric here\n"
        "  not checked: dashboard llm: SEARCH expression (it finds its metrics when it runs): SEARCH('{AWS/SageMaker} llm', 'Sum', 60)\n"
    )


@pytest.mark.parametrize(
    ("current", "result", "detail"),
    [
        (2, "pool_empty", "the ml.g6.48xlarge pool has 0 instances: it publishes nothing until one runs"),
        (3, "missing", "no data in the last 2 weeks; the ml.g6.48xlarge pool's instance count is not reported"),
    ],
)
def test_a_pool_describe_endpoint_leaves_out_is_empty_only_when_the_others_hold_every_instance(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any, current: int, result: str, detail: str
) -> None:
    live = s.endpoint(ENDPOINT, "llm-prod-config-2", [s.live_variant({"ml.g6e.48xlarge": 2}, CurrentInstanceCount=current)])
    stub.add_response("describe_endpoint", live, {"EndpointName": ENDPOINT})
    stub.add_response("describe_endpoint_config", s.THREE_POOLS_CONFIG, {"EndpointConfigName": "llm-prod-config-2"})
    _policies(aas_stub)
    _alarms(cw_stub, [G6_COUNT])
    _listed(cw_stub, "InstanceCount", _variant_dims(InstanceType="ml.g6.48xlarge"))
    ran = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    (finding,) = json.loads(ran.out)["metric_check"]["metrics"]
    assert (ran.code, finding["result"], finding["detail"]) == (0 if result == "pool_empty" else 1, result, detail)


def test_the_variant_a_metric_names_decides_whose_pool_counts(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    """Two variants with an ml.g6.48xlarge pool: the canary's is empty, the primary's is not."""
    cfg = s.config("two-config", [
        {**s.THREE_POOLS_CONFIG["ProductionVariants"][0], "VariantName": "AllTraffic"},
        {**s.THREE_POOLS_CONFIG["ProductionVariants"][0], "VariantName": "canary"},
    ])
    live = s.endpoint(ENDPOINT, "two-config", [
        s.live_variant({"ml.g6e.48xlarge": 1, "ml.g6.48xlarge": 2, "ml.p4d.24xlarge": 0}),
        s.live_variant({"ml.g6e.48xlarge": 1, "ml.g6.48xlarge": 0, "ml.p4d.24xlarge": 0}, name="canary"),
    ])
    stub.add_response("describe_endpoint", live, {"EndpointName": ENDPOINT})
    stub.add_response("describe_endpoint_config", cfg, {"EndpointConfigName": "two-config"})
    _policies(aas_stub)
    _policies(aas_stub, where={**VARIANT_WHERE, "ResourceId": f"endpoint/{ENDPOINT}/variant/canary"})
    canary_dims = _dims(EndpointName=ENDPOINT, VariantName="canary", InstanceType="ml.g6.48xlarge")
    _alarms(cw_stub, [_single("canary-g6-count", "InstanceCount", canary_dims)])
    _listed(cw_stub, "InstanceCount", canary_dims)
    ran = run_cli("status", ENDPOINT, "--check-metrics", "--json")
    assert ran.code == 0, ran.err
    assert json.loads(ran.out)["metric_check"]["metrics"][0]["result"] == "pool_empty"


# -- inference components ----------------------------------------------------------------------


def test_inference_component_policies_and_alarms(stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any) -> None:
    """The component's predefined policy reads ConcurrentRequestsPerCopy; an alarm on the component's
    per-type metric is missing although it has a copy on that type (a failure), and one on a type
    where the component has no copy is not."""
    ic = "my-ic"
    component = _policy(
        "copies",
        {"TargetValue": 4.0, "PredefinedMetricSpecification": {
            "PredefinedMetricType": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"}},
    )
    component.update(ResourceId=f"inference-component/{ic}", ScalableDimension="sagemaker:inference-component:DesiredCopyCount")
    described = {**s.IC_DESCRIBED, "RuntimeConfig": {"DesiredCopyCount": 3, "CurrentCopyCount": 3,
                                                     "PlacementStatus": [{"InstanceType": "ml.p5.48xlarge", "CurrentCopyCount": 3}]}}
    stub.add_response("describe_endpoint", s.IC_ENDPOINT, {"EndpointName": s.IC_ENDPOINT["EndpointName"]})
    stub.add_response("describe_endpoint_config", s.IC_CONFIG, {"EndpointConfigName": "hetero-config-1"})
    stub.add_response("list_inference_components", s.IC_LIST, {"EndpointNameEquals": s.IC_ENDPOINT["EndpointName"]})
    stub.add_response("describe_inference_component", described, {"InferenceComponentName": ic})
    _policies(aas_stub, where={**VARIANT_WHERE, "ResourceId": "endpoint/my-heterogeneous-endpoint/variant/primary"})
    _policies(aas_stub, component, where={"ServiceNamespace": "sagemaker", "ResourceId": f"inference-component/{ic}",
                                          "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount"})
    on_p5 = _single("ic-p5", "ModelLatency", _dims(InferenceComponentName=ic, InstanceType="ml.p5.48xlarge"))
    on_g6 = _single("ic-g6", "ModelLatency", _dims(InferenceComponentName=ic, InstanceType="ml.g6.48xlarge"))
    _alarms(cw_stub, [on_g6, on_p5])
    _listed(cw_stub, "ConcurrentRequestsPerCopy", _dims(InferenceComponentName=ic), [_dims(InferenceComponentName=ic)])
    _listed(cw_stub, "ModelLatency", _dims(InferenceComponentName=ic, InstanceType="ml.g6.48xlarge"))
    _listed(cw_stub, "ModelLatency", _dims(InferenceComponentName=ic, InstanceType="ml.p5.48xlarge"))
    result = run_cli("status", "my-heterogeneous-endpoint", "--check-metrics", "--json")
    assert result.code == 1
    metrics = json.loads(result.out)["metric_check"]["metrics"]
    assert [(m["metric_name"], m["dimensions"].get("InstanceType"), m["result"], m["read_by"][0]["name"]) for m in metrics] == [
        ("ConcurrentRequestsPerCopy", None, "exists", "copies"),
        ("ModelLatency", "ml.g6.48xlarge", "pool_empty", "ic-g6"),
        ("ModelLatency", "ml.p5.48xlarge", "missing", "ic-p5"),
    ]
    assert metrics[1]["detail"] == "my-ic has 0 copies on ml.g6.48xlarge: it publishes nothing until one runs there"


# -- dashboards --------------------------------------------------------------------------------

DASHBOARD = {
    "widgets": [
        {"type": "text", "properties": {"markdown": "# llm-prod"}},
        {
            "type": "metric",
            "properties": {
                "region": "us-east-1",
                "metrics": [
                    ["AWS/SageMaker", "ModelLatency", "EndpointName", ENDPOINT, "VariantName", "AllTraffic", {"stat": "p99"}],
                    [".", "OverheadLatency", ".", ".", ".", "."],
                    ["...", "eu-copy", {"region": "eu-west-1"}],
                    [{"expression": "SEARCH('{AWS/SageMaker,EndpointName,InstanceType} llm-prod', 'Average', 60)", "id": "s"}],
                    [{"expression": "m1 * 2", "id": "e"}],
                ],
            },
        },
    ]
}


def test_every_kind_of_dashboard_line() -> None:
    e = ENDPOINT
    body = {
        "widgets": [
            {"type": "text", "properties": {"markdown": "# llm-prod"}},
            {
                "type": "metric",
                "properties": {
                    "metrics": [
                        ["AWS/SageMaker", "Invocations", "EndpointName", e, "VariantName", "AllTraffic"],
                        [{"expression": "SEARCH('{AWS/SageMaker,EndpointName} llm', 'Sum', 60)", "id": "s"}],
                        ["...", "canary"],  # the line above, but its last value
                        [".", "ModelLatency", ".", "."],  # four places: namespace and one dimension repeated
                        [".", ".", "EndpointName", "z", ".", "v"],  # a "." with nothing above it stays
                        ["AWS/SageMaker", "NoDimensions"],
                        ["AWS/SageMaker"],
                        ["AWS/SageMaker", "Odd", "EndpointName"],
                        ["AWS/SageMaker", "Invocations", "EndpointName", "x", {"accountId": "210987654321"}],
                        ["...", "AWS/SageMaker", "Invocations", "EndpointName", "y"],  # as long as the line above: nothing repeated
                    ]
                },
            },
            {"type": "metric", "properties": {"region": "eu-west-1", "metrics": [["AWS/SageMaker", "Invocations", "EndpointName", "eu"]]}},
            {  # a widget's first line has no line above it to repeat
                "type": "metric",
                "properties": {"accountId": "210987654321", "metrics": [["...", "AWS/SageMaker", "Invocations", "EndpointName", "a"]]},
            },
        ]
    }
    metrics, notes = dashboard_metrics(body, region="us-east-1")
    assert [str(m) for m in metrics] == [
        f"AWS/SageMaker Invocations {{EndpointName={e}, VariantName=AllTraffic}}",
        f"AWS/SageMaker Invocations {{EndpointName={e}, VariantName=canary}}",
        f"AWS/SageMaker ModelLatency {{EndpointName={e}}}",
        "AWS/SageMaker ModelLatency {.=v, EndpointName=z}",
        "AWS/SageMaker NoDimensions {-}",
        "AWS/SageMaker Invocations {EndpointName=y}",
    ]
    assert notes == [
        "SEARCH expression (it finds its metrics when it runs): SEARCH('{AWS/SageMaker,EndpointName} llm', 'Sum', 60)",
        "metric line ['AWS/SageMaker'] is not [Namespace, MetricName, Name, Value, ...]",
        "metric line ['AWS/SageMaker', 'Odd', 'EndpointName'] is not [Namespace, MetricName, Name, Value, ...]",
        "AWS/SageMaker Invocations is read from account 210987654321",
        "AWS/SageMaker Invocations is read from region eu-west-1",
        "AWS/SageMaker Invocations is read from account 210987654321",
    ]
    assert dashboard_metrics({}, region="us-east-1") == ([], [])


def test_alarm_and_metric_shapes_without_optional_members() -> None:
    assert MetricId.of({"Namespace": "AWS/SageMaker", "MetricName": "Invocations"}) == MetricId("AWS/SageMaker", "Invocations", ())
    assert alarm_metrics({"AlarmName": "composite-like"}) == []


def test_dashboard_lines_are_expanded_and_search_is_skipped() -> None:
    metrics, notes = dashboard_metrics(DASHBOARD, region="us-east-1")
    assert metrics == [
        MetricId("AWS/SageMaker", "ModelLatency", (("EndpointName", ENDPOINT), ("VariantName", "AllTraffic"))),
        MetricId("AWS/SageMaker", "OverheadLatency", (("EndpointName", ENDPOINT), ("VariantName", "AllTraffic"))),
    ]
    assert notes == [
        "AWS/SageMaker OverheadLatency is read from region eu-west-1",
        "SEARCH expression (it finds its metrics when it runs): "
        "SEARCH('{AWS/SageMaker,EndpointName,InstanceType} llm-prod', 'Average', 60)",
    ]


def test_dashboard_metrics_are_checked_and_its_skipped_lines_said(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    _describe(stub)
    _policies(aas_stub)
    _alarms(cw_stub, [])
    cw_stub.add_response(
        "get_dashboard",
        {"DashboardArn": "arn:aws:cloudwatch::123456789012:dashboard/llm-prod", "DashboardBody": json.dumps(DASHBOARD),
         "DashboardName": "llm-prod"},
        {"DashboardName": "llm-prod"},
    )
    _listed(cw_stub, "ModelLatency", _variant_dims(), [_variant_dims()])
    _listed(cw_stub, "OverheadLatency", _variant_dims(), [_variant_dims()])
    result = run_cli("status", ENDPOINT, "--check-metrics", "--dashboard", "llm-prod")
    assert result.code == 0, result.err
    assert "dashboard llm-prod  exists" in result.out
    assert "  not checked: dashboard llm-prod: SEARCH expression (it finds its metrics when it runs): SEARCH(" in result.out
    assert "  not checked: dashboard llm-prod: AWS/SageMaker OverheadLatency is read from region eu-west-1\n" in result.out


# -- arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--dashboard", "llm-prod"), "--dashboard needs --check-metrics"),
        (("--check-metrics", "--watch"), "--check-metrics runs once: it cannot be combined with --watch"),
    ],
)
def test_argument_combinations_that_do_not_work(run_cli: Any, args: tuple[str, ...], message: str) -> None:
    result = run_cli("status", ENDPOINT, *args)
    assert (result.code, result.out, result.err) == (2, "", f"sagemaker-pools: error: {message}\n")


def test_a_dashboard_line_of_another_endpoint_is_not_classified_against_this_ones_pools(
    stub: Stubber, aas_stub: Stubber, cw_stub: Stubber, run_cli: Any
) -> None:
    """ml.p4d.24xlarge is an empty pool of llm-prod, but the line is another endpoint's: missing is a failure."""
    other = _dims(EndpointName="other", InstanceType="ml.p4d.24xlarge")
    body = {"widgets": [{"type": "metric", "properties": {"metrics": [["AWS/SageMaker", "InstanceCount", "EndpointName", "other",
                                                                        "InstanceType", "ml.p4d.24xlarge"]]}}]}
    _describe(stub)
    _policies(aas_stub)
    _alarms(cw_stub, [])
    cw_stub.add_response("get_dashboard", {"DashboardBody": json.dumps(body)}, {"DashboardName": "shared"})
    _listed(cw_stub, "InstanceCount", other)
    result = run_cli("status", ENDPOINT, "--check-metrics", "--dashboard", "shared", "--json")
    assert result.code == 1
    (finding,) = json.loads(result.out)["metric_check"]["metrics"]
    assert (finding["result"], finding["detail"]) == (
        "missing", "no data in the last 2 weeks (its pools are not known here: it is not a metric of endpoint llm-prod)"
    )
