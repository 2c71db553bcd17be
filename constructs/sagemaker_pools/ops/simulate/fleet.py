"""The SageMaker side: instances on pools, provisioning with fallback, copies, load and the metrics published.

One :class:`Fleet` per simulated endpoint. Each minute the engine calls :meth:`Fleet.step` with
the desired capacity Application Auto Scaling set (instances of a variant, or copies of an
inference component) and the offered load; the fleet provisions or removes capacity, spreads the
load, and publishes the minute's metrics into the :class:`~.cloudwatch.MetricStore`.

The rules, each with its source in ``docs/simulate.md``:

* a new instance is asked of the pools in priority order, and a pool without capacity (an
  outage) gives way to the next at once; the provisioning timeout counts the whole operation, and
  when it passes with instances still missing, the operation fails and the endpoint rolls back to
  the capacity it had before (``RollingBack`` for that minute). With the ``launch-post`` reading a
  pool is retried for the whole timeout before the next, and the operation fails after the last
  pool's. No pool is tried twice in one operation's order (no wrap-around). An instance serves
  after its type's start-up time;
* the endpoint is ``Updating`` while capacity it was asked for is not serving yet;
* scale-in removes capacity that is not serving yet first, then the lowest priority first;
* inference components: copies go onto instances with room, highest priority first; managed
  instance scaling adds instances for copies that do not fit and releases instances left without
  copies (``IDLE_RELEASE``; or, with ``CONSOLIDATION``, after its cooldown, by packing copies onto
  fewer instances, ``MaximumStepSize`` at a time), within its min / max instance count; a copy
  serves after the copy load time;
* least-outstanding-requests routing spreads the concurrency so that every serving instance (copy)
  holds the same share of its type's ``max_concurrency``; what exceeds the fleet's capacity queues.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .cloudwatch import Channel, MetricStore
from .readings import IDLE_COPIES_MISSING, IDLE_RELEASE_AFTER_COOLDOWN, INSTANCE_COUNT_METRIC, LAUNCH_POST
from .template import FleetSpec

__all__ = ["Fleet", "Snapshot", "Unit", "IN_SERVICE", "UPDATING", "ROLLING_BACK"]

#: DescribeEndpoint's EndpointStatus values the simulation shows (API reference, ``EndpointStatus``).
IN_SERVICE = "InService"
UPDATING = "Updating"
ROLLING_BACK = "RollingBack"

_INVOCATIONS = "AWS/SageMaker"
_ENDPOINTS = "/aws/sagemaker/Endpoints"
_COMPONENTS = "/aws/sagemaker/InferenceComponents"

#: The utilization metrics of an instance (``/aws/sagemaker/Endpoints``), one sample per instance.
_UTILIZATION = ("CPUUtilization", "GPUUtilization", "MemoryUtilization")

#: A metric the fleet publishes: namespace, name, dimension scope and instance type (or None).
_ChannelKey = tuple[str, str, str, "str | None"]


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
    """An instance being provisioned since minute ``started``: on pool ``index`` since minute ``since``."""

    index: int
    since: int
    seq: int
    started: int


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
    status: str = IN_SERVICE
    rolled_back_to: int | None = None


class Fleet:
    """The endpoint's instances (and copies), driven minute by minute.

    Args:
        spec: what the template defines.
        start_up: minutes from launch to serving, per instance type.
        copy_start_up: minutes for a copy to load on a serving instance.
        max_concurrency: concurrent requests one instance (copy) of each type serves.
        outages: ``{type: [(start, end), ...]}`` minutes without capacity.
        latency_s: seconds per request by type (requests per minute from concurrency), if known.
        readings: the named readings in force (:mod:`.readings`).
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
        readings: frozenset[str] = frozenset(),
    ) -> None:
        self.spec = spec
        self.launch_post = LAUNCH_POST in readings
        self.idle_copies_missing = IDLE_COPIES_MISSING in readings
        self.idle_release_waits = IDLE_RELEASE_AFTER_COOLDOWN in readings
        self.publishes_instance_count = INSTANCE_COUNT_METRIC in readings
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
        self._desired = 0
        # The capacity (instances, or copies) at the last minute the endpoint was InService: what a
        # failed operation rolls back to; and that minute's last endpoint operation, for the
        # managed scale-in cooldown.
        self._stable = 0
        self._last_operation = 0
        self.variant_dims = {"EndpointName": spec.endpoint_name, "VariantName": spec.variant_name}
        self.component_dims = {"InferenceComponentName": self.component.name} if self.component else {}
        # Each published metric bound to its series in the current store (see _bind).
        self._channel_store: MetricStore | None = None
        self._channels: dict[_ChannelKey, Channel | None] = {}
        self._groups: dict[tuple[str, tuple[str, ...], str, str], tuple[Channel, ...]] = {}

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
        self._desired = initial_units
        for _ in range(instances):
            self._initial_instance()
        self._stable = len(self.instances)
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
        self._stable = len(self.copies)

    def _initial_instance(self) -> None:
        for instance_type in self.types:
            if self.has_capacity(instance_type, 0):
                self.instances.append(Unit(instance_type, self.priority[instance_type], 0, self._next_seq()))
                return
        self.requests.append(self._request(0))

    def _request(self, minute: int) -> _Request:
        return _Request(0, minute, self._next_seq(), minute)

    def _provision(self, minute: int, requests: Sequence[_Request]) -> bool:
        """Launch what a pool has capacity for; True when a request ran out of provisioning time."""
        timed_out = False
        for request in list(requests):
            index = self._pool_for(request, minute)
            if index is not None:
                instance_type = self.types[index]
                self.requests.remove(request)
                ready = minute + self.start_up.get(instance_type, 10)
                self.instances.append(Unit(instance_type, self.priority[instance_type], ready, request.seq))
            elif self._out_of_time(request, minute):
                timed_out = True
        return timed_out

    def _pool_for(self, request: _Request, minute: int) -> int | None:
        """The pool that launches ``request``'s instance this minute, if any."""
        if not self.launch_post:
            # Developer guide: on an insufficient-capacity error, the next pool in priority order.
            return next((i for i, t in enumerate(self.types) if self.has_capacity(t, minute)), None)
        # Launch post: one pool, retried until the timeout, then the next; none after the last.
        while not self.has_capacity(self.types[request.index], minute):
            if minute - request.since < self.timeout or request.index + 1 == len(self.types):
                return None
            request.index += 1
            request.since = minute
        return request.index

    def _out_of_time(self, request: _Request, minute: int) -> bool:
        if self.launch_post:
            return request.index + 1 == len(self.types) and minute - request.since >= self.timeout
        # "the total time SageMaker AI spends attempting to provision instances across all pools"
        return minute - request.started >= self.timeout

    def _instance_total(self) -> int:
        return len(self.instances) + len(self.requests)

    def _max_instances(self) -> int:
        if self.spec.managed_scaling is not None:
            return self.spec.managed_scaling[1]
        return 10**6

    def _slots(self, instance_type: str) -> int:
        return self.component.copies_per_instance.get(instance_type, 1) if self.component else 1

    def _hosted(self) -> dict[int, list[Unit]]:
        """The copies on each instance, by the instance's ``seq``."""
        hosted: dict[int, list[Unit]] = {}
        for copy in self.copies:
            if copy.host is not None:
                hosted.setdefault(copy.host.seq, []).append(copy)
        return hosted

    def _host_with_room(self) -> Unit | None:
        hosted = self._hosted()
        hosts = sorted(self.instances, key=lambda u: (u.priority, u.ready_at, u.seq))
        for host in hosts:
            if len(hosted.get(host.seq, ())) < self._slots(host.instance_type):
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
            new = [self._request(minute) for _ in range(desired - total)]
            self.requests.extend(new)
            self._provision(minute, new)  # a timeout cannot pass in the minute a request starts
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
            self.requests.append(self._request(minute))
            expected_slots += self._slots(self.types[0])
        while self.requests and expected_slots - self._slots(self.types[self.requests[-1].index]) >= waiting:
            expected_slots -= self._slots(self.types[self.requests[-1].index])
            self.requests.pop()
        if waiting <= 0:
            self._managed_scale_in(minute, floor)

    def _managed_scale_in(self, minute: int, floor: int) -> None:
        """Release instances, lowest priority first, as the variant's ``ScaleInPolicy`` says."""
        policy = self.spec.managed_scale_in
        cooled = minute - self._last_operation >= policy.cooldown_minutes
        consolidate = policy.strategy == "CONSOLIDATION"
        if (consolidate or self.idle_release_waits) and not cooled:
            return
        released = 0
        while self._instance_total() > floor and not (consolidate and released >= policy.maximum_step_size):
            hosted = self._hosted()
            # Idle instances first, then (consolidation only) one whose copies fit elsewhere; lowest priority first.
            for instance in sorted(self.instances, key=lambda u: (u.seq in hosted, -u.priority, -u.seq)):
                moving = hosted.get(instance.seq, [])
                if not moving or (consolidate and self._move_copies(moving, instance, hosted)):
                    self.instances.remove(instance)
                    released += 1
                    break
            else:
                break  # nothing left to release
        if released and consolidate:
            self._last_operation = minute  # a consolidation is an endpoint operation: the cooldown restarts

    def _move_copies(self, moving: Sequence[Unit], leaving: Unit, hosted: Mapping[int, Sequence[Unit]]) -> bool:
        """Re-host ``moving`` on other serving instances with room, if all fit (the move is assumed seamless)."""
        room: list[Unit] = []
        for host in sorted(self.instances, key=lambda u: (u.priority, u.seq)):
            if host is leaving or host.ready_at > self._minute:
                continue
            room += [host] * (self._slots(host.instance_type) - len(hosted.get(host.seq, ())))
        if len(room) < len(moving):
            return False
        for copy, host in zip(moving, room):
            copy.host, copy.instance_type, copy.priority = host, host.instance_type, host.priority
        return True

    # --- one minute -------------------------------------------------------------------------

    def step(self, minute: int, desired: int, concurrency: float, store: MetricStore) -> Snapshot:
        """Advance to ``minute`` with ``desired`` capacity and ``concurrency`` offered; publish the metrics."""
        self._minute = minute
        rolled_back_to = None
        if self._provision(minute, self.requests):
            rolled_back_to = self._roll_back(minute)
        else:
            if desired != self._desired:
                self._last_operation = minute
            self._desired = desired
            if self.component is None:
                self._apply_instances(minute, desired)
            else:
                self._apply_copies(minute, desired)
                self._provision(minute, self.requests)
                self._apply_copies(minute, desired)
        snapshot = self._serve(minute, concurrency, store)
        if rolled_back_to is not None:
            snapshot.status, snapshot.rolled_back_to = ROLLING_BACK, rolled_back_to
        elif self._updating(minute):
            snapshot.status = UPDATING
            self._last_operation = minute
        else:
            self._stable = len(self.copies) if self.component else len(self.instances)
        return snapshot

    def _roll_back(self, minute: int) -> int:
        """The operation failed: back to the capacity of the last minute in service ("rolling back to its previous configuration")."""
        self.requests.clear()
        self._desired = self._stable
        if self.component is None:
            self._remove_instances(len(self.instances) - self._stable)
        else:
            self._apply_copies(minute, self._stable)
            self.requests.clear()
        self._last_operation = minute
        return self._stable

    def _updating(self, minute: int) -> bool:
        """Capacity asked for and not serving yet: instances provisioned or starting, copies loading."""
        if self.requests:
            return True
        # Plain loops: asked every minute, and a generator per call costs more than the scan.
        for unit in self.instances:
            if unit.ready_at > minute:
                return True
        for unit in self.copies:
            if unit.ready_at > minute:
                return True
        return False

    def serving_units(self, minute: int) -> dict[str, int]:
        """Serving instances (copies for a component) by type."""
        units = self.copies if self.component else self.instances
        counts = dict.fromkeys(self.types, 0)
        for u in units:
            if u.ready_at <= minute and (u.host is None or u.host.ready_at <= minute):
                counts[u.instance_type] += 1
        return counts

    def _serve(self, minute: int, concurrency: float, store: MetricStore) -> Snapshot:
        instances = dict.fromkeys(self.types, 0)
        pending = dict.fromkeys(self.types, 0)
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

    # --- metrics -----------------------------------------------------------------------------

    def _channels_for(self, store: MetricStore) -> dict[_ChannelKey, Channel | None]:
        """The channels bound so far into ``store`` (forgotten when the store changes)."""
        if store is not self._channel_store:
            self._channel_store, self._channels, self._groups = store, {}, {}
        return self._channels

    def _sends(self, namespace: str, names: tuple[str, ...], scope: str, instance_type: str) -> tuple[Channel, ...]:
        """The read ones among ``names`` per ``instance_type`` and for the whole ``scope``, each name in that order (once per store).

        For the metrics published per serving type and again for the whole variant (component)
        every minute: those no query reads (GPU and memory utilization, say) are skipped
        without a call.
        """
        group = (namespace, names, scope, instance_type)
        found = self._groups.get(group)
        if found is None:
            keys = [(namespace, name, scope, typed) for name in names for typed in (instance_type, None)]
            bound = [self._channels[key] if key in self._channels else self._bind(key) for key in keys]
            found = self._groups[group] = tuple(channel for channel in bound if channel is not None)
        return found

    def _bind(self, key: _ChannelKey) -> Channel | None:
        """Bind one metric the fleet publishes to its series, once per store: ``(namespace, name, scope, type)``.

        The scope names the dimensions (``variant``, ``component`` or ``endpoint``), plus
        ``InstanceType`` when a type is given. None when no query reads the metric.
        """
        namespace, name, scope, instance_type = key
        dims = {"variant": self.variant_dims, "component": self.component_dims, "endpoint": {"EndpointName": self.spec.endpoint_name}}[scope]
        if instance_type is not None:
            dims = {**dims, "InstanceType": instance_type}
        assert self._channel_store is not None
        channel = self._channels[key] = self._channel_store.channel(namespace, name, dims)
        return channel

    def _publish(self, minute: int, snap: Snapshot, units: Mapping[str, int], weight: Mapping[str, float], store: MetricStore) -> None:
        per_unit = snap.per_unit_load
        channels = self._channels_for(store)
        bind = self._bind

        def emit(namespace: str, name: str, scope: str, instance_type: str | None, value: float, count: float = 1.0) -> None:
            key = (namespace, name, scope, instance_type)
            channel = channels[key] if key in channels else bind(key)
            if channel is not None:
                channel(minute, value, count)

        variant = "variant"
        component = "component"
        all_instances = sum(snap.in_service.values())
        # One CPUUtilization (GPU, memory) sample per instance and type: documented metrics with the
        # documented InstanceType dimension. InstanceCount only under its reading: only the launch post names it.
        count_metric = self.publishes_instance_count
        for t, n in snap.in_service.items():
            if not n:
                continue
            load = per_unit.get(t, 0.0) if not self.component else 0.0
            utilization = min(100.0, 100.0 * load / weight[t]) if weight[t] else 0.0
            if count_metric:
                emit(_INVOCATIONS, "InstanceCount", variant, t, float(n))
            for send in self._sends(_ENDPOINTS, _UTILIZATION, variant, t):
                send(minute, utilization, n)
        if all_instances and count_metric:
            emit(_INVOCATIONS, "InstanceCount", variant, None, float(all_instances))
        # Load: concurrency per serving container, invocations.
        metric = "ConcurrentRequestsPerCopy" if self.component else "ConcurrentRequestsPerModel"
        base = component if self.component else variant
        total_requests = 0.0
        for t, n in units.items():
            if not n:
                continue
            load = per_unit.get(t, 0.0)
            # Whether a copy without requests publishes zeros is undocumented: a named reading.
            idle_silent = self.component is not None and self.idle_copies_missing and not load
            if not idle_silent:
                for send in self._sends(_INVOCATIONS, (metric,), base, t):
                    send(minute, load, n)
            served_share = min(load, weight[t]) if t in self.max_concurrency else load
            requests = self._requests_per_minute(served_share * n, t)
            total_requests += requests
            emit(_INVOCATIONS, "Invocations", base, t, requests)
            per = "InvocationsPerCopy" if self.component else "InvocationsPerInstance"
            if not idle_silent:
                emit(_INVOCATIONS, per, base, t, requests / n)
            if self.component:
                for send in self._sends(_COMPONENTS, ("CPUUtilizationNormalized",), base, t):
                    send(minute, min(100.0, 100.0 * load / weight[t]), n)
        serving = sum(units.values())
        if serving:
            emit(_INVOCATIONS, "Invocations", base, None, total_requests)
            per = "InvocationsPerCopy" if self.component else "InvocationsPerInstance"
            if not (self.component is not None and self.idle_copies_missing and not total_requests):
                emit(_INVOCATIONS, per, base, None, total_requests / serving)
        if self.component and serving == 0 and snap.concurrency > 0:
            failures = max(1.0, self._requests_per_minute(snap.concurrency, self.types[0]))
            emit(_INVOCATIONS, "NoCapacityInvocationFailures", component, None, failures)
            emit(_INVOCATIONS, "NoCapacityInvocationFailures", variant, None, failures)
        if self.spec.async_max_concurrent is not None:
            # ApproximateBacklogSize counts requests being processed or yet to be processed.
            endpoint = "endpoint"
            backlog = snap.concurrency
            snap.backlog = backlog
            emit(_INVOCATIONS, "ApproximateBacklogSize", endpoint, None, backlog)
            # At zero instances the backlog counts whole: "your endpoint only initiates scaling up
            # from zero after the number of backlog requests exceeds the target tracking value".
            emit(_INVOCATIONS, "ApproximateBacklogSizePerInstance", endpoint, None, backlog / max(1, all_instances))
            emit(_INVOCATIONS, "HasBacklogWithoutCapacity", endpoint, None, 1.0 if backlog > 0 and not all_instances else 0.0)
