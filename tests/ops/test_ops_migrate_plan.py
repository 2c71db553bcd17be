"""``build_plan`` on its own (it is pure): every refusal's exact message and exit code, the limits
at their edges, the notes, and a plan that shares nothing with the Describe outputs it came from."""

from __future__ import annotations

import copy
import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import botocore.session
import ops_samples as s
import pytest
from ops_support import NOW

from sagemaker_pools.ops.errors import EXIT_FAILURE, EXIT_USAGE, OpsError
from sagemaker_pools.ops.migrate import MigrateOptions, MigrationPlan, build_plan, default_config_name
from sagemaker_pools.ops.stack_owner import StackOwnership

#: CreateEndpointConfig's input members, from the service model (what the CLI passes too).
CREATE_MEMBERS = frozenset(
    botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateEndpointConfig").input_shape.members
)
NOT_MANAGED = StackOwnership(s.SINGLE_ENDPOINT["EndpointArn"], "not_managed")
KMS = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
ROUTING_NOTE = (
    ": on a mixed fleet the launch post recommends LEAST_OUTSTANDING_REQUESTS, so that slower fallback instances get fewer requests"
)


def _plan(
    cfg: dict[str, Any] | None = None, tags: list[dict[str, str]] | None = None, **options: Any
) -> MigrationPlan:
    options.setdefault("fallbacks", ("ml.g6.48xlarge",))
    return build_plan(
        s.SINGLE_ENDPOINT,
        cfg if cfg is not None else s.SINGLE_CONFIG,
        tags if tags is not None else [],
        MigrateOptions(**options),
        create_members=CREATE_MEMBERS,
        cloudformation=NOT_MANAGED,
        now=NOW,
    )


def _refused(cfg: dict[str, Any] | None = None, **options: Any) -> tuple[str, int]:
    with pytest.raises(OpsError) as caught:
        _plan(cfg, **options)
    return caught.value.message, caught.value.exit_code


def _pools(plan: MigrationPlan) -> list[dict[str, Any]]:
    return plan.variant["InstancePools"]  # type: ignore[no-any-return]


# -- refusals: the message is what the user acts on -----------------------------------------


def test_serverless_and_inference_component_variants_are_refused_with_the_reason() -> None:
    serverless = s.with_variant(s.SINGLE_CONFIG, InstanceType=None, ServerlessConfig={"MemorySizeInMB": 2048, "MaxConcurrency": 5})
    assert _refused(serverless) == (
        "variant primary is serverless (ServerlessConfig): instance pools need provisioned instances, "
        "so a serverless variant cannot be migrated",
        EXIT_FAILURE,
    )
    assert _refused(s.with_variant(s.SINGLE_CONFIG, ModelName=None)) == (
        "variant primary hosts inference components (it has no ModelName): pools on such an endpoint also need one "
        "Specifications entry per instance type in every inference component (UpdateInferenceComponent), which "
        "migrate does not do",
        EXIT_FAILURE,
    )


def test_a_variant_without_instances_has_nothing_to_migrate() -> None:
    assert _refused(s.with_variant(s.SINGLE_CONFIG, InstanceType=None)) == (
        "variant primary has neither InstanceType nor InstancePools: nothing to migrate",
        EXIT_FAILURE,
    )


def test_every_field_create_does_not_accept_is_named() -> None:
    live = dict(s.SINGLE_CONFIG, FutureFeature={"Enabled": True}, AnotherOne=1)
    assert _refused(live) == (
        "cannot reproduce endpoint config my-config faithfully: DescribeEndpointConfig returned AnotherOne, "
        "FutureFeature, which CreateEndpointConfig does not accept (upgrade boto3, or migrate by hand)",
        EXIT_FAILURE,
    )


