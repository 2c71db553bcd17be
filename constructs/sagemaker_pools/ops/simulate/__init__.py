"""``sagemaker-pools simulate``: watch a pooled fleet scale before you deploy it.

Replays a traffic trace and capacity outages, minute by minute, through the scaling policies and
alarms *as synthesized* in a CloudFormation template. No CDK import, and no AWS access except
``--traffic-from``, which reads a live endpoint's traffic from CloudWatch.

Modules: :mod:`.template` (reading the template), :mod:`.inputs` (trace, outages, flags),
:mod:`.cloudwatch_traffic` (a live endpoint's traffic from CloudWatch),
:mod:`.fleet` (SageMaker: pools, provisioning, copies, load, metrics), :mod:`.cloudwatch`
(metric data and alarms), :mod:`.autoscaling` (Application Auto Scaling), :mod:`.engine` (the
minute loop), :mod:`.readings` (the named readings where AWS's documents disagree or say
nothing), :mod:`.report` (text, summary, JSON), :mod:`.plot` (PNG), :mod:`.command` (CLI).
Every modelled rule and its AWS source: ``docs/simulate.md``.
"""

from __future__ import annotations

from .engine import Result, Row, Scenario, simulate
from .report import summarize, to_json
from .template import FleetSpec, load_template, read_fleet

__all__ = ["FleetSpec", "Result", "Row", "Scenario", "load_template", "read_fleet", "simulate", "summarize", "to_json"]
