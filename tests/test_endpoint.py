"""What PooledEndpoint and PoolModel put into the template."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from sagemaker_pools import (
    CapacitySize,
    ContainerImage,
    DeploymentPolicy,
    InstancePool,
    ModelData,
    PoolConfigError,
    PooledEndpoint,
    PoolModel,
    Routing,
)
from support.contract import template_problems
from support.frozen import frozen
from support.synth import new_app, new_stack, only, resources, template_of

G6E, G6, P4D = "ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"
IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def _three_pool_stack(**props: Any) -> tuple[cdk.Stack, PooledEndpoint]:
    stack = new_stack()
    bucket = s3.Bucket(stack, "Artifacts")
    image = ContainerImage.from_image_uri(IMAGE)
    base = PoolModel(stack, "Base", image=image, model_data=ModelData.from_s3_prefix(bucket, "tp8/"))
    int4 = PoolModel(stack, "Int4", image=image, model_data=ModelData.from_s3_object(bucket, "int4/model.tar.gz"))
    endpoint = PooledEndpoint(
        stack,
        "Endpoint",
        model=base,
        pools=[InstancePool(instance_type=G6E), InstancePool(instance_type=G6), InstancePool(instance_type=P4D, model=int4)],
        **props,
    )
    return stack, endpoint


@pytest.fixture(scope="module")
def default_template() -> dict[str, Any]:
    stack, _ = _three_pool_stack()
    return frozen(template_of(stack))  # type: ignore[no-any-return]


def _variant(template: dict[str, Any]) -> dict[str, Any]:
    return only(template, "AWS::SageMaker::EndpointConfig")["ProductionVariants"][0]  # type: ignore[no-any-return]


def test_variant_lists_pools_never_an_instance_type(default_template: dict[str, Any]) -> None:
    variant = _variant(default_template)
    assert "InstanceType" not in variant
    assert [(p["InstanceType"], p["Priority"]) for p in variant["InstancePools"]] == [(G6E, 1), (G6, 2), (P4D, 3)]
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 1200  # 20 minutes by default
    assert variant["InitialInstanceCount"] == 1
    assert variant["VariantName"] == "AllTraffic"
    assert variant["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}


def test_model_override_only_on_pools_with_their_own_model(default_template: dict[str, Any]) -> None:
    variant = _variant(default_template)
    models = resources(default_template, "AWS::SageMaker::Model")
    base_id = next(k for k in models if k.startswith("Base"))
    int4_id = next(k for k in models if k.startswith("Int4"))
    assert variant["ModelName"] == {"Fn::GetAtt": [base_id, "ModelName"]}
    assert "ModelNameOverride" not in variant["InstancePools"][0]
    assert "ModelNameOverride" not in variant["InstancePools"][1]
    assert variant["InstancePools"][2]["ModelNameOverride"] == {"Fn::GetAtt": [int4_id, "ModelName"]}


def test_config_never_has_a_fixed_name_and_endpoint_retains_scaled_capacity(default_template: dict[str, Any]) -> None:
    assert "EndpointConfigName" not in only(default_template, "AWS::SageMaker::EndpointConfig")
    endpoint = only(default_template, "AWS::SageMaker::Endpoint")
    config_id = next(iter(resources(default_template, "AWS::SageMaker::EndpointConfig")))
    assert endpoint["EndpointConfigName"] == {"Fn::GetAtt": [config_id, "EndpointConfigName"]}
    assert endpoint["RetainAllVariantProperties"] is True
    assert "EndpointName" not in endpoint and "DeploymentConfig" not in endpoint


def test_default_child_is_the_endpoint() -> None:
    _, endpoint = _three_pool_stack()
    child = endpoint.node.default_child
    assert isinstance(child, cdk.aws_sagemaker.CfnEndpoint)
    assert child.node.id == "Resource"


def test_retain_can_be_turned_off() -> None:
    stack, _ = _three_pool_stack(retain_scaled_capacity=False)
    assert "RetainAllVariantProperties" not in only(template_of(stack), "AWS::SageMaker::Endpoint")


def test_all_props_render() -> None:
    stack = new_stack()
    alarm = cloudwatch.Alarm.from_alarm_name(stack, "Alarm", "llm-5xx")
    key = kms.Key(stack, "Key")
    PooledEndpoint(
        stack,
        "Endpoint",
        model=PoolModel.from_model_name(stack, "Base", "base"),
        pools=[InstancePool(instance_type="ml.inf2.48xlarge"), InstancePool(instance_type="ml.inf2.24xlarge")],
        initial_instance_count=3,
        variant_name="primary",
        provision_timeout=Duration.minutes(30),
        routing=Routing.prefix_aware(prefix_length=2048, concurrency_threshold=16),
        deployment=DeploymentPolicy.rolling(
            batch_size=CapacitySize.percent(25),
            bake_time=Duration.minutes(5),
            rollback_batch_size=CapacitySize.instances(1),
            max_execution_timeout=Duration.hours(2),  # 3 batches of 1: 3 x (5 min bake + 30 min provisioning)
            rollback_alarms=[alarm],
        ),
        kms_key=key,
        volume_size_in_gb=200,
        model_data_download_timeout=Duration.minutes(15),
        container_startup_health_check_timeout=Duration.minutes(10),
        endpoint_name="llm",
        tags={"team": "ml"},
    )
    template = template_of(stack)
    config = only(template, "AWS::SageMaker::EndpointConfig")
    variant = config["ProductionVariants"][0]
    assert variant["VariantName"] == "primary" and variant["InitialInstanceCount"] == 3
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 1800
    assert variant["RoutingConfig"] == {
        "RoutingStrategy": "PREFIX_AWARE",
        "PrefixAwareRoutingConfig": {"PrefixLength": 2048, "ConcurrencyThreshold": 16},
    }
    assert variant["VolumeSizeInGB"] == 200
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 900
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 600
    assert config["KmsKeyId"] == {"Fn::GetAtt": [next(iter(resources(template, "AWS::KMS::Key"))), "Arn"]}
    assert config["Tags"] == [{"Key": "team", "Value": "ml"}]
    endpoint = only(template, "AWS::SageMaker::Endpoint")
    assert endpoint["EndpointName"] == "llm"
    assert endpoint["Tags"] == [{"Key": "team", "Value": "ml"}]
    assert endpoint["DeploymentConfig"] == {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 25},
            "WaitIntervalInSeconds": 300,
            "MaximumExecutionTimeoutInSeconds": 7200,
            "RollbackMaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
        },
        "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": "llm-5xx"}]},
    }
    assert all(not problems for problems in template_problems(template).values())


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (
            lambda: DeploymentPolicy.all_at_once(),
            {"TrafficRoutingConfiguration": {"Type": "ALL_AT_ONCE", "WaitIntervalInSeconds": 0}},
        ),
        (
            lambda: DeploymentPolicy.canary(canary_size=CapacitySize.instances(1), wait_interval=Duration.minutes(10)),
            {"TrafficRoutingConfiguration": {"Type": "CANARY", "WaitIntervalInSeconds": 600, "CanarySize": {"Type": "INSTANCE_COUNT", "Value": 1}}},
        ),
        (
            lambda: DeploymentPolicy.linear(step_size=CapacitySize.percent(20), wait_interval=Duration.minutes(5), termination_wait=Duration.minutes(10)),
            {
                "TrafficRoutingConfiguration": {"Type": "LINEAR", "WaitIntervalInSeconds": 300, "LinearStepSize": {"Type": "CAPACITY_PERCENT", "Value": 20}},
                "TerminationWaitInSeconds": 600,
            },
        ),
    ],
    ids=["all-at-once", "canary", "linear"],
)
def test_blue_green_policies(policy: Any, expected: dict[str, Any]) -> None:
    stack, _ = _three_pool_stack(deployment=policy())
    template = template_of(stack)
    assert only(template, "AWS::SageMaker::Endpoint")["DeploymentConfig"] == {"BlueGreenUpdatePolicy": expected}
    assert all(not problems for problems in template_problems(template).values())


def test_random_routing() -> None:
    stack, _ = _three_pool_stack(routing=Routing.random())
    assert _variant(template_of(stack))["RoutingConfig"] == {"RoutingStrategy": "RANDOM"}


def _policy_statements(template: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    policies = resources(template, "AWS::IAM::Policy")
    doc = next(v for k, v in policies.items() if k.startswith(prefix))["Properties"]["PolicyDocument"]
    return doc["Statement"]  # type: ignore[no-any-return]


def test_execution_role_is_least_privilege(default_template: dict[str, Any]) -> None:
    statements = _policy_statements(default_template, "BaseExecutionRole")
    by_action = {tuple(s["Action"]) if isinstance(s["Action"], list) else (s["Action"],): s for s in statements}
    ecr_pull = by_action[("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")]  # sorted (minimizePolicies)
    assert ecr_pull["Resource"] == "arn:aws:ecr:us-west-2:763104351884:repository/djl-inference"
    assert by_action[("ecr:GetAuthorizationToken",)]["Resource"] == "*"
    get = by_action[("s3:GetObject",)]
    assert get["Resource"]["Fn::Join"][1][1] == "/tp8/*"
    listing = by_action[("s3:ListBucket",)]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["tp8/*"]}}
    metrics = by_action[("cloudwatch:PutMetricData",)]
    assert metrics["Resource"] == "*" and "cloudwatch:namespace" in metrics["Condition"]["StringLike"]
    wildcard = [s for s in statements if s["Resource"] == "*"]
    assert {a for s in wildcard for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])} == {
        "ecr:GetAuthorizationToken",
        "cloudwatch:PutMetricData",
    }
    # The object grant of the tar.gz model is the object itself, not a prefix.
    int4 = {s["Action"]: s for s in _policy_statements(default_template, "Int4ExecutionRole") if isinstance(s["Action"], str)}
    assert int4["s3:GetObject"]["Resource"]["Fn::Join"][1][1] == "/int4/model.tar.gz"
    assert "s3:ListBucket" not in int4


def _kms_statements(template: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [s for s in _policy_statements(template, prefix) if "kms:" in json.dumps(s["Action"])]


def test_model_role_may_decrypt_its_artifacts_and_nothing_else() -> None:
    # SSE-KMS weights: GetObject alone is refused without kms:Decrypt on the bucket's key.
    stack = new_stack()
    key = kms.Key(stack, "WeightsKey")
    sealed = s3.Bucket(stack, "Sealed", encryption=s3.BucketEncryption.KMS, encryption_key=key)
    imported_key_arn = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    imported = s3.Bucket.from_bucket_attributes(
        stack, "Imported", bucket_name="team-weights", encryption_key=kms.Key.from_key_arn(stack, "TeamKey", imported_key_arn)
    )
    image = ContainerImage.from_image_uri(IMAGE)
    PoolModel(stack, "Prefix", image=image, model_data=ModelData.from_s3_prefix(sealed, "llm/"))
    PoolModel(stack, "Archive", image=image, model_data=ModelData.from_s3_object(imported, "llm/model.tar.gz"))
    PoolModel(stack, "Plain", image=image, model_data=ModelData.from_s3_prefix(s3.Bucket(stack, "Open"), "llm/"))
    template = template_of(stack)
    (key_id,) = resources(template, "AWS::KMS::Key")
    assert _kms_statements(template, "PrefixExecutionRole") == [
        {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": {"Fn::GetAtt": [key_id, "Arn"]}}
    ]
    assert _kms_statements(template, "ArchiveExecutionRole") == [
        {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": imported_key_arn}
    ]
    assert _kms_statements(template, "PlainExecutionRole") == []
    assert all(not problems for problems in template_problems(template).values())


@pytest.mark.parametrize("env", [None, cdk.Environment(account="123456789012", region="cn-north-1")])
def test_a_bucket_name_renders_what_an_imported_bucket_renders(env: cdk.Environment | None) -> None:
    """``ModelData`` on a bucket name: the same models, roles and policies as on
    ``Bucket.from_bucket_name``, with no import construct in the tree."""

    def build(by_name: bool) -> tuple[dict[str, Any], list[str]]:
        stack = cdk.Stack(new_app(), "Test", env=env)
        bucket: s3.IBucket | str = "my-llm-artifacts" if by_name else s3.Bucket.from_bucket_name(stack, "Artifacts", "my-llm-artifacts")
        image = ContainerImage.from_image_uri(IMAGE)
        PoolModel(stack, "Prefix", image=image, model_data=ModelData.from_s3_prefix(bucket, "llm/tp8/"))
        PoolModel(stack, "Archive", image=image, model_data=ModelData.from_s3_object(bucket, "llm/int4/model.tar.gz"))
        return template_of(stack), [c.node.id for c in stack.node.children]

    by_name, by_name_children = build(True)
    imported, imported_children = build(False)
    assert by_name == imported
    assert "Artifacts" in imported_children and "Artifacts" not in by_name_children
    policies = [p["Properties"]["PolicyDocument"]["Statement"] for p in resources(by_name, "AWS::IAM::Policy").values()]
    resources_read = [s["Resource"] for statements in policies for s in statements if s["Action"] == "s3:GetObject"]
    # In the stack's partition: a literal where the region is known (cn-north-1 is in aws-cn).
    partition_arn = (
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::my-llm-artifacts/llm/tp8/*"]]}
        if env is None
        else "arn:aws-cn:s3:::my-llm-artifacts/llm/tp8/*"
    )
    assert partition_arn in resources_read


def test_grant_read_on_a_bucket_name_grants_what_an_imported_bucket_grants() -> None:
    def statements(by_name: bool) -> Any:
        stack = new_stack()
        role = iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        bucket: s3.IBucket | str = "my-llm-artifacts" if by_name else s3.Bucket.from_bucket_name(stack, "Artifacts", "my-llm-artifacts")
        ModelData.from_s3_prefix(bucket, "llm/").grant_read(role)
        return only(template_of(stack), "AWS::IAM::Policy")["PolicyDocument"]["Statement"]

    granted = statements(True)
    assert granted == statements(False)
    assert [s["Action"] for s in granted] == ["s3:GetObject", "s3:ListBucket"]


@pytest.mark.parametrize("bucket", ["My_Bucket", "ab", "-starts-with-a-hyphen", 42])
def test_model_data_refuses_what_is_no_bucket(bucket: object) -> None:
    with pytest.raises(PoolConfigError) as error:
        ModelData.from_s3_prefix(bucket, "llm/")  # type: ignore[arg-type]
    assert error.value.field == "ModelData.bucket"


def test_model_waits_for_its_policy_and_renders_prefix_data(default_template: dict[str, Any]) -> None:
    models = resources(default_template, "AWS::SageMaker::Model")
    base = next(v for k, v in models.items() if k.startswith("Base"))
    assert any(d.startswith("BaseExecutionRoleDefaultPolicy") for d in base["DependsOn"])
    container = base["Properties"]["PrimaryContainer"]
    assert container["ModelDataSource"]["S3DataSource"]["S3DataType"] == "S3Prefix"
    assert container["ModelDataSource"]["S3DataSource"]["CompressionType"] == "None"
    int4 = next(v for k, v in models.items() if k.startswith("Int4"))
    assert "ModelDataUrl" in int4["Properties"]["PrimaryContainer"]


def test_model_from_ecr_repository_vpc_and_given_role() -> None:
    stack = new_stack()
    repo = ecr.Repository(stack, "Repo")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2)
    PoolModel(stack, "Vpc Model", image=ContainerImage.from_ecr_repository(repo, "v1"), vpc=vpc, network_isolation=True)
    role = iam.Role(stack, "Given", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    PoolModel(stack, "Given Role", image=ContainerImage.from_image_uri(IMAGE), role=role)
    template = template_of(stack)
    models = resources(template, "AWS::SageMaker::Model")
    vpc_model = next(v for k, v in models.items() if k.startswith("VpcModel"))["Properties"]
    assert vpc_model["EnableNetworkIsolation"] is True
    assert len(vpc_model["VpcConfig"]["Subnets"]) == 2 and len(vpc_model["VpcConfig"]["SecurityGroupIds"]) == 1
    given = next(v for k, v in models.items() if k.startswith("GivenRole"))["Properties"]
    assert given["ExecutionRoleArn"]["Fn::GetAtt"][0].startswith("Given")
    # No policy is added to a role the user gave us.
    assert not any(k.startswith("GivenRole") for k in resources(template, "AWS::IAM::Policy"))
    assert all(not problems for problems in template_problems(template).values())


def test_model_from_recommendation_renders_package_and_spec() -> None:
    stack = new_stack()
    arn = "arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b/3"
    model = PoolModel.from_recommendation(
        stack, "RecG6", model_package_arn=arn, inference_specification_name="g6-48xlarge-int4", artifacts_bucket=s3.Bucket(stack, "Out")
    )
    assert isinstance(model, PoolModel)
    template = template_of(stack)
    container = only(template, "AWS::SageMaker::Model")["PrimaryContainer"]
    assert container == {"ModelPackageName": arn, "InferenceSpecificationName": "g6-48xlarge-int4"}
    assert all(not problems for problems in template_problems(template).values())


def test_created_roles_of_a_stack_are_whole_and_stay_open_to_the_user() -> None:
    stack = new_stack()
    key = kms.Key(stack, "ArtifactsKey")
    bucket = s3.Bucket(stack, "Artifacts", encryption_key=key)
    repo = ecr.Repository(stack, "Repo")
    first = PoolModel(stack, "First", image=ContainerImage.from_image_uri(IMAGE), model_data=ModelData.from_s3_prefix(bucket, "a/"))
    second = PoolModel.from_recommendation(
        stack,
        "Second",
        model_package_arn="arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b/3",
        inference_specification_name="g6",
        artifacts_bucket=bucket,
        image_repository=repo,
    )
    # A statement the user adds later goes to the same default policy, which the model waits for.
    first.role.add_to_principal_policy(iam.PolicyStatement(actions=["sqs:SendMessage"], resources=["*"]))
    template = template_of(stack)
    policies = resources(template, "AWS::IAM::Policy")
    assert sorted(k[: len("FirstExecutionRoleDefaultPolicy")] for k in policies if k.startswith("First")) == [
        "FirstExecutionRoleDefaultPolicy"
    ]
    models = resources(template, "AWS::SageMaker::Model")
    for name in ("First", "Second"):
        model = next(v for k, v in models.items() if k.startswith(name))
        assert any(d.startswith(f"{name}ExecutionRoleDefaultPolicy") for d in model["DependsOn"])
    actions = {
        name: [s["Action"] for s in _policy_statements(template, f"{name}ExecutionRole")] for name in ("First", "Second")
    }
    flat = {name: {a for x in acts for a in ([x] if isinstance(x, str) else x)} for name, acts in actions.items()}
    for name in ("First", "Second"):
        # Each role has the logs and metrics every execution role starts from, and its KMS grant.
        assert {"logs:PutLogEvents", "cloudwatch:PutMetricData", "kms:Decrypt", "s3:GetObject", "s3:ListBucket"} <= flat[name]
    assert "sqs:SendMessage" in flat["First"] and "sqs:SendMessage" not in flat["Second"]
    assert {"ecr:BatchGetImage", "ecr:GetAuthorizationToken"} <= flat["Second"]
    assert all(not problems for problems in template_problems(template).values())


def test_grant_invoke_is_scoped_to_the_endpoint() -> None:
    stack, endpoint = _three_pool_stack()
    role = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())
    endpoint.grant_invoke(role)
    imported = PooledEndpoint.from_endpoint_name(stack, "Other", "Legacy-LLM")
    imported.grant_invoke(role)
    template = template_of(stack)
    statements = next(v for k, v in resources(template, "AWS::IAM::Policy").items() if k.startswith("CallerDefaultPolicy"))[
        "Properties"
    ]["PolicyDocument"]["Statement"]
    endpoint_id = next(iter(resources(template, "AWS::SageMaker::Endpoint")))
    # One statement: the two grants differ only in resource, and minimizePolicies (cdk.json) merges them.
    (statement,) = statements
    assert statement["Action"] == ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
    assert statement["Effect"] == "Allow" and "Condition" not in statement
    own, other = statement["Resource"]
    assert own == {"Fn::GetAtt": [endpoint_id, "EndpointArn"]}
    assert other["Fn::Join"][1][-1] == ":endpoint/legacy-llm"


def test_endpoint_name_is_the_literal_when_fixed_and_a_token_otherwise() -> None:
    stack = new_stack()
    base = PoolModel.from_model_name(stack, "Base", "base")
    pools = [InstancePool(instance_type=G6E)]
    named = PooledEndpoint(stack, "Named", model=base, pools=pools, endpoint_name="llm-pooled")
    generated = PooledEndpoint(stack, "Generated", model=base, pools=pools)
    assert named.endpoint_name == "llm-pooled"
    assert cdk.Token.is_unresolved(generated.endpoint_name)
    assert stack.resolve(generated.endpoint_name) == {"Fn::GetAtt": [stack.get_logical_id(generated.node.default_child), "EndpointName"]}  # type: ignore[arg-type]


def _named(scope: cdk.Stack, id: str, name: str) -> PooledEndpoint:
    return PooledEndpoint(
        scope, id, model=PoolModel.from_model_name(scope, f"{id}Model", "base"), pools=[InstancePool(instance_type=G6E)], endpoint_name=name
    )


US_EAST_1 = cdk.Environment(account="123456789012", region="us-east-1")


def test_a_fixed_endpoint_name_taken_in_the_stack_is_refused_and_nothing_is_added() -> None:
    stack = new_stack()
    _named(stack, "First", "llm-pooled")
    with pytest.raises(PoolConfigError) as err:
        _named(stack, "Second", "llm-pooled")
    assert (err.value.field, err.value.value) == ("PooledEndpoint.endpoint_name", "llm-pooled")
    assert "no other endpoint in this stack" in err.value.allowed and "Test/First" in err.value.allowed
    assert not stack.node.try_find_child("Second")  # refused before any construct was made
    assert len(resources(template_of(stack), "AWS::SageMaker::Endpoint")) == 1


@pytest.mark.parametrize(
    ("first_env", "second_env"),
    [(None, None), (US_EAST_1, US_EAST_1)],
    ids=["both environment-agnostic", "both in one account and region"],
)
def test_a_fixed_endpoint_name_taken_in_another_stack_of_the_same_environment_is_refused(
    first_env: cdk.Environment | None, second_env: cdk.Environment | None
) -> None:
    app = new_app()
    _named(cdk.Stack(app, "Prod", env=first_env), "Endpoint", "llm-pooled")
    with pytest.raises(PoolConfigError) as err:
        _named(cdk.Stack(app, "Canary", env=second_env), "Endpoint", "llm-pooled")
    assert err.value.field == "PooledEndpoint.endpoint_name"
    assert "stack Prod deploys to the same account and region" in err.value.allowed
    assert "Prod/Endpoint has it" in err.value.allowed


@pytest.mark.parametrize(
    ("first_env", "second_env"),
    [
        (US_EAST_1, cdk.Environment(account="123456789012", region="us-west-2")),
        (US_EAST_1, cdk.Environment(account="210987654321", region="us-east-1")),
        (US_EAST_1, None),  # may or may not be the same account and region: not compared
    ],
    ids=["other region", "other account", "concrete and environment-agnostic"],
)
def test_the_same_fixed_name_in_another_environment_is_accepted(
    first_env: cdk.Environment, second_env: cdk.Environment | None
) -> None:
    app = new_app()
    first = _named(cdk.Stack(app, "Prod", env=first_env), "Endpoint", "llm-pooled")
    second = _named(cdk.Stack(app, "Other", env=second_env), "Endpoint", "llm-pooled")
    assert first.endpoint_name == second.endpoint_name == "llm-pooled"


def test_names_that_are_tokens_imports_and_other_apps_are_not_compared() -> None:
    stack = new_stack()
    name = cdk.CfnParameter(stack, "Name", default="llm-pooled").value_as_string
    _named(stack, "FromParameter", name)
    _named(stack, "FromParameterToo", name)  # known only at deploy time: CloudFormation decides
    _named(stack, "Named", "llm-pooled")
    PooledEndpoint.from_endpoint_name(stack, "ByName", "llm-pooled")  # a reference, not a second endpoint
    _named(new_stack(), "Named", "llm-pooled")  # another app
    names = sorted(json.dumps(e["Properties"]["EndpointName"]) for e in resources(template_of(stack), "AWS::SageMaker::Endpoint").values())
    assert names == ['"llm-pooled"', '{"Ref": "Name"}', '{"Ref": "Name"}']


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("us-east-1", "aws"),
        ("eu-central-2", "aws"),
        ("il-central-1", "aws"),
        ("cn-north-1", "aws-cn"),
        ("cn-northwest-1", "aws-cn"),
        ("us-gov-west-1", "aws-us-gov"),
        ("us-gov-east-1", "aws-us-gov"),
        ("us-iso-east-1", "aws-iso"),
        ("us-isob-east-1", "aws-iso-b"),
        ("eu-isoe-west-1", "aws-iso-e"),
        ("us-isof-south-1", "aws-iso-f"),
    ],
)
def test_partition_of_a_region(region: str, partition: str) -> None:
    from sagemaker_pools.model import partition_of_region

    assert partition_of_region(region) == partition


def test_the_partition_table_is_botocores() -> None:
    """The table read as a file is the one botocore's own loader returns."""
    from botocore.loaders import create_loader

    from sagemaker_pools.model import _partitions

    assert list(_partitions()) == create_loader().load_data("partitions")["partitions"]