def test_variant_choice_lists_every_variant() -> None:
    cfg = copy.deepcopy(s.SINGLE_CONFIG)
    cfg["ProductionVariants"].append(dict(cfg["ProductionVariants"][0], VariantName="canary"))
    assert _refused(cfg, variant="shadow") == ("--variant shadow: config my-config has variants primary, canary", EXIT_USAGE)
    assert _refused(cfg) == (
        "config my-config has 2 production variants (primary, canary): choose one with --variant",
        EXIT_USAGE,
    )
    # a config without variants is refused the same way, not with a traceback
    empty = {k: v for k, v in s.SINGLE_CONFIG.items() if k != "ProductionVariants"}
    assert _refused(empty) == ("config my-config has 0 production variants (): choose one with --variant", EXIT_USAGE)


def test_no_fallback_is_a_usage_error() -> None:
    assert _refused(fallbacks=()) == ("give at least one --fallback TYPE", EXIT_USAGE)


def test_five_pools_fit_six_do_not() -> None:
    plan = _plan(fallbacks=("ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge"))
    assert [(p["InstanceType"], p["Priority"]) for p in _pools(plan)] == [
        ("ml.g6e.48xlarge", 1),
        ("ml.g6.48xlarge", 2),
        ("ml.p4d.24xlarge", 3),
        ("ml.p5.48xlarge", 4),
        ("ml.g5.48xlarge", 5),
    ]


def test_fallback_priorities_stop_at_five() -> None:
    cfg = s.with_variant(s.SINGLE_CONFIG, InstanceType=None, InstancePools=[{"InstanceType": "ml.g6e.48xlarge", "Priority": 3}])
    plan = _plan(cfg, fallbacks=("ml.g6.48xlarge", "ml.p4d.24xlarge"))
    assert [(p["InstanceType"], p["Priority"]) for p in _pools(plan)] == [
        ("ml.g6e.48xlarge", 3),
        ("ml.g6.48xlarge", 4),
        ("ml.p4d.24xlarge", 5),
    ]
    cfg = s.with_variant(cfg, InstancePools=[{"InstanceType": "ml.g6e.48xlarge", "Priority": 4}])
    assert _refused(cfg, fallbacks=("ml.g6.48xlarge", "ml.p4d.24xlarge")) == (
        "no priority left for 2 fallback(s): the existing pools use priorities up to 4 and priorities stop at 5",
        EXIT_FAILURE,
    )


def test_live_pools_that_break_the_pool_rules_are_refused() -> None:
    cfg = s.with_variant(
        s.SINGLE_CONFIG,
        InstanceType=None,
        InstancePools=[{"InstanceType": "ml.g6e.48xlarge", "Priority": 1}, {"InstanceType": "ml.g6e.24xlarge", "Priority": 1}],
    )
    assert _refused(cfg) == (
        "invalid pools: pools[*].priority: got 1; allowed: unique priorities (each 1-5); 1 appears more than once",
        EXIT_FAILURE,
    )


def test_model_override_must_name_a_pool_and_be_a_model_name() -> None:
    fallbacks = ("ml.g6.48xlarge", "ml.p4d.24xlarge")
    assert _refused(fallbacks=fallbacks, model_overrides={"ml.p5.48xlarge": "x"}) == (
        "--model ml.p5.48xlarge=x: ml.p5.48xlarge is not one of the pools (ml.g6e.48xlarge, ml.g6.48xlarge, ml.p4d.24xlarge)",
        EXIT_USAGE,
    )
    for bad in ("a" * 64, "-starts-with-a-dash", "under_score"):
        assert _refused(fallbacks=fallbacks, model_overrides={"ml.g6.48xlarge": bad}) == (
            f"--model ml.g6.48xlarge={bad}: not a valid SageMaker model name",
            EXIT_USAGE,
        )
    longest = "m" * 63
    plan = _plan(fallbacks=fallbacks, model_overrides={"ml.g6.48xlarge": longest})
    assert _pools(plan)[1] == {"InstanceType": "ml.g6.48xlarge", "Priority": 2, "ModelNameOverride": longest}


