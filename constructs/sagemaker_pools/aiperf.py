"""The inline AIPerf workload spec of SageMaker's AI workload configurations (no CDK).

``CreateAIWorkloadConfig`` and ``AWS::SageMaker::AIWorkloadConfig`` take the workload as an
inline JSON or YAML string ``{"benchmark": {"type": "aiperf"}, "parameters": {...}}``. The
developer guide ("Set up a workload configuration for generative AI inference
recommendations") shows four parameters, ``prompt_input_tokens_mean``,
``prompt_input_tokens_stddev``, ``output_tokens_mean`` and ``output_tokens_stddev``: AIPerf's
``profile`` options with dashes turned into underscores. The guide lists no other parameter; the
load parameters here follow the same reading (``--concurrency`` -> ``concurrency``, see
:data:`PARAMETERS` and docs/aws-readings.md).

One :class:`WorkloadSpec` renders the spec for the ``BenchmarkWorkload`` construct and for
``sagemaker-pools bench --aiperf-spec``, so the workload a stack declares and the one a local
run writes are the same document. Pure Python: the ops command imports it without CDK.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ._tokens import is_unresolved
from .errors import PoolConfigError

__all__ = ["WorkloadSpec", "PARAMETERS", "ARRIVALS", "parse_inline"]

#: The arrival patterns AIPerf's ``--arrival-pattern`` takes for a rate (``constant`` = evenly spaced).
ARRIVALS = ("constant", "poisson", "gamma")

#: Why a value of the spec cannot be a deploy-time parameter (a CDK token): said by every such refusal.
SPEC_AT_SYNTH = (
    "the inline spec is one JSON document written at synth time, and a generated workload name ends in its hash; "
    "every property of an AIWorkloadConfig is create-only, so a value changed at deploy time would replace the "
    "workload under the same name, which CloudFormation cannot do (and the checks here need the value)"
)

#: spec parameter -> (AIPerf option, unit): every parameter a :class:`WorkloadSpec` writes.
PARAMETERS: Mapping[str, tuple[str, str]] = {
    "prompt_input_tokens_mean": ("--prompt-input-tokens-mean", "tokens"),
    "prompt_input_tokens_stddev": ("--prompt-input-tokens-stddev", "tokens"),
    "output_tokens_mean": ("--output-tokens-mean", "tokens"),
    "output_tokens_stddev": ("--output-tokens-stddev", "tokens"),
    "sequence_distribution": ("--sequence-distribution", "ISL|SD,OSL|SD:PERCENT;... tokens, percent of requests"),
    "prompt_prefix_pool_size": ("--prompt-prefix-pool-size", "distinct prefixes"),
    "prompt_prefix_length": ("--prompt-prefix-length", "tokens"),
    "conversation_turn_mean": ("--conversation-turn-mean", "turns"),
    "conversation_turn_stddev": ("--conversation-turn-stddev", "turns"),
    "concurrency": ("--concurrency", "requests in flight"),
    "request_rate": ("--request-rate", "requests per second"),
    "arrival_pattern": ("--arrival-pattern", "constant, poisson or gamma"),
    "arrival_smoothness": ("--arrival-smoothness", "gamma shape"),
    "benchmark_duration": ("--benchmark-duration", "seconds"),
    "request_count": ("--request-count", "requests"),
    "warmup_duration": ("--warmup-duration", "seconds"),
    "streaming": ("--streaming", "true or false"),
    "random_seed": ("--random-seed", "integer"),
    "request_timeout_seconds": ("--request-timeout-seconds", "seconds"),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    """What AIPerf sends: token lengths, load shape and stop condition (None: AIPerf's default).

    Attributes:
        input_tokens_mean / input_tokens_stddev: synthetic prompt length (normal distribution, tokens).
        output_tokens_mean / output_tokens_stddev: tokens to generate (normal distribution).
        sequence_distribution: a mix of (input, output) lengths in AIPerf's semicolon format,
            ``ISL|SD,OSL|SD:PERCENT;...`` (instead of the means).
        prefix_pool_size / prefix_length: that many distinct prefixes of that many tokens, one
            prepended to each prompt (AIPerf's prefix prompt pool; both or neither).
        turns_mean / turns_stddev: multi-turn conversations: turns per conversation (normal
            distribution), each turn carrying the history.
        concurrency: requests in flight (closed loop; with ``request_rate`` a cap).
        request_rate: open loop: requests per second.
        arrival: ``constant``, ``poisson`` or ``gamma`` (only with ``request_rate``).
        arrival_smoothness: gamma shape (1 = Poisson, < 1 burstier); only with ``arrival="gamma"``.
        duration_s: measured phase, seconds. request_count: stop after this many requests.
        warmup_s: unmeasured warm-up, seconds.
        streaming: stream responses (TTFT and ITL need it).
        seed: random seed. timeout_s: per-request timeout, seconds.
        owner: the name errors are reported under (``BenchmarkWorkload``, ``bench``).
    """

    input_tokens_mean: int | None = None
    input_tokens_stddev: float | None = None
    output_tokens_mean: int | None = None
    output_tokens_stddev: float | None = None
    sequence_distribution: str | None = None
    prefix_pool_size: int | None = None
    prefix_length: int | None = None
    turns_mean: int | None = None
    turns_stddev: float | None = None
    concurrency: int | None = None
    request_rate: float | None = None
    arrival: str | None = None
    arrival_smoothness: float | None = None
    duration_s: float | None = None
    request_count: int | None = None
    warmup_s: float | None = None
    streaming: bool = True
    seed: int | None = None
    timeout_s: float | None = None
    owner: str = "WorkloadSpec"

    def __post_init__(self) -> None:
        self._check()

    def _check(self) -> None:
        """Raise :class:`PoolConfigError` for a spec AIPerf would refuse (or that measures nothing)."""
        for field in dataclasses.fields(self):
            if field.name != "owner" and is_unresolved(getattr(self, field.name)):
                raise PoolConfigError(f"{self.owner}.{field.name}", "a deploy-time parameter (a CDK token)", f"a concrete value: {SPEC_AT_SYNTH}")
        for name in ("input_tokens_mean", "output_tokens_mean", "concurrency", "request_count", "prefix_pool_size", "prefix_length", "turns_mean"):
            value = getattr(self, name)
            if value is not None and (not _is_int(value) or value < 1):
                raise PoolConfigError(f"{self.owner}.{name}", value, "an integer >= 1")
        for name in ("input_tokens_stddev", "output_tokens_stddev", "warmup_s", "turns_stddev"):
            value = getattr(self, name)
            if value is not None and (not _is_number(value) or value < 0):
                raise PoolConfigError(f"{self.owner}.{name}", value, "a number >= 0")
        for name in ("request_rate", "duration_s", "timeout_s", "arrival_smoothness"):
            value = getattr(self, name)
            if value is not None and (not _is_number(value) or not value > 0):
                raise PoolConfigError(f"{self.owner}.{name}", value, "a number > 0")
        if self.arrival is not None and (self.arrival not in ARRIVALS or self.request_rate is None):
            raise PoolConfigError(f"{self.owner}.arrival", self.arrival, "constant, poisson or gamma, with request_rate")
        if self.arrival_smoothness is not None and self.arrival != "gamma":
            raise PoolConfigError(f"{self.owner}.arrival_smoothness", self.arrival_smoothness, "only with arrival='gamma'")
        if (self.prefix_pool_size is None) != (self.prefix_length is None):
            raise PoolConfigError(f"{self.owner}.prefix_pool_size", (self.prefix_pool_size, self.prefix_length), "prefix_pool_size and prefix_length together")
        if self.sequence_distribution is not None:
            if not isinstance(self.sequence_distribution, str) or not _SEQUENCE_DISTRIBUTION.match(self.sequence_distribution):
                raise PoolConfigError(f"{self.owner}.sequence_distribution", self.sequence_distribution, "ISL|SD,OSL|SD:PERCENT;... e.g. '550|0,150|0:70;2000|0,300|0:30'")
            if self.input_tokens_mean is not None or self.output_tokens_mean is not None:
                raise PoolConfigError(f"{self.owner}.sequence_distribution", self.sequence_distribution, "the lengths: give it or the token means, not both")
        if self.concurrency is None and self.request_rate is None:
            raise PoolConfigError(f"{self.owner}.concurrency", None, "concurrency (closed loop) or request_rate (open loop), or both")
        if (self.duration_s is None) == (self.request_count is None):
            raise PoolConfigError(
                f"{self.owner}.duration", (self.duration_s, self.request_count), "exactly one of duration and request_count: when the run stops"
            )

    def parameters(self) -> dict[str, Any]:
        """The spec's ``parameters``: only what is set, under AIPerf's option names (:data:`PARAMETERS`)."""
        values = {
            "prompt_input_tokens_mean": self.input_tokens_mean,
            "prompt_input_tokens_stddev": self.input_tokens_stddev,
            "output_tokens_mean": self.output_tokens_mean,
            "output_tokens_stddev": self.output_tokens_stddev,
            "sequence_distribution": self.sequence_distribution,
            "prompt_prefix_pool_size": self.prefix_pool_size,
            "prompt_prefix_length": self.prefix_length,
            "conversation_turn_mean": self.turns_mean,
            "conversation_turn_stddev": self.turns_stddev,
            "concurrency": self.concurrency,
            "request_rate": self.request_rate,
            "arrival_pattern": self.arrival,
            "arrival_smoothness": self.arrival_smoothness,
            "benchmark_duration": self.duration_s,
            "request_count": self.request_count,
            "warmup_duration": self.warmup_s or None,  # 0 = no warm-up: AIPerf's default, and it refuses 0
            "streaming": self.streaming,
            "random_seed": self.seed,
            "request_timeout_seconds": self.timeout_s,
        }
        return {key: value for key, value in values.items() if value is not None}

    def document(self) -> dict[str, Any]:
        """``{"benchmark": {"type": "aiperf"}, "parameters": {...}}``."""
        return {"benchmark": {"type": "aiperf"}, "parameters": self.parameters()}

    def inline(self) -> str:
        """The document as the compact JSON string ``WorkloadSpec.Inline`` takes (keys in a fixed order)."""
        return json.dumps(self.document(), separators=(",", ":"))


def parse_inline(text: str) -> dict[str, Any]:
    """An inline spec read back (JSON, or YAML when PyYAML is installed); ValueError when it is neither
    or does not declare ``benchmark.type: aiperf``."""
    try:
        document = json.loads(text)
    except ValueError:
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise ValueError("the inline spec is not JSON (YAML needs PyYAML installed)") from None
        document = yaml.safe_load(text)
    if not isinstance(document, dict) or not isinstance(document.get("benchmark"), dict) or document["benchmark"].get("type") != "aiperf":
        raise ValueError("the inline spec does not declare benchmark.type: aiperf")
    if not isinstance(document.get("parameters", {}), dict):
        raise ValueError("the inline spec's parameters are not a mapping")
    return document


_PAIR = r"\d+(\|\d+(\.\d+)?)?,\d+(\|\d+(\.\d+)?)?:\d+(\.\d+)?"
_SEQUENCE_DISTRIBUTION = re.compile(rf"^{_PAIR}(;{_PAIR})*$")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
