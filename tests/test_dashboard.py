"""PoolDashboard: the synthesized body of a 10-endpoint dashboard against CloudWatch's limits."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sagemaker_pools import InstancePool, PoolConfigError, PoolDashboard, PooledEndpoint, UtilizationStrategy
from sagemaker_pools import dashboard as dashboard_module
from support.frozen import frozen
from support.synth import imported_model, new_stack, resources, template_of

TYPES = ("ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge")
POOLS = [InstancePool(instance_type=t, max_concurrency=8.0 * (i + 1)) for i, t in enumerate(TYPES)]
ENDPOINTS = 10


def _text(value: Any) -> str:
    """A dashboard body (Fn::Join of strings and intrinsics) as text, intrinsics as ``<Ref>`` or ``<LogicalId.Attribute>``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_text(p) for p in parts)
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    return f"<{value['Ref']}>"


@pytest.fixture(scope="module")
def built() -> tuple[PoolDashboard, dict[str, Any]]:
    stack = new_stack("Dashboards")
    model = imported_model(stack)
    endpoints = []
    for i in range(ENDPOINTS):
        endpoint = PooledEndpoint(stack, f"Ep{i}", model=model, pools=POOLS)
        if i % 2 == 0:  # half scale on weighted utilization (instance-weighted: the most metrics)
            endpoint.auto_scale(max_capacity=4).scale_on_weighted_utilization(target=0.6, strategy=UtilizationStrategy.INSTANCE_WEIGHTED)
        endpoints.append(endpoint)
    dashboard = PoolDashboard(stack, "Dashboard", endpoints=endpoints, dashboard_name="pools")
    (resource,) = resources(template_of(stack), "AWS::CloudWatch::Dashboard").values()
    return dashboard, frozen(json.loads(_text(resource["Properties"]["DashboardBody"])))


def _rows(widget: dict[str, Any]) -> list[list[Any]]:
    return widget.get("properties", {}).get("metrics", [])  # type: ignore[no-any-return]


def test_ten_endpoints_fit_cloudwatchs_limits(built: tuple[PoolDashboard, dict[str, Any]]) -> None:
    dashboard, body = built
    widgets = body["widgets"]
    assert len(widgets) == ENDPOINTS * 8 <= dashboard_module.MAX_WIDGETS
    per_graph = [len(_rows(w)) for w in widgets]
    assert max(per_graph) <= dashboard_module.MAX_METRICS_PER_GRAPH
    total = sum(per_graph)
    assert total <= dashboard_module.MAX_METRICS_PER_DASHBOARD
    # what the construct counted eagerly is what was rendered
    assert (dashboard.widget_count, dashboard.metric_count) == (len(widgets), total)


def test_one_line_per_instance_type(built: tuple[PoolDashboard, dict[str, Any]]) -> None:
    _, body = built
    graphs = {w["properties"]["title"]: w for w in body["widgets"][1:8]}
    latency = _rows(graphs["Model latency p50 / p99 (µs)"])
    assert len(latency) == 2 * len(TYPES)
    for row in latency:
        assert row[:2] == ["AWS/SageMaker", "ModelLatency"]
        assert row[row.index("InstanceType") + 1] in TYPES and {"EndpointName", "VariantName"} <= {x for x in row if isinstance(x, str)}
        assert row[-1]["stat"] in ("p50", "p99")
    instances = _rows(graphs["Instances (CPUUtilization samples)"])
    assert {r[row_i + 1] for r in instances for row_i, v in enumerate(r) if v == "InstanceType"} == set(TYPES)
    # A documented metric (not the launch post's InstanceCount): one sample per instance a minute.
    assert {tuple(r[:2]) for r in instances} == {("/aws/sagemaker/Endpoints", "CPUUtilization")}
    assert {r[-1]["stat"] for r in instances} == {"SampleCount"}
    for title in ("Concurrent requests per model (max)", "GPU utilization (% x GPUs)", "Invocations per instance"):
        assert len(_rows(graphs[title])) == len(TYPES)
    assert len(_rows(graphs["Errors (4XX / 5XX)"])) == 2 * len(TYPES)


def _dims(row: list[Any]) -> dict[str, str]:
    return dict(zip(row[2:-1:2], row[3:-1:2]))


