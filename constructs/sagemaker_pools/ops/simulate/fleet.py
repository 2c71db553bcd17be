"""The SageMaker side: instances on pools, provisioning with fallback, copies, load and the metrics published.

One :class:`Fleet` per simulated endpoint. Each minute the engine calls :meth:`Fleet.step` with
the desired capacity Application Auto Scaling set (instances of a variant, or copies of an
inference component) and the offered load; the fleet provisions or removes capacity, spreads the
load, and publishes the minute's metrics into the :class:`~.cloudwatch.MetricStore`.

The rules, each with its source in ``docs/simulate.md``:

* a new instance is asked of the pool of priority 1; a type without capacity (an outage) is
  retried for the provisioning timeout, then the next pool is tried (after the last, the first
  again), or, with ``fallback="immediate"``, the next pool is tried at once; an instance serves
  after its type's start-up time;
* scale-in removes capacity that is not serving yet first, then the lowest priority first;
* inference components: copies go onto instances with room, highest priority first; managed
  instance scaling adds instances for copies that do not fit and removes instances left without
  copies, within its min / max instance count; a copy serves after the copy load time;
* least-outstanding-requests routing spreads the concurrency so that every serving instance (copy)
  holds the same share of its type's ``max_concurrency``; what exceeds the fleet's capacity queues.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .cloudwatch import MetricStore, Stats
from .template import FleetSpec

__all__ = ["Fleet", "Snapshot", "Unit"]

_INVOCATIONS = "AWS/SageMaker"
_ENDPOINTS = "/aws/sagemaker/Endpoints"
_COMPONENTS = "/aws/sagemaker/InferenceComponents"


@dataclass
class Unit:
    """An instance (or a copy) that exists: serving from minute ``ready_at`` on."""

    instance_type: str
    priority: int
    ready_at: int
    seq: int
    host: "Unit | None" = None  # a copy's instance


@dataclass
class _Request:
    """An instance being provisioned: trying pool ``index`` since minute ``since``."""

    index: int
    since: int
    seq: int


@dataclass
class Snapshot:
    """What the fleet looked like in one minute (the timeline's raw material)."""

    in_service: dict[str, int]
    pending: dict[str, int]
    copies_in_service: dict[str, int]
    copies_pending: int
    concurrency: float
    served: float
    queued: float
    per_unit_load: dict[str, float] = field(default_factory=dict)
    backlog: float | None = None


class Fleet:
    """The endpoint's instances (and copies), driven minute by minute.

    Args:
        spec: what the template defines.
        start_up: minutes from launch to serving, per instance type.
        copy_start_up: minutes for a copy to load on a serving instance.
        max_concurrency: concurrent requests one instance (copy) of each type serves.
        outages: ``{type: [(start, end), ...]}`` minutes without capacity.
        latency_s: seconds per request by type (requests per minute from concurrency), if known.
        fallback: ``"after-timeout"`` (the launch post's reading) or ``"immediate"`` (the
            developer guide's: the next pool on an insufficient-capacity error).
    """

    def __init__(
        self,
        spec: FleetSpec,
        *,
        start_up: Mapping[str, int],
        copy_start_up: int,
        max_concurrency: Mapping[str, float],
        outages: Mapping[str, Sequence[tuple[int, int]]],
        latency_s: Mapping[str, float],
        fallback: str = "after-timeout",
    ) -> None:
        self.spec = spec
        self.immediate = fallback == "immediate"
        self.types = spec.types
        self.priority = {p.instance_type: p.priority for p in spec.pools}
        self.start_up = dict(start_up)
        self.copy_start_up = copy_start_up
        self.max_concurrency = dict(max_concurrency)
        self.outages = {t: list(w) for t, w in outages.items()}
        self.latency_s = dict(latency_s)
        self.timeout = max(1, math.ceil(spec.provision_timeout_s / 60))
        self.component = spec.component
        self.instances: list[Unit] = []
        self.copies: list[Unit] = []
        self.requests: list[_Request] = []
        self._seq = 0
        self._minute = 0
        self.variant_dims = {"EndpointName": spec.endpoint_name, "VariantName": spec.variant_name}
        self.component_dims = {"InferenceComponentName": self.component.name} if self.component else {}

    # --- capacity -------------------------------------------------------------------------

    def has_capacity(self, instance_type: str, minute: int) -> bool:
        """False while ``instance_type`` is in an outage."""
        return not any(start <= minute < end for start, end in self.outages.get(instance_type, ()))

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def start(self, initial_units: int) -> None:
        """The fleet at minute 0: ``initial_units`` serving, each on the first pool with capacity."""
        instances = initial_units if self.component is None else self.spec.initial_instance_count
        for _ in range(instances):
            self._initial_instance()
        if self.component is None:
            return
        for _ in range(initial_units):
            host = self._host_with_room()
            if host is None and self._instance_total() < self._max_instances():
                self._initial_instance()
                host = self._host_with_room()
            if host is None:
                break
            self.copies.append(Unit(host.instance_type, host.priority, 0, self._next_seq(), host))

    def _initial_instance(self) -> None:
        for instance_type in self.types:
            if self.has_capacity(instance_type, 0):
                self.instances.append(Unit(instance_type, self.priority[instance_type], 0, self._next_seq()))
                return
        request = _Request(0, 0, self._next_seq())
        self.requests.append(request)

    def _provision(self, minute: int, requests: Sequence[_Request]) -> None:
        for request in list(requests):
            while True:
                instance_type = self.types[request.index]
                if self.has_capacity(instance_type, minute):
                    self.requests.remove(request)
                    ready = minute + self.start_up.get(instance_type, 10)
                    self.instances.append(Unit(instance_type, self.priority[instance_type], ready, request.seq))
                    break
                if self.immediate:
                    # The next pool at once; after a pass over every pool, wait for the next minute.
                    request.index = (request.index + 1) % len(self.types)
                    request.since = minute
                    if request.index == 0:
                        break
                    continue
                if minute - request.since >= self.timeout and len(self.types) > 1:
                    request.index = (request.index + 1) % len(self.types)
                    request.since = minute
                    continue
                break

    def _instance_total(self) -> int:
        return len(self.instances) + len(self.requests)

    def _max_instances(self) -> int:
        if self.spec.managed_scaling is not None:
            return self.spec.managed_scaling[1]
        return 10**6

    def _slots(self, instance_type: str) -> int:
        return self.component.copies_per_instance.get(instance_type, 1) if self.component else 1

    def _host_with_room(self) -> Unit | None:
        load: dict[int, int] = {}
        for copy in self.copies:
            if copy.host is not None:
                load[copy.host.seq] = load.get(copy.host.seq, 0) + 1
        hosts = sorted(self.instances, key=lambda u: (u.priority, u.ready_at, u.seq))
        for host in hosts:
            if load.get(host.seq, 0) < self._slots(host.instance_type):
                return host
        return None

    def _remove_instances(self, count: int) -> None:
        """Remove ``count`` instances: requests first, then not-yet-serving, then lowest priority."""
        for _ in range(count):
            if self.requests:
                self.requests.pop()
                continue
            if not self.instances:
                return
            victim = max(self.instances, key=lambda u: (u.ready_at > self._minute, u.priority, u.seq))
            self.instances.remove(victim)
            self.copies = [c for c in self.copies if c.host is not victim]

    def _apply_instances(self, minute: int, desired: int) -> None:
        total = self._instance_total()
        if desired > total:
            new = [_Request(0, minute, self._next_seq()) for _ in range(desired - total)]
            self.requests.extend(new)
            self._provision(minute, new)
        elif desired < total:
            self._remove_instances(total - desired)

    def _apply_copies(self, minute: int, desired: int) -> None:
        # Fewer copies: loading ones first, then the lowest priority.
        while len(self.copies) > desired:
            victim = max(self.copies, key=lambda c: (c.ready_at > minute, c.priority, c.seq))
            self.copies.remove(victim)
        # More copies: onto instances with room (serving or starting), highest priority first.
        while len(self.copies) < desired:
            host = self._host_with_room()
            if host is None:
                break
            ready = max(minute, host.ready_at) + self.copy_start_up
            self.copies.append(Unit(host.instance_type, host.priority, ready, self._next_seq(), host))
        waiting = desired - len(self.copies)
        # Managed instance scaling: instances for copies that do not fit, none left idle.
        floor, ceiling = self.spec.managed_scaling or (0, 10**6)
        expected_slots = sum(self._slots(self.types[r.index]) for r in self.requests)
        while waiting > expected_slots and self._instance_total() < ceiling:
            request = _Request(0, minute, self._next_seq())
            self.requests.append(request)
            expected_slots += self._slots(self.types[0])
        while self.requests and expected_slots - self._slots(self.types[self.requests[-1].index]) >= waiting:
            expected_slots -= self._slots(self.types[self.requests[-1].index])
            self.requests.pop()
        hosting = {c.host.seq for c in self.copies if c.host is not None}
        idle = [u for u in self.instances if u.seq not in hosting]
        idle.sort(key=lambda u: (u.priority, u.seq), reverse=True)
        for instance in idle:
            if self._instance_total() <= floor or waiting > 0:
                break
            self.instances.remove(instance)

    # --- one minute -------------------------------------------------------------------------

    def step(self, minute: int, desired: int, concurrency: float, store: MetricStore) -> Snapshot:
        """Advance to ``minute`` with ``desired`` capacity and ``concurrency`` offered; publish the metrics."""
        self._minute = minute
        self._provision(minute, self.requests)
        if self.component is None:
            self._apply_instances(minute, desired)
        else:
            self._apply_copies(minute, desired)
            self._provision(minute, self.requests)
            self._apply_copies(minute, desired)
        return self._serve(minute, concurrency, store)

    def serving_units(self, minute: int) -> dict[str, int]:
        """Serving instances (copies for a component) by type."""
        units = self.copies if self.component else self.instances
        counts = {t: 0 for t in self.types}
        for u in units:
            if u.ready_at <= minute and (u.host is None or u.host.ready_at <= minute):
                counts[u.instance_type] += 1
        return counts

    def _serve(self, minute: int, concurrency: float, store: MetricStore) -> Snapshot:
        instances = {t: 0 for t in self.types}
        pending = {t: 0 for t in self.types}
        for u in self.instances:
            if u.ready_at <= minute:
                instances[u.instance_type] += 1
            else:
                pending[u.instance_type] += 1
        for r in self.requests:
            pending[self.types[r.index]] += 1
        units = self.serving_units(minute) if self.component else instances
        async_cap = self.spec.async_max_concurrent
        weight = {t: self.max_concurrency.get(t, float(async_cap) if async_cap else 1.0) for t in self.types}
        capacity = sum(n * weight[t] for t, n in units.items())
        bounded = all(t in self.max_concurrency or async_cap for t, n in units.items() if n)
        if capacity > 0:
            served = min(concurrency, capacity) if bounded else concurrency
            per_unit = {t: concurrency * weight[t] / capacity for t, n in units.items() if n}
        else:
            served, per_unit = 0.0, {}
        queued = concurrency - served
        copies_pending = len(self.copies) - sum(units.values()) if self.component else 0
        snapshot = Snapshot(instances, pending, units if self.component else {}, copies_pending, concurrency, served, queued, per_unit)
        self._publish(minute, snapshot, units, weight, store)
        return snapshot

    def _requests_per_minute(self, in_flight: float, instance_type: str | None) -> float:
        latency = self.latency_s.get(instance_type or "", None) if instance_type else None
        if latency:
            return in_flight * 60.0 / latency
        return in_flight

    def _publish(self, minute: int, snap: Snapshot, units: Mapping[str, int], weight: Mapping[str, float], store: MetricStore) -> None:
        per_unit = snap.per_unit_load

        def emit(namespace: str, name: str, dims: Mapping[str, str], value: float, count: float = 1.0) -> None:
            if store.reads(namespace, name):
                store.publish(minute, namespace, name, dims, Stats.of(value, count))

        variant = self.variant_dims
        component = self.component_dims
        all_instances = sum(snap.in_service.values())
        # Instance counts per type, two ways: InstanceCount, and one CPUUtilization sample per instance.
        for t, n in snap.in_service.items():
            if not n:
                continue
            typed = {**variant, "InstanceType": t}
            load = per_unit.get(t, 0.0) if not self.component else 0.0
            utilization = min(100.0, 100.0 * load / weight[t]) if weight[t] else 0.0
            for namespace in (_INVOCATIONS, _ENDPOINTS):
                emit(namespace, "InstanceCount", typed, float(n))
            for name in ("CPUUtilization", "GPUUtilization", "MemoryUtilization"):
                emit(_ENDPOINTS, name, typed, utilization, n)
                emit(_ENDPOINTS, name, variant, utilization, n)
        if all_instances:
            for namespace in (_INVOCATIONS, _ENDPOINTS):
                emit(namespace, "InstanceCount", variant, float(all_instances))
        # Load: concurrency per serving container, invocations.
        metric = "ConcurrentRequestsPerCopy" if self.component else "ConcurrentRequestsPerModel"
        base = component if self.component else variant
        total_requests = 0.0
        for t, n in units.items():
            if not n:
                continue
            load = per_unit.get(t, 0.0)
            typed = {**base, "InstanceType": t}
            emit(_INVOCATIONS, metric, typed, load, n)
            emit(_INVOCATIONS, metric, base, load, n)
            served_share = min(load, weight[t]) if t in self.max_concurrency else load
            requests = self._requests_per_minute(served_share * n, t)
            total_requests += requests
            emit(_INVOCATIONS, "Invocations", typed, requests)
            per = "InvocationsPerCopy" if self.component else "InvocationsPerInstance"
            emit(_INVOCATIONS, per, typed, requests / n)
            if self.component:
                emit(_COMPONENTS, "CPUUtilizationNormalized", typed, min(100.0, 100.0 * load / weight[t]), n)
                emit(_COMPONENTS, "CPUUtilizationNormalized", base, min(100.0, 100.0 * load / weight[t]), n)
        serving = sum(units.values())
        if serving:
            emit(_INVOCATIONS, "Invocations", base, total_requests)
            per = "InvocationsPerCopy" if self.component else "InvocationsPerInstance"
            emit(_INVOCATIONS, per, base, total_requests / serving)
        if self.component and serving == 0 and snap.concurrency > 0:
            failures = max(1.0, self._requests_per_minute(snap.concurrency, self.types[0]))
            emit(_INVOCATIONS, "NoCapacityInvocationFailures", component, failures)
            emit(_INVOCATIONS, "NoCapacityInvocationFailures", variant, failures)
        if self.spec.async_max_concurrent is not None:
            # ApproximateBacklogSize counts requests being processed or yet to be processed.
            endpoint = {"EndpointName": self.spec.endpoint_name}
            backlog = snap.concurrency
            snap.backlog = backlog
            emit(_INVOCATIONS, "ApproximateBacklogSize", endpoint, backlog)
            if all_instances:
                emit(_INVOCATIONS, "ApproximateBacklogSizePerInstance", endpoint, backlog / all_instances)
            emit(_INVOCATIONS, "HasBacklogWithoutCapacity", endpoint, 1.0 if backlog > 0 and not all_instances else 0.0)
