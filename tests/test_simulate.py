"""``sagemaker-pools simulate``: the fleet's behaviour over time, replayed from synthesized templates.

Every test simulates a template as CloudFormation receives it (the example stacks, the
hand-written L1 twin, or a stack synthesized here) and asserts what the fleet does minute by
minute: never a snapshot of the output.
"""

from __future__ import annotations

import copy
import io
import math
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sagemaker_pools.ops.cli import main
from sagemaker_pools.ops.context import Context
from support.frozen import frozen
from sagemaker_pools.ops.aws import AwsOptions, Clients
from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate, summarize, to_json
from sagemaker_pools.ops.simulate.inputs import default_start_up_minutes
from sagemaker_pools.ops.simulate.readings import COOLDOWN_FROM_REQUEST, LAUNCH_POST, UPDATES_OVERLAP

ROOT = Path(__file__).resolve().parents[1]
G6E, G6, P4D = "ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"


def _run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(clients=Clients(AwsOptions()), out=out, err=err)
    code = main(list(argv), context=ctx)
    return code, out.getvalue(), err.getvalue()


def _trace(tmp_path: Path, rows: list[tuple[int, float]], column: str = "concurrency") -> str:
    path = tmp_path / "trace.csv"
    path.write_text(f"minute,{column}\n" + "".join(f"{m},{v}\n" for m, v in rows))
    return str(path)