def test_an_override_with_the_variants_own_model_is_no_override() -> None:
    plan = _plan(model_overrides={"ml.g6.48xlarge": "my-llm"})
    assert _pools(plan) == [{"InstanceType": "ml.g6e.48xlarge", "Priority": 1}, {"InstanceType": "ml.g6.48xlarge", "Priority": 2}]
    assert [p.model for p in plan.pools] == [None, None]


# -- provision timeout ----------------------------------------------------------------------


def test_provision_timeout_comes_from_the_option_then_the_variant_then_the_default() -> None:
    assert _plan().variant["VariantInstanceProvisionTimeoutInSeconds"] == 1200
    cfg = s.with_variant(s.SINGLE_CONFIG, VariantInstanceProvisionTimeoutInSeconds=600)
    assert _plan(cfg).variant["VariantInstanceProvisionTimeoutInSeconds"] == 600
    assert _plan(cfg, provision_timeout_s=900).variant["VariantInstanceProvisionTimeoutInSeconds"] == 900


@pytest.mark.parametrize("seconds", [300, 3600])
def test_provision_timeout_bounds_are_accepted(seconds: int) -> None:
    assert _plan(provision_timeout_s=seconds).variant["VariantInstanceProvisionTimeoutInSeconds"] == seconds


@pytest.mark.parametrize("seconds", [299, 3601])
def test_provision_timeout_outside_the_bounds_is_refused(seconds: int) -> None:
    assert _refused(provision_timeout_s=seconds) == (f"--provision-timeout {seconds}: must be 300 to 3600 seconds", EXIT_USAGE)


# -- storage: KmsKeyId and VolumeSizeInGB need an EBS volume ---------------------------------

CPU_VARIANT = {"VariantName": "AllTraffic", "ModelName": "xgb", "InitialInstanceCount": 1, "InstanceType": "ml.c5.2xlarge"}


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        (s.config("cpu-config", [dict(CPU_VARIANT, VolumeSizeInGB=100)]), "VolumeSizeInGB"),
        (s.config("cpu-config", [CPU_VARIANT], KmsKeyId=KMS), "KmsKeyId"),
    ],
)
def test_an_ebs_setting_refuses_a_fallback_with_instance_storage(cfg: dict[str, Any], field: str) -> None:
    assert _refused(cfg, fallbacks=("ml.c5d.2xlarge",)) == (
        f"cannot reproduce {field} with fallback ml.c5d.2xlarge: the config sets {field} for an EBS ML storage volume, "
        f"but ml.c5d.2xlarge has NVMe instance storage and CreateEndpointConfig rejects {field} for it; "
        "choose EBS-only fallback types",
        EXIT_FAILURE,
    )
    # EBS-only fallbacks are fine, and the setting is copied
    plan = _plan(cfg, fallbacks=("ml.m5.2xlarge",))
    assert plan.variant.get("VolumeSizeInGB") == cfg["ProductionVariants"][0].get("VolumeSizeInGB")
    assert plan.create_request.get("KmsKeyId") == cfg.get("KmsKeyId")


# -- types the live config already uses ------------------------------------------------------


def test_types_the_live_config_uses_are_taken_even_when_unknown_to_the_library() -> None:
    unknown = "ml.g9.48xlarge"  # not (yet) in the library's list; SageMaker accepted it
    plan = _plan(s.with_variant(s.SINGLE_CONFIG, InstanceType=unknown))
    assert [(p.instance_type, p.priority) for p in plan.pools] == [(unknown, 1), ("ml.g6.48xlarge", 2)]
    cfg = s.with_variant(
        s.SINGLE_CONFIG,
        InstanceType=None,
        InstancePools=[{"InstanceType": unknown, "Priority": 1}, {"InstanceType": "ml.g6e.48xlarge", "Priority": 2}],
    )
    plan = _plan(cfg)
    assert plan.current_types == (unknown, "ml.g6e.48xlarge")
    assert _pools(plan)[0] == {"InstanceType": unknown, "Priority": 1}


