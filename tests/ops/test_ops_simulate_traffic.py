"""``simulate --traffic-from ENDPOINT``: a live endpoint's traffic read from CloudWatch and replayed.

CloudWatch is botocore's Stubber (every request and response checked against the service
model). Concurrency is Little's law on ``ModelLatency``'s ``Sum``: a minute whose model time is
``c x 60 s`` had ``c`` requests in the model on average.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import Stubber
from ops_support import NOW, Result

from sagemaker_pools.ops.errors import OpsError
from sagemaker_pools.ops.simulate.cloudwatch_traffic import parse_time, window_of

ENDPOINT = "llm-prod"
G6E, G6 = "ml.g6e.48xlarge", "ml.g6.48xlarge"
START = dt.datetime(2026, 11, 28, 8, 0, tzinfo=dt.timezone.utc)
US_PER_MINUTE = 60 * 1_000_000


def _dims(variant: str = "AllTraffic", instance_type: str | None = None) -> list[dict[str, str]]:
    dims = [{"Name": "EndpointName", "Value": ENDPOINT}, {"Name": "VariantName", "Value": variant}]
    if instance_type:
        dims.append({"Name": "InstanceType", "Value": instance_type})
    return dims


def _metric(dims: list[dict[str, str]]) -> dict[str, Any]:
    return {"Namespace": "AWS/SageMaker", "MetricName": "ModelLatency", "Dimensions": dims}


def _list_metrics(cw_stub: Stubber, pages: Sequence[Sequence[list[dict[str, str]]]]) -> None:
    """ListMetrics answers ``pages`` (each a list of dimension sets), chained by NextToken."""
    for number, page in enumerate(pages):
        response: dict[str, Any] = {"Metrics": [_metric(d) for d in page]}
        request: dict[str, Any] = {
            "Namespace": "AWS/SageMaker", "MetricName": "ModelLatency", "Dimensions": [{"Name": "EndpointName", "Value": ENDPOINT}],
        }
        if number + 1 < len(pages):
            response["NextToken"] = f"list-{number + 1}"
        if number:
            request["NextToken"] = f"list-{number}"
        cw_stub.add_response("list_metrics", response, request)


def _sorted_dims(dims: list[dict[str, str]]) -> list[dict[str, str]]:
    return sorted(dims, key=lambda d: d["Name"])


def _queries(series: Sequence[list[dict[str, str]]], first: int = 0, period: int = 60) -> list[dict[str, Any]]:
    return [
        {"Id": f"m{first + i}", "MetricStat": {"Metric": _metric(_sorted_dims(d)), "Period": period, "Stat": "Sum"}, "ReturnData": True}
        for i, d in enumerate(series)
    ]


def _get_metric_data(
    cw_stub: Stubber,
    queries: list[dict[str, Any]],
    pages: Sequence[dict[str, tuple[list[dt.datetime], list[float]]]],
    *,
    start: dt.datetime = START,
    end: dt.datetime,
) -> None:
    """GetMetricData answers ``pages`` (``{id: (timestamps, values)}``), chained by NextToken."""
    for number, page in enumerate(pages):
        response: dict[str, Any] = {
            "MetricDataResults": [
                {"Id": qid, "Label": qid, "Timestamps": stamps, "Values": values,
                 "StatusCode": "PartialData" if number + 1 < len(pages) else "Complete"}
                for qid, (stamps, values) in page.items()
            ],
            "Messages": [],
        }
        request: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": start, "EndTime": end, "ScanBy": "TimestampAscending"}
        if number + 1 < len(pages):
            response["NextToken"] = f"data-{number + 1}"
        if number:
            request["NextToken"] = f"data-{number}"
        cw_stub.add_response("get_metric_data", response, request)


def _minutes(first: int, count: int, start: dt.datetime = START, step: int = 60) -> list[dt.datetime]:
    return [start + dt.timedelta(seconds=(first + k) * step) for k in range(count)]


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def template(example_templates: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / "template.json"
    path.write_text(json.dumps(example_templates["RealtimePooledLlm"]))
    return str(path)


def _simulate_json(run_cli: Callable[..., Result], template: str, *argv: str) -> tuple[Result, dict[str, Any]]:
    result = run_cli("simulate", template, "--json", *argv)
    assert result.code == 0, result.err
    return result, json.loads(result.out)


# --- which series, and how they add up -----------------------------------------------------------


def test_a_pooled_endpoint_sums_its_instance_types_and_not_its_variant_series_too(
    run_cli: Callable[..., Result], cw_stub: Stubber, template: str
) -> None:
    # ListMetrics in two pages: the variant-level series (the sum of the others) and two types
    _list_metrics(cw_stub, [[_dims(), _dims(instance_type=G6E)], [_dims(instance_type=G6)]])
    end = START + dt.timedelta(minutes=3)
    stamps = _minutes(0, 3)
    # model time per minute: g6e 30, 30, 0 concurrent requests' worth; g6 0, 10, 5 (its first minute missing)
    _get_metric_data(
        cw_stub,
        _queries([_dims(instance_type=G6), _dims(instance_type=G6E)]),  # per type, sorted by type; no variant series
        [{"m0": (stamps[1:], [10 * US_PER_MINUTE, 5 * US_PER_MINUTE]), "m1": (stamps[:2], [30 * US_PER_MINUTE, 30 * US_PER_MINUTE])}],
        end=end,
    )
    result, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert [row["concurrency"] for row in document["timeline"]] == [30.0, 40.0, 5.0]
    assert "AllTraffic/ml.g6.48xlarge 20 %" in result.err and "AllTraffic/ml.g6e.48xlarge 80 %" in result.err
    assert "concurrency peak 40.0" in result.err


def test_an_endpoint_without_pools_reads_its_variant_series(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    _list_metrics(cw_stub, [[_dims()]])
    end = START + dt.timedelta(minutes=2)
    _get_metric_data(cw_stub, _queries([_dims()]), [{"m0": (_minutes(0, 2), [12 * US_PER_MINUTE, 3 * US_PER_MINUTE])}], end=end)
    _, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert [row["concurrency"] for row in document["timeline"]] == [12.0, 3.0]


def test_variants_add_up_each_at_its_finest_shape(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    # variant "a" is pooled (variant + per-type series), "b" is not; an inference-component-style
    # series with other dimensions is not the variant's traffic and is skipped
    other = [*_dims("a", G6E), {"Name": "ContainerName", "Value": "c"}]
    _list_metrics(cw_stub, [[_dims("b"), _dims("a"), _dims("a", G6E), other]])
    end = START + dt.timedelta(minutes=1)
    stamps = _minutes(0, 1)
    _get_metric_data(
        cw_stub, _queries([_dims("a", G6E), _dims("b")]), [{"m0": (stamps, [7 * US_PER_MINUTE]), "m1": (stamps, [2 * US_PER_MINUTE])}], end=end
    )
    _, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert [row["concurrency"] for row in document["timeline"]] == [9.0]


def test_get_metric_data_pages_are_followed_and_joined(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    _list_metrics(cw_stub, [[_dims(instance_type=G6E)]])
    end = START + dt.timedelta(minutes=4)
    stamps = _minutes(0, 4)
    values = [v * US_PER_MINUTE for v in (1.0, 2.0, 3.0, 4.0)]
    _get_metric_data(
        cw_stub, _queries([_dims(instance_type=G6E)]), [{"m0": (stamps[:2], values[:2])}, {"m0": (stamps[2:], values[2:])}], end=end
    )
    _, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert [row["concurrency"] for row in document["timeline"]] == [1.0, 2.0, 3.0, 4.0]


def test_more_than_500_series_take_one_call_per_500_queries(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    variants = [_dims(f"v{k:03d}") for k in range(501)]  # sorted by name, as the reader orders variants
    _list_metrics(cw_stub, [variants[:500], variants[500:]])
    end = START + dt.timedelta(minutes=1)
    stamps = _minutes(0, 1)
    _get_metric_data(cw_stub, _queries(variants[:500]), [{f"m{k}": (stamps, [US_PER_MINUTE]) for k in range(500)}], end=end)
    _get_metric_data(cw_stub, _queries(variants[500:], first=500), [{"m500": (stamps, [US_PER_MINUTE])}], end=end)
    _, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert document["timeline"][0]["concurrency"] == pytest.approx(501.0)


# --- no data, and CloudWatch's refusals ----------------------------------------------------------


def test_an_endpoint_without_data_in_the_window_is_a_clear_failure(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    _list_metrics(cw_stub, [[_dims(instance_type=G6E)]])
    end = START + dt.timedelta(hours=1)
    _get_metric_data(cw_stub, _queries([_dims(instance_type=G6E)]), [{"m0": ([], [])}], end=end)
    result = run_cli("simulate", template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert result.code == 1 and result.out == ""
    assert result.err == (
        "sagemaker-pools: error: --traffic-from llm-prod: no ModelLatency data from 2026-11-28T08:00+00:00 to "
        "2026-11-28T09:00+00:00 (the endpoint served no request then)\n"
    )


def test_an_endpoint_cloudwatch_does_not_list_is_a_clear_failure(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    _list_metrics(cw_stub, [[]])
    result = run_cli("simulate", template, "--traffic-from", ENDPOINT, "--start", "1d")
    assert result.code == 1
    assert "CloudWatch lists no ModelLatency for this endpoint" in result.err and "check the name and the region" in result.err


def test_a_forbidden_result_is_a_failure_not_missing_data(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    _list_metrics(cw_stub, [[_dims()]])
    end = START + dt.timedelta(minutes=1)
    cw_stub.add_response(
        "get_metric_data",
        {"MetricDataResults": [{"Id": "m0", "Label": "m0", "Timestamps": [], "Values": [], "StatusCode": "Forbidden",
                                "Messages": [{"Code": "Forbidden", "Value": "not allowed"}]}]},
        {"MetricDataQueries": _queries([_dims()]), "StartTime": START, "EndTime": end, "ScanBy": "TimestampAscending"},
    )
    result = run_cli("simulate", template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end))
    assert result.code == 1 and "Forbidden: not allowed" in result.err


def test_access_denied_names_the_cloudwatch_permission(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    cw_stub.add_client_error("list_metrics", "AccessDenied", "User: arn:aws:iam::123456789012:user/dev is not authorized")
    result = run_cli("simulate", template, "--traffic-from", ENDPOINT, "--start", "1d")
    assert result.code == 1 and "(the caller needs cloudwatch:ListMetrics)" in result.err


# --- the window ----------------------------------------------------------------------------------


def test_times_read_as_iso_8601_now_or_a_duration_ago() -> None:
    assert parse_time("now", "--end", NOW) == NOW
    assert parse_time("24h", "--start", NOW) == NOW - dt.timedelta(hours=24)
    assert parse_time("2d", "--start", NOW) == NOW - dt.timedelta(days=2)
    assert parse_time("2026-11-28T08:00Z", "--start", NOW) == START
    assert parse_time("2026-11-28T08:00", "--start", NOW) == START  # no offset: UTC
    assert parse_time("2026-11-28T09:00+01:00", "--start", NOW) == START
    with pytest.raises(OpsError, match=r"--start: 'yesterday' is not a time") as caught:
        parse_time("yesterday", "--start", NOW)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("days_ago", "period"),
    [(0.5, 60), (15, 60), (15.01, 300), (63, 300), (63.5, 3600), (455, 3600)],
)
def test_the_period_is_the_finest_cloudwatch_keeps_for_the_start(days_ago: float, period: int) -> None:
    window = window_of(NOW - dt.timedelta(days=days_ago), NOW, NOW)
    assert window.period_s == period
    assert window.start.timestamp() % period == 0 and window.end.timestamp() % period == 0


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (NOW - dt.timedelta(days=456), NOW, "is 456 days ago: CloudWatch keeps endpoint metrics for 455 days"),
        (NOW - dt.timedelta(hours=1), NOW + dt.timedelta(minutes=5), "is in the future"),
        (NOW - dt.timedelta(hours=1), NOW - dt.timedelta(hours=2), "is not before --end"),
        (NOW - dt.timedelta(minutes=3, seconds=30), NOW - dt.timedelta(minutes=3, seconds=10), "less than one 60 s period"),
        (NOW - dt.timedelta(days=20, minutes=4), NOW - dt.timedelta(days=20, minutes=1), "less than one 300 s period"),
    ],
)
def test_a_window_cloudwatch_cannot_answer_is_refused(start: dt.datetime, end: dt.datetime, message: str) -> None:
    with pytest.raises(OpsError, match=message) as caught:
        window_of(start, end, NOW)
    assert caught.value.exit_code == 2


def test_a_window_older_than_15_days_is_read_at_5_minute_periods(run_cli: Callable[..., Result], cw_stub: Stubber, template: str) -> None:
    start = dt.datetime(2026, 11, 9, 8, 0, tzinfo=dt.timezone.utc)  # 20 days before NOW
    end = start + dt.timedelta(minutes=15)
    _list_metrics(cw_stub, [[_dims(instance_type=G6E)]])
    _get_metric_data(
        cw_stub, _queries([_dims(instance_type=G6E)], period=300),
        [{"m0": (_minutes(0, 3, start, 300), [v * 5 * US_PER_MINUTE for v in (10.0, 20.0, 30.0)])}], start=start, end=end,
    )
    result, document = _simulate_json(run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(start), "--end", _iso(end))
    # each 5-minute value holds for its 5 minutes, and the run covers the whole window
    assert [row["concurrency"] for row in document["timeline"]] == [10.0] * 5 + [20.0] * 5 + [30.0] * 5
    assert "5-minute data" in result.err


# --- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--traffic", "t.csv", "--start", "1d"], "--start goes with --traffic-from ENDPOINT"),
        (["--traffic", "t.csv", "--traffic-out", "o.csv"], "--traffic-out goes with --traffic-from ENDPOINT"),
        (["--traffic-from", ENDPOINT], "--traffic-from needs --start"),
        (["--traffic-from", ENDPOINT, "--traffic", "t.csv", "--start", "1d"], "not allowed with argument"),
        (["--traffic-from", "llm_prod", "--start", "1d"], "is not a SageMaker name"),
        (["--traffic-from", ENDPOINT, "--start", "tomorrow"], "--start: 'tomorrow' is not a time"),
        (["--start", "1d"], "one of the arguments --traffic --traffic-from is required"),
    ],
)
def test_bad_traffic_arguments_get_one_line_and_exit_2(
    run_cli: Callable[..., Result], template: str, argv: list[str], message: str
) -> None:
    result = run_cli("simulate", template, *argv)  # no CloudWatch call is stubbed: none is made
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1, result.err


def test_a_replay_from_cloudwatch_scales_the_candidate_and_repeats_offline(
    run_cli: Callable[..., Result], cw_stub: Stubber, template: str, tmp_path: Path
) -> None:
    """What the candidate would have done: 40 concurrent requests for 30 minutes, then 80 for 2.5 hours."""
    _list_metrics(cw_stub, [[_dims(), _dims(instance_type=G6E), _dims(instance_type=G6)]])
    minutes = 180
    end = START + dt.timedelta(minutes=minutes)
    stamps = _minutes(0, minutes)
    load = [40.0] * 30 + [80.0] * 150
    g6e = [0.75 * c * US_PER_MINUTE for c in load]  # the live fleet served a quarter on g6
    g6 = [0.25 * c * US_PER_MINUTE for c in load]
    half = minutes // 2
    _get_metric_data(
        cw_stub, _queries([_dims(instance_type=G6), _dims(instance_type=G6E)]),
        [{"m0": (stamps[:half], g6[:half]), "m1": (stamps[:half], g6e[:half])},
         {"m0": (stamps[half:], g6[half:]), "m1": (stamps[half:], g6e[half:])}],
        end=end,
    )
    saved = tmp_path / "yesterday.csv"
    _, live = _simulate_json(
        run_cli, template, "--traffic-from", ENDPOINT, "--start", _iso(START), "--end", _iso(end), "--traffic-out", str(saved)
    )
    assert [row["concurrency"] for row in live["timeline"]] == pytest.approx(load)
    # the candidate's policy: 2 instances at 32 each; 80 concurrent requests is 1.25 of them, so one scale-out to 4
    assert [(a["from"], a["to"]) for a in live["activities"]] == [(2, 4)]
    # the saved trace replays to the same document, without AWS
    assert saved.read_text().splitlines()[:2] == ["minute,concurrency", "0,40.0"]
    _, offline = _simulate_json(run_cli, template, "--traffic", str(saved))
    assert offline == live