def _write(tmp_path: Path, template: dict[str, Any], name: str = "template.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(template))
    return str(path)


# --- dynamics of dilution ------------------------------------------------------------------------


def _weighted_stack(strategy_name: str) -> dict[str, Any]:
    from sagemaker_pools import InstancePool, PooledEndpoint, UtilizationStrategy
    from support.synth import imported_model, synth

    def build(stack: Any) -> None:
        endpoint = PooledEndpoint(
            stack,
            "Endpoint",
            model=imported_model(stack),
            pools=[
                InstancePool(instance_type=G6E, max_concurrency=32),
                InstancePool(instance_type=G6, max_concurrency=16),
                InstancePool(instance_type=P4D, max_concurrency=24),
            ],
            initial_instance_count=2,
        )
        endpoint.auto_scale(min_capacity=2, max_capacity=8).scale_on_weighted_utilization(
            target=0.7, strategy=UtilizationStrategy[strategy_name]
        )

    return synth(build)


@pytest.fixture(scope="module")
def weighted_templates() -> dict[str, dict[str, Any]]:
    return frozen({name: _weighted_stack(name) for name in ("AVERAGE_OVER_TYPES", "MAX_OVER_TYPES", "INSTANCE_WEIGHTED")})  # type: ignore[no-any-return]


def test_average_over_types_never_reaches_its_target_while_max_over_types_scales(weighted_templates: dict[str, Any]) -> None:
    # Two g6e instances (32 each) asked for 96 concurrent requests: 150 % of what they sustain.
    load = [96.0] * 120
    average = simulate(read_fleet(weighted_templates["AVERAGE_OVER_TYPES"]), Scenario(load=load))
    maximum = simulate(read_fleet(weighted_templates["MAX_OVER_TYPES"]), Scenario(load=load))
    # The average divides g6e's 1.5 by three pools: 0.5, below 0.7 for ever; nothing scales, the queue stays.
    assert max(r.signal or 0 for r in average.rows) == pytest.approx(0.5)
    assert summarize(average)["minutes_above_target"] == 0
    assert average.activities == []
    assert all(r.queued == pytest.approx(32.0) for r in average.rows)
    # The maximum reads 1.5 > 0.7 and scales out to ceil(2 x 1.5 / 0.7) = 5 after 3 datapoints.
    first = maximum.activities[0]
    assert (first.minute, first.before, first.after) == (2, 2, 5)
    assert maximum.rows[-1].instances[G6E] >= 5
    assert maximum.rows[-1].queued == 0


def test_instance_count_and_cpu_sample_count_simulate_alike(weighted_templates: dict[str, Any]) -> None:
    """INSTANCE_WEIGHTED reads the per-type count as SampleCount of CPUUtilization (the default, a
    documented metric) or, when asked for, as the launch post's InstanceCount: same fleet."""
    template = weighted_templates["INSTANCE_WEIGHTED"]
    as_counts = copy.deepcopy(template)
    changed = 0
    for resource in as_counts["Resources"].values():
        for query in resource.get("Properties", {}).get("TargetTrackingScalingPolicyConfiguration", {}).get(
            "CustomizedMetricSpecification", {}
        ).get("Metrics", []):
            stat = query.get("MetricStat")
            if stat and stat["Metric"]["MetricName"] == "CPUUtilization":
                stat["Metric"].update(MetricName="InstanceCount", Namespace="AWS/SageMaker")
                stat["Stat"] = "Average"
                del stat["Unit"]
                changed += 1
    assert changed == 3
    load = [20.0] * 30 + [150.0] * 90 + [10.0] * 60
    outages = {G6E: [(20, 200)]}
    a = to_json(simulate(read_fleet(template), Scenario(load=load, outages=outages)))
    b = to_json(simulate(read_fleet(as_counts), Scenario(load=load, outages=outages)))
    assert a["timeline"] == b["timeline"]
    assert any(r["instances"][G6] for r in a["timeline"])  # the fallback pool served, so the count mattered


# --- an outage of priority 1 ---------------------------------------------------------------------


@pytest.mark.parametrize("reading", ["reference", LAUNCH_POST])
def test_an_outage_of_priority_1_falls_back_within_timeout_and_start_up(example_templates: dict[str, Any], reading: str) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    assert [p.instance_type for p in spec.pools] == [G6E, G6, P4D]
    # Developer guide: the next pool at once; launch post: after the timeout (20 minutes in the example) on g6e.
    timeout = spec.provision_timeout_s // 60 if reading == LAUNCH_POST else 0
    start_up = {t: default_start_up_minutes(t) for t in spec.types}
    load = [20.0] * 30 + [90.0] * 210
    result = simulate(spec, Scenario(load=load, outages={G6E: [(0, 240)]}, start_up=start_up, readings=frozenset({reading} - {"reference"})))
    rows = result.rows
    # No priority-1 instance during the outage.
    assert all(r.instances[G6E] == 0 for r in rows)
    first_out = next(a for a in result.activities if a.after > a.before)
    grew = next(r.minute for r in rows if sum(r.instances.values()) > 2)
    # The request goes out the minute after the decision, then starts on g6 (at once, or after the timeout).
    assert grew == first_out.minute + 1 + timeout + start_up[G6]
    assert rows[grew].instances[G6] > 2
    # Updating from the request until the new instances serve: no other change in between.
    assert {r.status for r in rows[first_out.minute + 1 : grew]} == {"Updating"}
    assert not [a for a in result.activities if first_out.minute < a.minute < grew]
    assert summarize(result)["minutes_on_fallback"] == len(rows)


def test_scale_in_removes_the_lowest_priority_first(example_templates: dict[str, Any]) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    # g6e has no capacity for the first two hours: the scale-out lands on g6; load then falls.
    load = [20.0] * 10 + [150.0] * 110 + [10.0] * 180
    result = simulate(spec, Scenario(load=load, outages={G6E: [(5, 100)]}))
    peak = max(result.rows, key=lambda r: sum(r.instances.values()))
    assert peak.instances[G6] > 0 and peak.instances[G6E] > 0
    end = result.rows[-1]
    assert sum(end.instances.values()) == spec.scaling.min_capacity
    assert end.instances[G6] == 0  # the fallback instances went first


# --- one step of traffic, one scale-out -----------------------------------------------------------
#
# Application Auto Scaling user guide, target tracking, cooldown: "While the scale-out cooldown
# period is in effect, the capacity added by the initiating scale-out activity is calculated as
# part of the desired capacity for the next scale-out activity." A scale-out cooldown that ends
# before the new capacity serves and the policy's alarm has seen it scales out a second time on
# the same step of traffic.

def _scale_outs(result: Any) -> list[Any]:
    return [a for a in result.activities if a.after > a.before]


def _step_case(stack: str) -> tuple[list[float], int, float]:
    """(load, capacity before the step, the step's metric on it) for an example stack, all on priority 1."""
    if stack == "RealtimePooledLlm":
        # 2 g6e instances at 32 concurrent requests each: 40 is 0.625 of them, 80 is 1.25.
        return [40.0] * 30 + [80.0] * 150, 2, 80 / 2 / 32
    # 4 copies of the component, one per p5 at 32 each: 85 is 0.66 (within the 10 % below the
    # target that scales in), 150 is 1.17.
    return [85.0] * 30 + [150.0] * 150, 4, 150 / 4 / 32


@pytest.mark.parametrize("stack", ["RealtimePooledLlm", "InferenceComponentPools"])
def test_one_step_of_traffic_is_answered_by_one_scale_out(example_templates: dict[str, Any], stack: str) -> None:
    spec = read_fleet(example_templates[stack])
    load, before, metric = _step_case(stack)
    result = simulate(spec, Scenario(load=load))
    target = spec.scaling.target_tracking[0].target
    expected = math.ceil(before * metric / target)
    assert before < expected < spec.scaling.max_capacity  # a real scale-out, not one the maximum cut short
    assert [(a.before, a.after) for a in result.activities] == [(before, expected)]
    end = result.rows[-1]
    assert end.desired_capacity == expected
    assert end.signal is not None and end.signal <= target  # and it was enough


_OLD_MODEL = frozenset({UPDATES_OVERLAP, COOLDOWN_FROM_REQUEST})


@pytest.mark.parametrize("stack", ["RealtimePooledLlm", "InferenceComponentPools"])
def test_a_scale_out_cooldown_shorter_than_the_start_up_overshoots_only_where_updates_overlap(example_templates: dict[str, Any], stack: str) -> None:
    """The test above can fail: with the cooldown the examples had (10 minutes; none), the same step
    overshoots if the endpoint took a capacity change while Updating and the cooldown ran from the
    request. By default (the endpoint refuses a change while Updating; the cooldown starts when the
    change completed), the metric reads the new capacity before a policy may act again: one scale-out."""
    template = copy.deepcopy(example_templates[stack])
    for resource in template["Resources"].values():
        config = resource.get("Properties", {}).get("TargetTrackingScalingPolicyConfiguration")
        if config:
            config["ScaleOutCooldown"] = 600 if stack == "RealtimePooledLlm" else 0
    spec = read_fleet(template)
    load, before, metric = _step_case(stack)
    expected = math.ceil(before * metric / spec.scaling.target_tracking[0].target)
    old = simulate(spec, Scenario(load=load, readings=_OLD_MODEL))
    assert len(_scale_outs(old)) > 1
    assert max(r.desired_capacity for r in old.rows) > expected
    # Refusing a change while Updating is what prevents it, whenever the cooldown starts (with
    # updates-overlap alone, no cooldown runs before the change completes: it overshoots too).
    assert len(_scale_outs(simulate(spec, Scenario(load=load, readings=frozenset({UPDATES_OVERLAP}))))) > 1
    for readings in (frozenset(), frozenset({COOLDOWN_FROM_REQUEST})):
        assert [(a.before, a.after) for a in _scale_outs(simulate(spec, Scenario(load=load, readings=readings)))] == [(before, expected)]


# --- waking from zero ----------------------------------------------------------------------------

_QUIET_THEN_BUSY = [0.0] * 120 + [10.0] * 120 + [0.0] * 60


@pytest.mark.parametrize("stack", ["InferenceComponentPools", "AsyncScaleToZero"])
def test_waking_from_zero_adds_at_most_one_unit_per_cold_start(example_templates: dict[str, Any], stack: str) -> None:
    spec = read_fleet(example_templates[stack])
    assert spec.scaling.min_capacity == 0
    result = simulate(spec, Scenario(load=_QUIET_THEN_BUSY))
    wakes = summarize(result)["wake_ups"]
    assert wakes, "the fleet never went to zero and woke up"
    assert all(w["first_serving_minute"] is not None for w in wakes)
    assert [w["units_requested"] for w in wakes] == [1] * len(wakes)


@pytest.mark.parametrize("stack", ["InferenceComponentPools", "AsyncScaleToZero"])
@pytest.mark.parametrize("reading", ["reference", LAUNCH_POST])
def test_waking_from_zero_during_an_outage_of_priority_1_adds_one_unit(example_templates: dict[str, Any], stack: str, reading: str) -> None:
    """The fallback path: priority 2 at once (developer guide), or after the provisioning timeout on
    priority 1 (launch post); then the start-up on priority 2."""
    spec = read_fleet(example_templates[stack])
    first, second = spec.pools[0].instance_type, spec.pools[1].instance_type
    readings = frozenset({reading} - {"reference"})
    result = simulate(spec, Scenario(load=_QUIET_THEN_BUSY, outages={first: [(0, len(_QUIET_THEN_BUSY))]}, readings=readings))
    wakes = summarize(result)["wake_ups"]
    assert wakes, "the fleet never went to zero and woke up"
    assert all(w["first_serving_minute"] is not None for w in wakes)
    assert any(r.instances[second] for r in result.rows) and not any(r.instances[first] for r in result.rows[1:])
    # The request goes out the minute after the decision; a copy loads after its instance starts.
    cold_start = 1 + default_start_up_minutes(second) + (5 if spec.component else 0)
    timeout = spec.provision_timeout_s // 60 if reading == LAUNCH_POST else 0
    assert [w["first_serving_minute"] - w["start_minute"] for w in wakes] == [timeout + cold_start] * len(wakes)
    assert [w["units_requested"] for w in wakes] == [1] * len(wakes)


def test_the_wake_up_measure_sees_a_runaway(example_templates: dict[str, Any]) -> None:
    """The overshoot the test above asserts against is measured, not assumed: a 1-minute cooldown runs
    away where the endpoint takes capacity changes while Updating; where it refuses them (the
    default reading), one unit is asked for whatever the cooldown."""
    template = copy.deepcopy(example_templates["InferenceComponentPools"])
    for resource in template["Resources"].values():
        config = resource.get("Properties", {}).get("StepScalingPolicyConfiguration")
        if config:
            config.update(AdjustmentType="ChangeInCapacity", Cooldown=60)
    wakes = summarize(simulate(read_fleet(template), Scenario(load=_QUIET_THEN_BUSY, readings=frozenset({UPDATES_OVERLAP}))))["wake_ups"]
    assert wakes and wakes[0]["units_requested"] > 1
    wakes = summarize(simulate(read_fleet(template), Scenario(load=_QUIET_THEN_BUSY)))["wake_ups"]
    assert wakes and [w["units_requested"] for w in wakes] == [1] * len(wakes)
    for resource in template["Resources"].values():
        config = resource.get("Properties", {}).get("StepScalingPolicyConfiguration")
        if config:
            config.update(AdjustmentType="ExactCapacity")
    wakes = summarize(simulate(read_fleet(template), Scenario(load=_QUIET_THEN_BUSY)))["wake_ups"]
    assert wakes and [w["units_requested"] for w in wakes] == [1] * len(wakes)


# --- the hand-written L1 template ----------------------------------------------------------------


def _comparable(document: dict[str, Any]) -> dict[str, Any]:
    """The simulation without logical ids (the twin's ids differ by design): alarm counts, activity sizes."""
    for row in document["timeline"]:
        row["alarms"] = len(row["alarms"])
    document["activities"] = [(a["minute"], a["from"], a["to"]) for a in document["activities"]]
    document.pop("endpoint")
    document.pop("scaling")
    unpublished = document["summary"]["reads_unpublished"]
    document["summary"]["reads_unpublished"] = sorted(tuple(metrics) for metrics in unpublished.values())
    return document


def test_the_hand_written_l1_twin_simulates_exactly_like_the_library(example_templates: dict[str, Any]) -> None:
    import aws_cdk as cdk

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import l1_app

    app = cdk.App()
    l1_app.build_app(app)
    twins = {s.stack_name: s.template for s in app.synth().stacks}
    load = [10.0] * 60 + [120.0] * 180 + [0.0] * 120 + [30.0] * 60
    outages = {G6E: [(30, 200)], "ml.p5.48xlarge": [(100, 300)], "ml.g6e.2xlarge": [(0, 420)]}
    compared = 0
    for name, template in example_templates.items():
        spec = read_fleet(template)
        mine = {t: w for t, w in outages.items() if t in spec.types}
        library = to_json(simulate(spec, Scenario(load=load, outages=mine)))
        hand_written = to_json(simulate(read_fleet(twins[name]), Scenario(load=load, outages=mine)))
        assert library["summary"]["scaling_activities"] > 0
        assert _comparable(library) == _comparable(hand_written), name
        compared += 1
    assert compared == 3


# --- the command line ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def realtime_template(example_templates: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    return _write(tmp_path_factory.mktemp("sim"), example_templates["RealtimePooledLlm"])


def test_the_command_prints_a_timeline_and_a_summary(realtime_template: str, tmp_path: Path) -> None:
    trace = _trace(tmp_path, [(0, 20), (30, 120), (200, 20)])
    code, out, err = _run_cli(
        "simulate", realtime_template, "--traffic", trace, "--outage", f"{G6E}@0m-3h", "--duration", "5h",
        "--price", f"{G6}=13.35", "--start-up", f"{G6}=15m",
    )
    assert (code, err) == (0, "")
    assert "minutes on fallback pools: 300" in out
    assert "cost: $" in out and "g6.48xlarge $" in out


def test_json_output_follows_the_documented_schema(realtime_template: str, tmp_path: Path) -> None:
    trace = _trace(tmp_path, [(0, 20), (30, 120)])
    code, out, _ = _run_cli("simulate", realtime_template, "--traffic", trace, "--duration", "90m", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["schema"] == "sagemaker-pools-simulate/1"
    assert len(document["timeline"]) == 90
    row = document["timeline"][45]
    assert isinstance(row["minute"], int) and set(row["instances"]) == {G6E, G6, P4D}
    assert isinstance(row["desired_capacity"], int) and isinstance(row["signal"], float)
    documented = (ROOT / "docs" / "simulate.md").read_text()
    for key in list(row) + list(document["summary"]) + list(document):
        assert f"`{key}`" in documented, f"{key} is not documented in docs/simulate.md"


def test_readings_are_named_on_the_command_line_and_in_the_output(realtime_template: str, tmp_path: Path) -> None:
    trace = _trace(tmp_path, [(0, 20), (30, 90)])
    outages = [arg for t in (G6E, G6, P4D) for arg in ("--outage", f"{t}@20m-2h")]
    runs = {}
    for extra in ([], ["--reading", LAUNCH_POST, "--reading", UPDATES_OVERLAP], ["--fallback", "after-timeout"]):
        code, out, err = _run_cli("simulate", realtime_template, "--traffic", trace, "--duration", "2h", "--json", *outages, *extra)
        assert (code, err) == (0, "")
        runs[tuple(extra)] = json.loads(out)
    default, named, legacy = runs.values()
    assert default["readings"] == [] and named["readings"] == [LAUNCH_POST, UPDATES_OVERLAP] and legacy["readings"] == [LAUNCH_POST]
    # The operation fails after the timeout (20 minutes), or after every pool's (60): RollingBack in the timeline.
    failed = {name: [r["minute"] for r in run["timeline"] if r["status"] == "RollingBack"] for name, run in (("default", default), ("legacy", legacy))}
    assert failed["default"][0] + 40 == failed["legacy"][0]
    assert default["summary"]["rollbacks"] == len(failed["default"])
    code, _, err = _run_cli("simulate", realtime_template, "--traffic", trace, "--reading", "optimistic")
    assert code == 2 and err.count("\n") == 1 and "optimistic" in err and LAUNCH_POST in err


def test_requests_per_second_need_a_latency_for_every_pool(realtime_template: str, tmp_path: Path) -> None:
    trace = _trace(tmp_path, [(0, 2.0)], column="requests_per_second")
    code, _, err = _run_cli("simulate", realtime_template, "--traffic", trace, "--latency", f"{G6E}=4")
    assert code == 2 and "--latency" in err and G6 in err
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"latency_ms": {"mean": 5000.0}}))
    code, out, err = _run_cli(
        "simulate", realtime_template, "--traffic", trace, "--duration", "30m", "--json",
        "--latency", f"{G6E}=4", "--latency", f"{G6}={bench}", "--latency", f"{P4D}=6",
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["timeline"][0]["concurrency"] == pytest.approx(8.0)  # 2/s x 4 s on g6e


@pytest.mark.parametrize(
    ("rows", "extra", "message"),
    [
        ("minute,requests\n0,3\n", [], "lacks a column"),
        ("minute,concurrency\n-5,3\n", [], "negative"),
        ("minute,concurrency\n0,3\n", ["--outage", "ml.g6e.12xlarge@0m-1h"], "not a pool of this endpoint"),
        ("minute,concurrency\n0,3\n", ["--outage", f"{G6E}@later"], "TYPE@START-END"),
        ("minute,concurrency\n0,3\n", ["--start-up", f"{G6}=soon"], "not a duration"),
        ("minute,concurrency\n0,abc\n", [], "not numbers"),
    ],
)
def test_bad_inputs_get_one_line_and_exit_2(realtime_template: str, tmp_path: Path, rows: str, extra: list[str], message: str) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text(rows)
    code, out, err = _run_cli("simulate", realtime_template, "--traffic", str(trace), *extra)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("sagemaker-pools: error: ") and message in err


def test_a_template_without_a_scaling_policy_gets_one_line_and_exit_2(example_templates: dict[str, Any], tmp_path: Path) -> None:
    template = copy.deepcopy(example_templates["RealtimePooledLlm"])
    template["Resources"] = {
        k: v for k, v in template["Resources"].items() if not v["Type"].startswith("AWS::ApplicationAutoScaling::")
    }
    trace = _trace(tmp_path, [(0, 3)])
    code, _, err = _run_cli("simulate", _write(tmp_path, template), "--traffic", trace)
    assert code == 2 and err.count("\n") == 1 and "no scalable target" in err
    no_endpoint = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}
    code, _, err = _run_cli("simulate", _write(tmp_path, no_endpoint, "empty.json"), "--traffic", trace)
    assert code == 2 and "no AWS::SageMaker::Endpoint" in err