def test_partition_of_a_token_or_unknown_region_is_the_stacks() -> None:
    from sagemaker_pools.model import partition_of_region

    stack = new_stack()
    assert stack.resolve(partition_of_region(cdk.Aws.REGION)) == {"Ref": "AWS::Partition"}
    assert stack.resolve(partition_of_region("moon-base-1")) == {"Ref": "AWS::Partition"}


@pytest.mark.parametrize(
    ("uri", "arn"),
    [
        (
            "763104351884.dkr.ecr.us-gov-west-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
            "arn:aws-us-gov:ecr:us-gov-west-1:763104351884:repository/djl-inference",
        ),
        (
            "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/djl-inference:0.33.0-lmi15.0.0-cu128",
            "arn:aws-cn:ecr:cn-north-1:727897471807:repository/djl-inference",
        ),
        (IMAGE, "arn:aws:ecr:us-west-2:763104351884:repository/djl-inference"),
    ],
    ids=["gov", "china", "commercial"],
)
def test_ecr_pull_is_granted_in_the_images_partition(uri: str, arn: str) -> None:
    stack = new_stack()
    PoolModel(stack, "Model", image=ContainerImage.from_image_uri(uri))
    statements = _policy_statements(template_of(stack), "ModelExecutionRole")
    (pull,) = [s for s in statements if "ecr:BatchGetImage" in s["Action"]]
    assert pull["Resource"] == arn