def test_each_line_reads_its_own_endpoint_type_and_statistic(built: tuple[PoolDashboard, dict[str, Any]]) -> None:
    _, body = built
    widgets = body["widgets"]
    for i in range(ENDPOINTS):
        header, *graphs = widgets[8 * i : 8 * i + 8]
        name = re.match(r"## (<[^>]+>) / AllTraffic\n", header["properties"]["markdown"])[1]  # type: ignore[index]
        assert name.startswith(f"<Ep{i}") and name.endswith(".EndpointName>")
        lines = {
            g["properties"]["title"]: [(r[0], r[1], _dims(r), r[-1].get("label"), r[-1].get("stat")) for r in _rows(g) if isinstance(r[0], str)]
            for g in graphs
        }

        def of(t: str) -> dict[str, str]:
            return {"EndpointName": name, "InstanceType": t, "VariantName": "AllTraffic"}

        sm, host = "AWS/SageMaker", "/aws/sagemaker/Endpoints"
        assert lines["Model latency p50 / p99 (µs)"] == [(sm, "ModelLatency", of(t), f"{t} {s}", s) for t in TYPES for s in ("p50", "p99")]
        assert lines["Concurrent requests per model (max)"] == [(sm, "ConcurrentRequestsPerModel", of(t), t, "Maximum") for t in TYPES]
        assert lines["GPU utilization (% x GPUs)"] == [(host, "GPUUtilization", of(t), t, None) for t in TYPES]  # Average
        assert lines["Instances (CPUUtilization samples)"] == [(host, "CPUUtilization", of(t), t, "SampleCount") for t in TYPES]
        assert lines["Invocations per instance"] == [(sm, "InvocationsPerInstance", of(t), t, "Sum") for t in TYPES]
        assert lines["Errors (4XX / 5XX)"] == [
            (sm, f"Invocation{c}Errors", of(t), f"{t} {c}", "Sum") for t in TYPES for c in ("4XX", "5XX")
        ]


def test_header_and_utilization_target(built: tuple[PoolDashboard, dict[str, Any]]) -> None:
    _, body = built
    header = body["widgets"][0]
    assert header["type"] == "text"
    markdown = header["properties"]["markdown"]
    positions = [markdown.index(f"`{t}`") for t in TYPES]
    assert positions == sorted(positions)  # priority order
    scaled, unscaled = body["widgets"][7], body["widgets"][15]
    assert scaled["properties"]["title"] == "Weighted utilization (instance-weighted)"
    assert scaled["properties"]["annotations"]["horizontal"][0]["value"] == 0.6
    assert unscaled["properties"]["title"] == "Weighted utilization (max-over-types)"
    assert unscaled["properties"]["annotations"]["horizontal"][0]["value"] == 0.7
    expressions = [row[0]["expression"] for row in _rows(scaled) if isinstance(row[0], dict) and "expression" in row[0]]
    assert any(e.startswith("IF(FILL(n, 0) > 0") for e in expressions)


def test_limits_fail_at_synth_time(monkeypatch: pytest.MonkeyPatch) -> None:
    stack = new_stack()
    imported = [PooledEndpoint.from_endpoint_name(stack, f"E{i}", f"endpoint-{i}") for i in range(3)]
    monkeypatch.setattr(dashboard_module, "MAX_WIDGETS", 10)
    dashboard = PoolDashboard(stack, "D", endpoints=[PooledEndpoint(stack, "First", model=imported_model(stack), pools=POOLS)])
    with pytest.raises(PoolConfigError) as error:
        dashboard.add_endpoint(imported[1], pools=POOLS)
    assert error.value.field == "PoolDashboard.endpoints" and "16 widgets" in str(error.value)
    monkeypatch.setattr(dashboard_module, "MAX_WIDGETS", 500)
    monkeypatch.setattr(dashboard_module, "MAX_METRICS_PER_DASHBOARD", dashboard.metric_count + 10)
    with pytest.raises(PoolConfigError) as error:
        dashboard.add_endpoint(imported[1], pools=POOLS)
    assert "metrics a dashboard" in str(error.value)
    monkeypatch.setattr(dashboard_module, "MAX_METRICS_PER_GRAPH", 9)
    with pytest.raises(PoolConfigError) as error:
        dashboard.add_endpoint(imported[2], pools=POOLS)
    assert error.value.field == "PoolDashboard.endpoints.graph" and "Model latency" in str(error.value)


def test_imported_endpoint_needs_pools() -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as error:
        PoolDashboard(stack, "D", endpoints=[PooledEndpoint.from_endpoint_name(stack, "E", "other")])
    assert error.value.field == "PoolDashboard.endpoints.pools"
    # without max_concurrency there is simply no utilization graph
    pools = [InstancePool(instance_type=TYPES[0])]
    dashboard = PoolDashboard(stack, "D2", endpoints=[PooledEndpoint(stack, "First", model=imported_model(stack), pools=pools)])
    dashboard.add_endpoint(PooledEndpoint.from_endpoint_name(stack, "E2", "other"), pools=pools)
    assert dashboard.widget_count == 14


def test_adding_an_endpoint_later_renders_what_listing_it_renders() -> None:
    """The body goes to Node once for the endpoints listed, and again on each ``add_endpoint``."""
    bodies = []
    for later in (False, True):
        stack = new_stack()
        first = PooledEndpoint(stack, "First", model=imported_model(stack), pools=POOLS)
        second = PooledEndpoint(stack, "Second", model=imported_model(stack, "other-model"), pools=POOLS)
        dashboard = PoolDashboard(stack, "D", endpoints=[first] if later else [first, second])
        if later:
            alone = stack.resolve(dashboard.dashboard.dashboard_body)
            dashboard.add_endpoint(second)
            assert stack.resolve(dashboard.dashboard.dashboard_body) != alone
        bodies.append(template_of(stack)["Resources"][stack.resolve(dashboard.dashboard.logical_id)])
    assert bodies[0] == bodies[1]
