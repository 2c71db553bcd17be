"""Small pure pieces: percentiles, event-stream framing, token counts, prompt lengths, literals, error mapping."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, NoCredentialsError, ReadTimeoutError
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_pools.ops.bench.bodies import prompt_chars
from sagemaker_pools.ops.bench.eventstream import exception_event, payload_part
from sagemaker_pools.ops.bench.invoke import error_kind
from sagemaker_pools.ops.bench.stats import percentile, summarize
from sagemaker_pools.ops.bench.tokens import count_stream_tokens, count_tokens
from sagemaker_pools.ops.codegen import camel_case, literal, snake_case
from sagemaker_pools.ops.errors import OpsError, explain
from sagemaker_pools.ops.migrate import default_config_name
from sagemaker_pools.ops.names import NAME_PATTERN

# -- percentiles -------------------------------------------------------------------------------


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=200), st.integers(1, 100))
def test_nearest_rank_percentile_is_a_measured_value_with_p_percent_at_or_below(values: list[float], p: int) -> None:
    ordered = sorted(values)
    value = percentile(ordered, p)
    assert value in ordered
    assert sum(v <= value for v in ordered) >= p / 100 * len(ordered)
    assert sum(v < value for v in ordered) < p / 100 * len(ordered)  # the smallest such value


def test_percentile_examples() -> None:
    hundred = [float(i) for i in range(1, 101)]
    assert [percentile(hundred, p) for p in (50, 90, 99, 100)] == [50.0, 90.0, 99.0, 100.0]
    assert percentile([3.0], 99) == 3.0
    # where the seed article's sorted[round((n - 1) * p)] falls a rank short (docs/ops.md)
    values = [float(i) for i in range(1, 161)]
    assert percentile(values, 99) == 159.0 and values[round(159 * 0.99)] == 158.0
    assert summarize([0.010, 0.020, 0.030], 1000) == pytest.approx(
        {"count": 3, "mean": 20.0, "min": 10.0, "p50": 20.0, "p90": 30.0, "p95": 30.0, "p99": 30.0, "max": 30.0}
    )
    # no values: the same fields as a summary of some, each None but the count
    assert summarize([]) == {**dict.fromkeys(summarize([1.0]), None), "count": 0}
    with pytest.raises(ValueError) as refused:
        percentile([], 50)
    assert str(refused.value) == "percentile of no values"


@pytest.mark.parametrize("p", [0, -1, 100.5, 101])
def test_a_percentile_outside_0_to_100_is_refused(p: float) -> None:
    # (0 has no nearest rank; above 100 the rank is past the last value)
    with pytest.raises(ValueError) as refused:
        percentile([1.0, 2.0], p)
    assert str(refused.value) == f"percentile {p} outside (0, 100]"


# -- event stream ------------------------------------------------------------------------------


def test_event_stream_messages_decode_with_botocore() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(payload_part(b"data: hello\n\n") + exception_event("ModelStreamError", "boom", "E1"))
    first, second = list[Any](buffer)
    assert first.headers == {":event-type": "PayloadPart", ":message-type": "event", ":content-type": "application/octet-stream"}
    assert first.payload == b"data: hello\n\n"
    assert second.headers[":exception-type"] == "ModelStreamError"
    assert second.payload == b'{"Message": "boom", "ErrorCode": "E1"}'


@given(st.binary(max_size=2000))
def test_any_payload_round_trips(data: bytes) -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(payload_part(data))
    (message,) = list(buffer)
    assert message.payload == data


# -- token counts and prompt lengths -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "tokens"),
    [
        (b'{"choices": [{"text": "x"}], "usage": {"prompt_tokens": 9, "completion_tokens": 42}}', 42),
        (b'{"content": [], "usage": {"input_tokens": 9, "output_tokens": 7}}', 7),
        (b'[{"generated_text": "x", "details": {"generated_tokens": 5}}, {"details": {"generated_tokens": 6}}]', 11),
        (b'{"generated_text": "x", "generated_tokens": 3}', 3),
        (b'{"generated_text": "no count here"}', None),
        (b"not json, but tokens", None),
    ],
)
def test_token_counts(body: bytes, tokens: int | None) -> None:
    assert count_tokens(body) == tokens


def test_stream_token_counts_take_the_last_reported_count() -> None:
    tgi = [b'data: {"token": {"text": "a"}}\n\n', b'data: {"token": {"text": "b"}, "details": {"generated_tokens": 2}}\n\n']
    assert count_stream_tokens(tgi) == 2
    openai = [b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n', b'data: {"choices": [], "usage": {"completion_tokens": 17}}\n\ndata: [DONE]\n\n']
    assert count_stream_tokens(openai) == 17
    split = [b'data: {"choices": [], "usage": {"comple', b'tion_tokens": 4}}\n\n']  # a line split across parts
    assert count_stream_tokens(split) == 4
    assert count_stream_tokens([b"plain text chunk"]) is None


@pytest.mark.parametrize(
    ("body", "chars"),
    [
        (b'{"inputs": "hello"}', 5),
        (b'{"prompt": ["ab", "cde"]}', 5),
        (b'{"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "text", "text": "abc"}]}]}', 5),
        (b'[{"inputs": "ab"}, {"inputs": "cd"}]', 4),
        (b'{"features": [1, 2, 3]}', None),
        (b"1,2,3", None),
    ],
)
def test_prompt_chars(body: bytes, chars: int | None) -> None:
    assert prompt_chars(body) == chars


# -- generated code ----------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(_json_values)
def test_literals_evaluate_to_their_value(value: Any) -> None:
    assert ast.literal_eval(literal(value, indent=8)) == value


def test_identifiers() -> None:
    assert camel_case("my-llm.endpoint") == "MyLlmEndpoint"
    assert camel_case("70b-llm") == "Generated70bLlm"
    assert snake_case("p4d.24xlarge") == "p4d_24xlarge"
    assert snake_case("class") == "class_"
    assert snake_case("48xlarge") == "value_48xlarge"


def test_default_config_names_are_valid_and_at_most_63_characters() -> None:
    import datetime as dt

    now = dt.datetime(2026, 11, 29, 10, 15, tzinfo=dt.timezone.utc)
    assert default_config_name("my-config", now) == "my-config-pools-20261129101500"
    long = default_config_name("x" * 63, now)
    assert len(long) == 63 and NAME_PATTERN.match(long)


# -- error mapping -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "start", "code"),
    [
        (NoCredentialsError(), "no AWS credentials found", 1),
        (EndpointConnectionError(endpoint_url="https://api.sagemaker.xx-east-9.amazonaws.com"), "cannot reach the AWS endpoint", 1),
        (ReadTimeoutError(endpoint_url="https://x"), "AWS did not answer in time", 1),
        (ConnectTimeoutError(endpoint_url="https://x"), "cannot reach the AWS endpoint", 1),
        (RuntimeError("boom\nsecond line"), "unexpected error: RuntimeError: boom second line (run with --debug", 1),
        (OpsError("custom", 2), "custom", 2),
    ],
)
def test_explain(exc: BaseException, start: str, code: int) -> None:
    error = explain(exc, max_attempts=3)
    assert error.message.startswith(start) and "\n" not in error.message
    assert error.exit_code == code


def test_error_kinds() -> None:
    assert error_kind(ReadTimeoutError(endpoint_url="x")) == "timeout"
    assert error_kind(ConnectTimeoutError(endpoint_url="x")) == "connect-timeout"
    assert error_kind(EndpointConnectionError(endpoint_url="x")) == "connection"
    assert error_kind(ValueError("x")) == "ValueError"


def test_an_unwritable_plot_path_is_one_error_line_and_the_figure_is_closed(tmp_path: Path) -> None:
    from sagemaker_pools.ops.plotting import pyplot, save_figure

    plt = pyplot("sim")
    figure = plt.figure()
    path = str(tmp_path / "no-such-folder" / "plot.png")
    with pytest.raises(OpsError) as err:
        save_figure(plt, figure, path, dpi=50)
    assert str(err.value) == f"cannot write --plot {path}: No such file or directory"
    assert not plt.fignum_exists(figure.number)
    written = tmp_path / "plot.png"
    save_figure(plt, plt.figure(), str(written), dpi=50)
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
