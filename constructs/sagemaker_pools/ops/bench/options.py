"""What one benchmark run does (:class:`BenchOptions`) and where it connects (:class:`Connection`)."""

from __future__ import annotations

import dataclasses
import os
import re

from ..errors import EXIT_USAGE, OpsError

__all__ = ["BenchOptions", "Connection", "default_processes", "HTTP_CLIENTS"]

#: The ways to send InvokeEndpoint (``BenchOptions.http``; ``--http``).
HTTP_CLIENTS = ("lean", "boto3")

_ENDPOINT_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


@dataclasses.dataclass(frozen=True)
class Connection:
    """How worker processes reach the endpoint (picklable: sent to each worker).

    Credentials are resolved once by the parent, so that every worker signs with the same
    identity and no worker prompts (SSO, MFA) or queries a metadata service on its own.
    """

    region: str
    endpoint_url: str | None
    access_key: str
    secret_key: str
    token: str | None


def default_processes(concurrency: int) -> int:
    """Worker processes for ``concurrency``: one per 8 in-flight requests, at most 2 per CPU."""
    cpus = os.cpu_count() or 1
    return max(1, min(concurrency, -(-concurrency // 8), 2 * cpus))


@dataclasses.dataclass(frozen=True)
class BenchOptions:
    """One benchmark run.

    Attributes:
        endpoint: the endpoint name.
        bodies: the request bodies (one per JSONL line), used in turn or sampled.
        concurrency: closed loop: requests in flight; open loop: the most in flight.
        rate: open loop: requests per second (None: closed loop).
        arrival: open loop: ``"uniform"`` (evenly spaced), ``"poisson"`` (random arrivals) or
            ``"gamma"`` (gamma inter-arrival times of shape ``burstiness``).
        burstiness: gamma shape for ``arrival="gamma"``: 1 is Poisson, below 1 burstier, above
            1 more even (vLLM's ``--burstiness``).
        duration_s: measured phase length (None: until ``requests`` are done).
        warmup_s: unmeasured requests before the measured phase.
        requests: stop after this many measured requests (None: run for ``duration_s``).
        stream: InvokeEndpointWithResponseStream instead of InvokeEndpoint.
        sample: pick bodies at random (seeded) instead of cycling through them.
        seed: random seed for ``sample``, random arrivals and synthetic bodies.
        content_type / accept: request headers.
        inference_component / target_variant / custom_attributes: routing headers.
        timeout_s: per-request read timeout.
        retries: retries per request (botocore standard mode); 0 counts every failure as is.
        processes: worker processes.
        tokenizer: a local Hugging Face ``tokenizer.json``: count output tokens with it when
            the response reports no count (needs the ``bench-tokenizer`` extra).
        http: how InvokeEndpoint is sent: ``"lean"`` (requests signed by botocore ahead of time,
            sent on keep-alive connections without boto3 in the loop) or ``"boto3"`` (a whole
            ``invoke_endpoint`` call each time). Streaming and proxied endpoints always use boto3.
        turns / turns_stddev: conversations (closed loop only): each thread runs conversations
            of about ``turns`` turns (normal with ``turns_stddev``, AIPerf's draw), each turn
            carrying the history (:mod:`.conversation`); 1 and 0: one request a body, no history.
        replay_offsets / replay_source / replay_skipped: ``--replay``: body ``i`` is sent
            ``replay_offsets[i]`` seconds after the start (:mod:`.replay`), at most ``concurrency``
            in flight; the run ends after the last one unless ``duration_s`` or ``requests`` ends
            it first. ``replay_skipped``: captured records left out (no input or no time).
    """

    endpoint: str
    bodies: tuple[bytes, ...]
    concurrency: int = 1
    rate: float | None = None
    arrival: str = "uniform"
    burstiness: float = 1.0
    duration_s: float | None = 30.0
    warmup_s: float = 5.0
    requests: int | None = None
    stream: bool = False
    sample: bool = False
    seed: int = 0
    content_type: str = "application/json"
    accept: str | None = None
    inference_component: str | None = None
    target_variant: str | None = None
    custom_attributes: str | None = None
    timeout_s: float = 60.0
    retries: int = 0
    processes: int = 1
    tokenizer: str | None = None
    http: str = "lean"
    turns: int = 1
    turns_stddev: float = 0.0
    replay_offsets: tuple[float, ...] | None = None
    replay_source: str | None = None
    replay_skipped: int = 0

    @property
    def open_loop(self) -> bool:
        """Requests leave on a schedule (``--rate`` or ``--replay``), not when an answer arrives."""
        return self.rate is not None or self.replay_offsets is not None

    def validate(self) -> None:
        """Raise :class:`OpsError` (exit 2) for a run that cannot work."""
        problems = []
        if not _ENDPOINT_NAME.match(self.endpoint):
            problems.append(f"endpoint name {self.endpoint!r} is not a valid SageMaker name")
        if not self.bodies:
            problems.append("no request bodies")
        if self.concurrency < 1:
            problems.append("--concurrency must be at least 1")
        if self.rate is not None and not self.rate > 0:
            problems.append("--rate must be > 0")
        if self.arrival not in ("uniform", "poisson", "gamma"):
            problems.append("--arrival must be uniform, poisson or gamma")
        if not self.burstiness > 0:
            problems.append("--burstiness must be > 0")
        if self.duration_s is None and self.requests is None and self.replay_offsets is None:
            problems.append("give --duration or --requests")
        if self.duration_s is not None and not self.duration_s > 0:
            problems.append("--duration must be > 0")
        if self.requests is not None and self.requests < 1:
            problems.append("--requests must be at least 1")
        if self.warmup_s < 0:
            problems.append("--warmup must be >= 0")
        if not self.timeout_s > 0:
            problems.append("--timeout must be > 0")
        if self.retries < 0:
            problems.append("--retries must be >= 0")
        if not 1 <= self.processes <= self.concurrency:
            problems.append(f"--processes must be 1 to --concurrency ({self.concurrency})")
        if self.turns < 1 or self.turns_stddev < 0:
            problems.append(f"--turns {self.turns} / --turns-stddev {self.turns_stddev:g}: turns must be at least 1 and the stddev >= 0")
        if self.replay_offsets is not None and len(self.replay_offsets) != len(self.bodies):
            problems.append("--replay: one time per captured body")
        if self.replay_offsets is not None and (self.rate is not None or self.turns > 1 or self.turns_stddev):
            problems.append("--replay sends the captured requests at their pace: drop --rate and --turns")
        if (self.turns > 1 or self.turns_stddev) and self.rate is not None:
            problems.append("--turns runs conversations in a closed loop (each turn waits for the answer before it): drop --rate")
        if self.http not in HTTP_CLIENTS:
            problems.append("--http must be " + " or ".join(HTTP_CLIENTS))
        if problems:
            raise OpsError("; ".join(problems), EXIT_USAGE)

    def threads_of(self, worker: int) -> int:
        """Threads of worker process ``worker``: ``concurrency`` spread evenly."""
        base, extra = divmod(self.concurrency, self.processes)
        return base + (1 if worker < extra else 0)
