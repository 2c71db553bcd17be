"""Every rule: bad input fails at construction with PoolConfigError naming the field and what
is allowed, and leaves nothing in the template."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from sagemaker_pools import (
    AsyncInference,
    CapacitySize,
    ComponentSpec,
    ContainerImage,
    DeploymentPolicy,
    InstancePool,
    InstanceScaling,
    ModelData,
    PoolAlarms,
    PoolConfigError,
    PoolDashboard,
    PooledEndpoint,
    PoolModel,
    Routing,
)
from support.rules import unreached_rules
from support.synth import new_stack, resource_types

G6E, G6, P4D = "ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"


def _endpoint(**overrides: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        props: dict[str, Any] = {
            "model": PoolModel.from_model_name(stack, "Base", "base-model"),
            "pools": [InstancePool(instance_type=G6E), InstancePool(instance_type=G6)],
        }
        props.update({k: (v(stack) if callable(v) and k != "pools" else v) for k, v in overrides.items()})
        return PooledEndpoint(stack, "Endpoint", **props)

    return build


class Staged:
    """A case that needs something built first (``setup``) and fails in ``act``: nothing new may be left."""

    def __init__(self, setup: Callable[[cdk.Stack], Any], act: Callable[[cdk.Stack, Any], object]) -> None:
        self.setup, self.act = setup, act


def _hosting(stack: cdk.Stack) -> PooledEndpoint:
    """An endpoint without a model that hosts inference components."""
    return PooledEndpoint(stack, "Host", pools=[InstancePool(instance_type=G6E)], instance_scaling=InstanceScaling(max_instance_count=2))


def _async(stack: cdk.Stack) -> PooledEndpoint:
    return PooledEndpoint(
        stack, "Async", model=PoolModel.from_model_name(stack, "Base", "base-model"),
        pools=[InstancePool(instance_type=G6E)], async_inference=AsyncInference(),
    )


def _named(stack: cdk.Stack, id: str) -> PooledEndpoint:
    """An endpoint named ``llm-pooled``."""
    return PooledEndpoint(
        stack, id, model=PoolModel.from_model_name(stack, f"{id}Model", "base-model"),
        pools=[InstancePool(instance_type=G6E)], endpoint_name="llm-pooled",
    )


def _model(environment: dict[str, str]) -> Callable[[cdk.Stack], object]:
    image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"
    return lambda s: PoolModel(s, "M", image=ContainerImage.from_image_uri(image), environment=environment)


def _alarm(stack: cdk.Stack, n: int) -> list[cloudwatch.IAlarm]:
    return [cloudwatch.Alarm.from_alarm_name(stack, f"A{i}", f"alarm-{i}") for i in range(n)]


# (case id, builder, field named in the message, words of the "allowed" text)
CASES: list[tuple[str, Callable[[cdk.Stack], object] | Staged, str, str]] = [
    ("no pools", _endpoint(pools=[]), "PooledEndpoint.pools", "1 to 5"),
    ("six pools", _endpoint(pools=[InstancePool(instance_type=t) for t in (G6E, G6, P4D, "ml.g5.48xlarge", "ml.p5.48xlarge", "ml.g6.12xlarge")]), "PooledEndpoint.pools", "1 to 5"),
    ("pools not a list", _endpoint(pools="ml.g6e.48xlarge"), "PooledEndpoint.pools", "list of 1 to 5"),
    ("pool not an InstancePool", _endpoint(pools=[{"instance_type": G6E}]), "PooledEndpoint.pools[0]", "an InstancePool"),
    ("unknown instance type", _endpoint(pools=[InstancePool(instance_type="ml.g6e.48xlrage")]), "pools[0].instance_type", "did you mean ml.g6e.48xlarge"),
    ("instance type without ml.", _endpoint(pools=[InstancePool(instance_type="g6e.48xlarge")]), "pools[0].instance_type", "ml.g6e.48xlarge"),
    ("priority 0", _endpoint(pools=[InstancePool(instance_type=G6E, priority=0)]), "pools[0].priority", "1 to 5"),
    ("priority 6", _endpoint(pools=[InstancePool(instance_type=G6E, priority=6)]), "pools[0].priority", "1 to 5"),
    ("priority not an int", _endpoint(pools=[InstancePool(instance_type=G6E, priority=1.5)]), "pools[0].priority", "integer from 1 to 5"),  # type: ignore[arg-type]
    ("duplicate priority", _endpoint(pools=[InstancePool(instance_type=G6E, priority=2), InstancePool(instance_type=G6)]), "PooledEndpoint.pools[*].priority", "unique priorities"),
    ("duplicate type", _endpoint(pools=[InstancePool(instance_type=G6E), InstancePool(instance_type=G6E)]), "PooledEndpoint.pools[*].instance_type", "each instance type once"),
    ("max_concurrency 0", _endpoint(pools=[InstancePool(instance_type=G6E, max_concurrency=0)]), "pools[0].max_concurrency", "a number > 0"),
    ("max_concurrency negative", _endpoint(pools=[InstancePool(instance_type=G6E, max_concurrency=-3)]), "pools[0].max_concurrency", "a number > 0"),
    ("pool model not a model", _endpoint(pools=[InstancePool(instance_type=G6E, model="my-model")]), "pools[0].model", "PoolModel"),  # type: ignore[arg-type]
    ("no model", _endpoint(model=None), "PooledEndpoint.model", "PoolModel"),
    ("initial count 0", _endpoint(initial_instance_count=0), "PooledEndpoint.initial_instance_count", "from 1"),
    ("bad variant name", _endpoint(variant_name="all_traffic"), "PooledEndpoint.variant_name", "letters, digits and hyphens"),
    ("endpoint name taken in the stack", Staged(lambda s: _named(s, "First"), lambda s, _: _named(s, "Second")), "PooledEndpoint.endpoint_name", "no other endpoint in this stack"),
    ("endpoint name taken in another stack of the environment", lambda s: [_named(cdk.Stack(s.node.scope, "Other"), "First"), _named(s, "Second")], "PooledEndpoint.endpoint_name", "deploys to the same account and region"),  # type: ignore[arg-type]
    ("endpoint name too long", _endpoint(endpoint_name="e" * 64), "PooledEndpoint.endpoint_name", "1-63 characters"),
    ("provision timeout 100 s", _endpoint(provision_timeout=Duration.seconds(100)), "PooledEndpoint.provision_timeout", "300 to 3600"),
    ("provision timeout 2 h", _endpoint(provision_timeout=Duration.hours(2)), "PooledEndpoint.provision_timeout", "300 to 3600"),
    ("provision timeout not a Duration", _endpoint(provision_timeout=1200), "PooledEndpoint.provision_timeout", "aws_cdk.Duration"),
    ("download timeout 30 s", _endpoint(model_data_download_timeout=Duration.seconds(30)), "PooledEndpoint.model_data_download_timeout", "60 to 3600"),
    ("startup timeout 2 h", _endpoint(container_startup_health_check_timeout=Duration.hours(2)), "PooledEndpoint.container_startup_health_check_timeout", "60 to 3600"),
    ("volume 513 GB", _endpoint(pools=[InstancePool(instance_type="ml.inf2.48xlarge")], volume_size_in_gb=513), "PooledEndpoint.volume_size_in_gb", "1 to 512"),
    ("volume on NVMe type", _endpoint(volume_size_in_gb=100), "PooledEndpoint.volume_size_in_gb", "NVMe instance storage"),
    ("kms key on NVMe type", _endpoint(kms_key=lambda s: kms.Key(s, "Key")), "PooledEndpoint.kms_key", "NVMe instance storage"),
    ("routing not a Routing", _endpoint(routing="RANDOM"), "PooledEndpoint.routing", "a Routing"),
    ("deployment not a policy", _endpoint(deployment="canary"), "PooledEndpoint.deployment", "a DeploymentPolicy"),
    ("KV_AWARE routing", lambda s: Routing.kv_aware(), "Routing.strategy", "not in CloudFormation"),
    ("prefix length 512", lambda s: Routing.prefix_aware(prefix_length=512, concurrency_threshold=8), "Routing.prefix_aware.prefix_length", "1024 to 65536"),
    ("prefix threshold 2000", lambda s: Routing.prefix_aware(prefix_length=2048, concurrency_threshold=2000), "Routing.prefix_aware.concurrency_threshold", "1 to 1024"),
    ("canary 60 %", lambda s: DeploymentPolicy.canary(canary_size=CapacitySize.percent(60), wait_interval=Duration.minutes(5)), "DeploymentPolicy.canary.canary_size", "1% to 50%"),
    ("linear 5 %", lambda s: DeploymentPolicy.linear(step_size=CapacitySize.percent(5), wait_interval=Duration.minutes(5)), "DeploymentPolicy.linear.step_size", "10% to 50%"),
    ("rolling 60 %", lambda s: DeploymentPolicy.rolling(batch_size=CapacitySize.percent(60), bake_time=Duration.minutes(5)), "DeploymentPolicy.rolling.batch_size", "5% to 50%"),
    ("rolling bake 2 h", lambda s: DeploymentPolicy.rolling(batch_size=CapacitySize.percent(20), bake_time=Duration.hours(2)), "DeploymentPolicy.rolling.bake_time", "0 to 3600"),
    ("wait interval 2 h", lambda s: DeploymentPolicy.all_at_once(wait_interval=Duration.hours(2)), "DeploymentPolicy.all_at_once.wait_interval", "0 to 3600"),
    ("timeout 5 min", lambda s: DeploymentPolicy.all_at_once(max_execution_timeout=Duration.minutes(5)), "DeploymentPolicy.all_at_once.max_execution_timeout", "600 to 28800"),
    ("timeout below waits", lambda s: DeploymentPolicy.canary(canary_size=CapacitySize.percent(10), wait_interval=Duration.minutes(50), termination_wait=Duration.minutes(20), max_execution_timeout=Duration.hours(1)), "DeploymentPolicy.canary.max_execution_timeout", "more than the waits"),
    ("eleven alarms", lambda s: DeploymentPolicy.all_at_once(rollback_alarms=_alarm(s, 11)), "DeploymentPolicy.rollback_alarms", "at most 10"),
    ("alarm not an alarm", lambda s: DeploymentPolicy.all_at_once(rollback_alarms=["my-alarm"]), "DeploymentPolicy.rollback_alarms", "IAlarm"),  # type: ignore[list-item]
    ("capacity 0 instances", lambda s: CapacitySize.instances(0), "CapacitySize.instances", "from 1"),
    ("capacity 101 %", lambda s: CapacitySize.percent(101), "CapacitySize.percent", "1 to 100"),
    ("image not ECR", lambda s: ContainerImage.from_image_uri("docker.io/library/vllm:latest"), "ContainerImage.image_uri", "ECR image URI"),
    ("model data not tar.gz", lambda s: ModelData.from_s3_object(s3.Bucket(s, "B"), "model.zip"), "ModelData.key", ".tar.gz"),
    ("model prefix without slash", lambda s: ModelData.from_s3_prefix(s3.Bucket(s, "B"), "weights"), "ModelData.prefix", "ending in '/'"),
    ("bucket name with capitals", lambda s: ModelData.from_s3_prefix("My_Bucket", "llm/"), "ModelData.bucket", "3-63 lowercase letters"),
    ("bucket neither a name nor an IBucket", lambda s: ModelData.from_s3_object(42, "model.tar.gz"), "ModelData.bucket", "an aws_s3.IBucket or an S3 bucket name"),  # type: ignore[arg-type]
    ("model name with underscore", lambda s: PoolModel.from_model_name(s, "M", "my_model"), "PoolModel.from_model_name.model_name", "letters, digits and hyphens"),
    ("recommendation ARN", lambda s: PoolModel.from_recommendation(s, "M", model_package_arn="my-package", inference_specification_name="g6"), "model_package_arn", "model package ARN"),
    ("recommendation spec name", lambda s: PoolModel.from_recommendation(s, "M", model_package_arn="arn:aws:sagemaker:us-east-1:123456789012:model-package/llm/3", inference_specification_name="g6_int4"), "inference_specification_name", "letters, digits and hyphens"),
    ("model image not an image", lambda s: PoolModel(s, "M", image="123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"), "PoolModel.image", "a ContainerImage"),  # type: ignore[arg-type]
    ("model environment not a mapping", lambda s: PoolModel(s, "M", image=ContainerImage.from_image_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"), environment=["A=1"]), "PoolModel.environment", "a mapping of environment variable names"),  # type: ignore[arg-type]
    ("canary size not a CapacitySize", lambda s: DeploymentPolicy.canary(canary_size=25, wait_interval=Duration.minutes(5)), "DeploymentPolicy.canary.canary_size", "CapacitySize.percent(...)"),  # type: ignore[arg-type]
    ("model subnets without VPC", lambda s: PoolModel(s, "M", image=ContainerImage.from_image_uri("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"), security_groups=[]), "PoolModel.vpc", "a VPC"),
    ("imported endpoint name", lambda s: PooledEndpoint.from_endpoint_name(s, "E", "bad name"), "PooledEndpoint.from_endpoint_name.endpoint_name", "1-63 characters"),
    ("auto_scale without a model", Staged(_hosting, lambda s, e: e.auto_scale(max_capacity=4)), "PooledEndpoint.auto_scale", "InferenceComponent.auto_scale"),
    ("aws: tag on an endpoint", _endpoint(tags={"aws:team": "llm"}), "PooledEndpoint.tags", "does not start with 'aws:'"),
    ("AWS: tag on a component", Staged(_hosting, lambda s, e: e.add_inference_component("C", specifications=[ComponentSpec(model=PoolModel.from_model_name(s, "P", "p"), min_memory_in_mb=1024)], tags={"AWS:cost": "x"})), "InferenceComponent.tags", "does not start with 'aws:'"),
    ("tags not a mapping", _endpoint(tags=["team=llm"]), "PooledEndpoint.tags", "a mapping of tag keys to values"),
    ("tag key of 129 characters", _endpoint(tags={"k" * 129: "v"}), "PooledEndpoint.tags", "1 to 128 characters"),
    ("tag value of 257 characters", _endpoint(tags={"team": "v" * 257}), "PooledEndpoint.tags", "at most 256 characters"),
    ("environment key with a hyphen", _model({"MAX-TOKENS": "1"}), "PoolModel.environment", "[a-zA-Z_][a-zA-Z0-9_]*"),
    ("environment key starting with a digit", _model({"1GPU": "1"}), "PoolModel.environment", "not starting with a digit"),
    ("environment key of 1025 characters", _model({"K" * 1025: "1"}), "PoolModel.environment", "at most 1024 characters"),
    ("environment value of 1025 characters", _model({"PROMPT": "v" * 1025}), "PoolModel.environment", "at most 1024 characters"),
    ("environment value not a string", _model({"WORKERS": 4}), "PoolModel.environment", "a string"),  # type: ignore[dict-item]
    ("101 environment variables", _model({f"OPTION_{i}": "1" for i in range(101)}), "PoolModel.environment", "at most 100 variables"),
    ("dashboard without endpoints", lambda s: PoolDashboard(s, "D", endpoints=[]), "PoolDashboard.endpoints", "one or more endpoints"),
    ("min above max (variant)", Staged(_endpoint(), lambda s, e: e.auto_scale(min_capacity=4, max_capacity=2)), "PooledEndpoint.auto_scale.min_capacity", "at most max_capacity (2)"),
    ("min above max (async)", Staged(_async, lambda s, e: e.auto_scale_on_backlog(min_capacity=3, max_capacity=2)), "PooledEndpoint.auto_scale_on_backlog.min_capacity", "at most max_capacity (2)"),
    ("wake-up cooldown of 30 s", Staged(_async, lambda s, e: e.auto_scale_on_backlog(max_capacity=2, wake_up_cooldown=Duration.seconds(30))), "PooledEndpoint.auto_scale_on_backlog.wake_up_cooldown", "from 60 to 86400"),
    ("managed instance scaling with a model", _endpoint(instance_scaling=InstanceScaling(min_instance_count=1, max_instance_count=4)), "PooledEndpoint.instance_scaling", "only without a model"),
    ("deployment on an Inf1 pool", _endpoint(pools=[InstancePool(instance_type="ml.inf1.24xlarge")], deployment=DeploymentPolicy.all_at_once(wait_interval=Duration.minutes(5))), "PooledEndpoint.pools[0].instance_type", "guardrails exclude endpoints that use Inf1"),
    ("canary of 2 instances on a fleet of 3", _endpoint(initial_instance_count=3, deployment=DeploymentPolicy.canary(canary_size=CapacitySize.instances(2), wait_interval=Duration.minutes(5))), "PooledEndpoint.deployment.canary_size", "at most 50% of the variant's instances"),
    ("rolling batch of 1 on a fleet of up to 30", Staged(_endpoint(deployment=DeploymentPolicy.rolling(batch_size=CapacitySize.instances(1), bake_time=Duration.minutes(5)), initial_instance_count=2), lambda s, e: e.auto_scale(min_capacity=2, max_capacity=30)), "PooledEndpoint.deployment.batch_size", "5% to 50%"),
    ("timeout shorter than the rollout", _endpoint(initial_instance_count=4, deployment=DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=Duration.minutes(10), max_execution_timeout=Duration.hours(1))), "PooledEndpoint.deployment.max_execution_timeout", "plus the provisioning timeout"),
    ("fallback window from a parameter", Staged(_endpoint(), lambda s, e: PoolAlarms(s, "A", endpoint=e, fallback_for=Duration.seconds(cdk.CfnParameter(s, "Window", type="Number", default=3600).value_as_number))), "PoolAlarms.fallback_for", "a concrete duration"),
    ("linear 10 % waiting 5 h under a 1 h timeout", lambda s: DeploymentPolicy.linear(step_size=CapacitySize.percent(10), wait_interval=Duration.minutes(30), max_execution_timeout=Duration.hours(1)), "DeploymentPolicy.linear.max_execution_timeout", "18000 seconds over every step"),
]


@pytest.mark.parametrize(("build", "field", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused(build: Callable[[cdk.Stack], object] | Staged, field: str, allowed: str) -> None:
    stack = new_stack()

    def cfn_resources() -> set[str]:
        return {c.node.path for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)}

    before: set[str] = set()
    if isinstance(build, Staged):
        built = build.setup(stack)
        before = cfn_resources()
    with pytest.raises(PoolConfigError) as err:
        build.act(stack, built) if isinstance(build, Staged) else build(stack)
    message = str(err.value)
    assert field in message and field in err.value.field
    assert allowed in message
    assert "allowed:" in message
    # Nothing half-written: no endpoint, config or model resource made it into the template
    # (for a staged case: no resource at all beyond what its setup made).
    if isinstance(build, Staged):
        assert cfn_resources() - before == set()
    else:
        assert [t for t in resource_types(stack) if t.startswith("AWS::SageMaker")] == []


def test_a_long_bad_value_is_quoted_in_at_most_about_200_characters() -> None:
    with pytest.raises(PoolConfigError) as err:
        _model({f"OPTION_{i}": "1" for i in range(101)})(new_stack())
    message = str(err.value)
    assert len(message) < 400, message
    assert "... (" in message and "more characters)" in message
    assert len(err.value.value) == 101  # the attribute keeps the whole value  # type: ignore[arg-type]


def _plain(build: Callable[[cdk.Stack], object] | Staged) -> Callable[[cdk.Stack], object]:
    """A case as one call on a fresh stack (a staged case: its setup, then its act)."""
    if isinstance(build, Staged):
        staged = build
        return lambda stack: staged.act(stack, staged.setup(stack))
    return build


#: Rules of these modules that a method call on a built endpoint reaches (so not a "nothing
#: half-written" case above), each with the test that holds it.
ELSEWHERE = {
    "endpoint.py:EndpointBase._check_metric_instance_type: 'metric.instance_type'": "test_metrics.py",
    "endpoint.py:EndpointBase.pools_or: f'{field}.pools'": "test_dashboard.py::test_imported_endpoint_needs_pools",
}


def test_the_corpora_reach_every_rule() -> None:
    """Every ``raise PoolConfigError`` of the endpoint's modules is reached by a case of the corpora
    (this one, async's, the inference components' and data capture's and shadow variants'): a new
    rule needs its case."""
    import test_async
    import test_capture_shadow
    import test_inference_component

    corpora = (CASES, test_async.CASES, test_inference_component.CASES, test_capture_shadow.CASES)
    builders = [_plain(c[1]) for corpus in corpora for c in corpus]
    modules = ["pools.py", "instance_types.py", "routing.py", "deployment.py", "model.py", "endpoint.py", "_validate.py", "_unique_names.py"]
    assert unreached_rules(builders, modules) == set(ELSEWHERE)


def test_messages_read_as_reviewed(snapshot: Any) -> None:
    """The whole message of every case: users read it, so a wording change shows in review.
    (Token numbers and object addresses vary from run to run and are normalized.)"""
    messages = {}
    for case_id, build, _, _ in CASES:
        with pytest.raises(PoolConfigError) as err:
            _plain(build)(new_stack())
        text = re.sub(r"\$\{Token\[[^\]]*\]\}", "${Token}", str(err.value))
        messages[case_id] = re.sub(r" at 0x[0-9a-f]+", " at 0x...", text)
    assert messages == snapshot