def test_a_cloud_assembly_needs_a_stack_when_it_holds_several(example_outdir: Path, tmp_path: Path) -> None:
    trace = _trace(tmp_path, [(0, 3)])
    code, _, err = _run_cli("simulate", str(example_outdir), "--traffic", trace)
    assert code == 2 and "--stack" in err
    code, out, err = _run_cli("simulate", str(example_outdir), "--stack", "AsyncScaleToZero", "--traffic", trace, "--duration", "20m")
    assert (code, err) == (0, "") and "BatchEndpoint" in out


def test_plot_without_matplotlib_says_what_to_install(realtime_template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_matplotlib(name: str, *args: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_matplotlib)
    code, _, err = _run_cli("simulate", realtime_template, "--traffic", _trace(tmp_path, [(0, 3)]), "--plot", str(tmp_path / "x.png"))
    assert code == 2 and 'pip install "cdk-sagemaker-pools[sim]"' in err
    assert not (tmp_path / "x.png").exists()


def test_plot_draws_a_png(realtime_template: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "fleet.png"
    code, _, err = _run_cli(
        "simulate", realtime_template, "--traffic", _trace(tmp_path, [(0, 20), (30, 120)]), "--duration", "2h",
        "--outage", f"{G6E}@0m-1h", "--plot", str(png),
    )
    assert (code, err) == (0, "")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_the_simulator_imports_no_cdk() -> None:
    import subprocess

    code = (
        "import sys; import sagemaker_pools.metric_math, sagemaker_pools.ops.cli, sagemaker_pools.ops.simulate.plot; "
        "assert 'aws_cdk' not in sys.modules and 'jsii' not in sys.modules, 'CDK imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# --- the modelled rules, one at a time -----------------------------------------------------------


def _store_with(values: list[float | None], name: str = "M") -> tuple[Any, list[dict[str, Any]]]:
    from sagemaker_pools.ops.simulate.cloudwatch import MetricStore, Stats

    store = MetricStore()
    for minute, value in enumerate(values):
        if value is not None:
            store.publish(minute, "NS", name, {"D": "x"}, Stats.of(value))
    metric = {"Namespace": "NS", "MetricName": name, "Dimensions": [{"Name": "D", "Value": "x"}]}
    return store, [{"Id": "m1", "ReturnData": True, "MetricStat": {"Metric": metric, "Stat": "Maximum", "Period": 60}}]


# The tables of the CloudWatch user guide, "How alarm state is evaluated when data is missing"
# (5 datapoints retrieved, oldest first; 0 not breaching, X breaching, - missing), in the order
# MISSING, IGNORE, BREACHING, NOT BREACHING. "keep" is "Retain current state".
_USER_GUIDE_TABLES = [
    (3, "0-X-X", ["OK", "OK", "OK", "OK"]),
    (3, "0----", ["OK", "OK", "OK", "OK"]),
    (3, "-----", ["INSUFFICIENT_DATA", "keep", "ALARM", "OK"]),
    (3, "0XX-X", ["ALARM", "ALARM", "ALARM", "ALARM"]),
    (3, "----X", ["INSUFFICIENT_DATA", "keep", "ALARM", "OK"]),
    (3, "X----", ["ALARM", "keep", "ALARM", "OK"]),
    (2, "0-X-X", ["ALARM", "ALARM", "ALARM", "ALARM"]),
    (2, "00X0X", ["ALARM", "ALARM", "ALARM", "ALARM"]),
    (2, "0-X--", ["OK", "OK", "ALARM", "OK"]),
    (2, "----0", ["OK", "OK", "ALARM", "OK"]),
    (2, "----X", ["INSUFFICIENT_DATA", "keep", "ALARM", "OK"]),
]


@pytest.mark.parametrize(("datapoints_to_alarm", "points", "states"), _USER_GUIDE_TABLES)
def test_alarms_evaluate_missing_data_as_the_cloudwatch_user_guide_tables(
    datapoints_to_alarm: int, points: str, states: list[str]
) -> None:
    from sagemaker_pools.ops.simulate.cloudwatch import Alarm

    values: list[float | None] = [{"0": 0.0, "X": 5.0, "-": None}[c] for c in points]
    for treat, expected in zip(["missing", "ignore", "breaching", "notBreaching"], states):
        store, queries = _store_with(values)
        alarm = Alarm(
            name="a", queries=queries, period_minutes=1, evaluation_periods=3, datapoints_to_alarm=datapoints_to_alarm,
            threshold=1, comparison="GreaterThanThreshold", treat_missing_data=treat, store=store,
        )
        alarm.state = "OK" if expected != "OK" else "ALARM"  # a state to keep that differs from any answer
        before = alarm.state
        assert alarm.evaluate(len(values) - 1) == (before if expected == "keep" else expected), (points, treat)


def test_a_five_minute_alarm_combines_its_minutes_and_changes_only_when_a_period_completes() -> None:
    from sagemaker_pools.ops.simulate.cloudwatch import Alarm

    store, queries = _store_with([1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    queries[0]["MetricStat"].update(Stat="SampleCount", Period=300)
    alarm = Alarm(
        name="a", queries=queries, period_minutes=5, evaluation_periods=1, datapoints_to_alarm=1,
        threshold=4.5, comparison="GreaterThanThreshold", treat_missing_data="missing", store=store,
    )
    assert [alarm.evaluate(m) for m in range(10)] == ["INSUFFICIENT_DATA"] * 4 + ["ALARM"] * 6
    assert alarm.datapoint(0) == 5  # five one-minute samples in the period


def _step_scaler(
    adjustment_type: str, adjustment: int, *, magnitude: int | None = None, cooldown_s: int = 300, values: list[float | None], readings: frozenset[str] = frozenset()
) -> Any:
    from sagemaker_pools.ops.simulate.autoscaling import Autoscaler
    from sagemaker_pools.ops.simulate.cloudwatch import Alarm
    from sagemaker_pools.ops.simulate.template import ScalingSpec, StepPolicySpec

    store, queries = _store_with(values)
    alarm = Alarm(
        name="high", queries=queries, period_minutes=1, evaluation_periods=1, datapoints_to_alarm=1,
        threshold=1, comparison="GreaterThanOrEqualToThreshold", treat_missing_data="missing", store=store,
    )
    step = StepPolicySpec("Step", adjustment_type, ((0.0, None, adjustment),), cooldown_s, magnitude, "Maximum")
    spec = ScalingSpec("Target", "sagemaker:variant:DesiredInstanceCount", 1, 40, (), (step,))
    return Autoscaler(spec, {"high": alarm}, {"high": ("Step",)}, store, initial=10, readings=readings)


@pytest.mark.parametrize(
    ("readings", "expected"),
    [
        # +2 at once; it completes the next minute, when the 3-minute cooldown starts ("after
        # Application Auto Scaling successfully scales out"); within it the same +2 counts the first as done.
        (frozenset(), [12, 12, 12, 12, 14, 14, 14, 14]),
        # The cooldown from the request: a minute sooner each time.
        (frozenset({COOLDOWN_FROM_REQUEST}), [12, 12, 12, 14, 14, 14, 16, 16]),
    ],
)
def test_a_step_policy_in_alarm_acts_each_minute_its_cooldown_allows(readings: frozenset[str], expected: list[int]) -> None:
    scaler = _step_scaler("ChangeInCapacity", 2, cooldown_s=180, values=[5.0] * 8, readings=readings)
    desired = []
    for minute in range(8):
        scaler.step(minute)
        desired.append(scaler.desired)
    assert desired == expected


@pytest.mark.parametrize(
    ("adjustment_type", "adjustment", "magnitude", "expected"),
    [
        ("ExactCapacity", 3, None, 3),  # scale in to exactly 3
        ("PercentChangeInCapacity", 25, None, 12),  # 25 % of 10 = 2.5, rounded down
        ("PercentChangeInCapacity", 5, None, 11),  # 0.5 rounds to 1
        ("PercentChangeInCapacity", 10, 4, 14),  # 1, raised to the minimum magnitude 4
        ("PercentChangeInCapacity", -25, None, 8),  # -2.5 rounded up to -2
        ("PercentChangeInCapacity", 500, None, 40),  # capped at max capacity
    ],
)
def test_step_adjustment_types(adjustment_type: str, adjustment: int, magnitude: int | None, expected: int) -> None:
    scaler = _step_scaler(adjustment_type, adjustment, magnitude=magnitude, values=[5.0])
    scaler.step(0)
    assert scaler.desired == expected


def test_the_developer_guides_fallback_serves_sooner_than_the_launch_posts(example_templates: dict[str, Any]) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    load = [20.0] * 30 + [90.0] * 90
    first_g6 = {}
    for readings in (frozenset(), frozenset({LAUNCH_POST})):
        rows = simulate(spec, Scenario(load=load, outages={G6E: [(0, 120)]}, readings=readings)).rows
        first_g6[readings] = next(r.minute for r in rows if r.instances[G6] > 2)
    # The timeout (20 minutes in the example) spent on g6e is the whole difference.
    assert first_g6[frozenset({LAUNCH_POST})] - first_g6[frozenset()] == spec.provision_timeout_s // 60