# -- notes -----------------------------------------------------------------------------------


def test_notes_name_system_tags_routing_and_a_count_reset_but_the_tags_name_no_stack() -> None:
    cfg = s.with_variant(s.SINGLE_CONFIG, RoutingConfig=None)
    tags = [
        {"Key": "team", "Value": "ml"},
        {"Key": "aws:cloudformation:stack-name", "Value": "legacy"},
        {"Key": "aws:cloudformation:logical-id", "Value": "Config"},
    ]
    plan = _plan(cfg, tags, retain_instance_count=False)
    assert plan.notes == (
        "not copied: tags reserved for AWS (aws:cloudformation:logical-id, aws:cloudformation:stack-name)",
        "routing is the default (RANDOM)" + ROUTING_NOTE,
        "the update resets the instance count to InitialInstanceCount (--reset-instance-count)",
    )
    assert plan.user_tags == {"team": "ml"}
    # who owns the endpoint is CloudFormation's answer, passed in; the tags do not override it
    assert plan.cloudformation == NOT_MANAGED


def test_a_named_routing_strategy_other_than_least_outstanding_is_noted() -> None:
    plan = _plan(s.with_variant(s.SINGLE_CONFIG, RoutingConfig={"RoutingStrategy": "RANDOM"}))
    assert plan.notes == ("routing is RANDOM" + ROUTING_NOTE,)


def test_least_outstanding_requests_and_a_kept_count_need_no_note() -> None:
    assert _plan().notes == ()


# -- the plan --------------------------------------------------------------------------------


def test_the_plan_carries_its_inputs() -> None:
    plan = _plan(tags=[{"Key": "team", "Value": "ml"}])
    assert plan.config == s.SINGLE_CONFIG
    assert plan.user_tags == {"team": "ml"}
    assert plan.create_request["Tags"] == [{"Key": "team", "Value": "ml"}]


def test_the_requests_share_nothing_with_the_described_config() -> None:
    # A caller may edit the requests before sending them; the described config must stay what was described.
    cfg = copy.deepcopy(s.SINGLE_CONFIG)
    cfg["DataCaptureConfig"] = copy.deepcopy(s.DATA_CAPTURE)
    cfg["ProductionVariants"][0]["ManagedInstanceScaling"] = {
        "Status": "ENABLED",
        "MinInstanceCount": 1,
        "MaxInstanceCount": 4,
        "ScaleInPolicy": {"Strategy": "IDLE_RELEASE", "MaximumStepSize": 1, "CooldownInMinutes": 10},
    }
    cfg["ProductionVariants"].append(dict(copy.deepcopy(cfg["ProductionVariants"][0]), VariantName="canary"))
    before = copy.deepcopy(cfg)
    plan = _plan(cfg, variant="primary")
    primary, canary = plan.create_request["ProductionVariants"]
    primary["RoutingConfig"]["RoutingStrategy"] = "RANDOM"
    primary["ManagedInstanceScaling"]["ScaleInPolicy"]["MaximumStepSize"] = 2
    canary["RoutingConfig"]["RoutingStrategy"] = "RANDOM"
    plan.create_request["DataCaptureConfig"]["CaptureOptions"].clear()
    assert cfg == before


@pytest.fixture
def new_york() -> Iterator[None]:
    """The process's local time zone is UTC-5 for the test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "America/New_York")
        time.tzset()
        yield
    time.tzset()


def test_default_config_name_is_in_utc_whatever_the_local_zone(new_york: None) -> None:
    assert default_config_name("my-config", NOW) == "my-config-pools-20261129101500"
    berlin = dt.datetime(2026, 11, 29, 11, 15, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert default_config_name("x" * 60, berlin) == "x" * 42 + "-pools-20261129101500"
