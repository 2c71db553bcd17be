"""The execution role the library creates (``_roles.ExecutionRole``): the template of the
``iam.Role`` it stands in for, and an ``IRole`` that takes every grant the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from sagemaker_pools import ContainerImage, InstancePool, InstanceScaling, ModelData, PooledEndpoint, PoolModel
from sagemaker_pools._roles import ExecutionRole, statement
from support.synth import new_app, resources, template_of

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"

#: What a user may do with a created model's role, each applied to the role as ``iam.IRole``.
USES: dict[str, Callable[[cdk.Stack, iam.IRole], object]] = {
    "nothing more": lambda stack, role: None,
    "add_to_principal_policy": lambda stack, role: role.add_to_principal_policy(
        iam.PolicyStatement(actions=["sqs:SendMessage"], resources=["arn:aws:sqs:us-east-1:123456789012:q"])
    ),
    "a bucket's grant_read": lambda stack, role: s3.Bucket(stack, "Data").grant_read(role),
    "a key's grant_decrypt": lambda stack, role: kms.Key(stack, "Key").grant_decrypt(role),
    "add_managed_policy, twice the same": lambda stack, role: [
        role.add_managed_policy(policy)
        for policy in [iam.ManagedPolicy.from_aws_managed_policy_name("AmazonS3ReadOnlyAccess")] * 2
    ],
    "attach_inline_policy": lambda stack, role: role.attach_inline_policy(
        iam.Policy(stack, "Extra", statements=[iam.PolicyStatement(actions=["sns:Publish"], resources=["*"])])
    ),
    "a policy that names the role": lambda stack, role: iam.Policy(
        stack, "Attached", statements=[iam.PolicyStatement(actions=["sns:Publish"], resources=["*"])], roles=[role]
    ),
    "grant_pass_role and grant_assume_role to a user": lambda stack, role: [
        role.grant_pass_role(user := iam.User(stack, "Operator")),
        role.grant_assume_role(user),
        role.grant(user, "iam:GetRole"),
    ],
    "the role as a principal of a resource policy": lambda stack, role: s3.Bucket(stack, "Shared").add_to_resource_policy(
        iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"], principals=[role])
    ),
    "apply_removal_policy": lambda stack, role: role.apply_removal_policy(cdk.RemovalPolicy.RETAIN),
    "add_to_policy (iam.Role's older name)": lambda stack, role: role.add_to_policy(  # type: ignore[attr-defined]
        iam.PolicyStatement(actions=["sqs:SendMessage"], resources=["arn:aws:sqs:us-east-1:123456789012:q"])
    ),
    "role_arn, role_name and role_ref read": lambda stack, role: [
        cdk.CfnOutput(stack, "Arn", value=role.role_arn),
        cdk.CfnOutput(stack, "Name", value=role.role_name),
        cdk.CfnOutput(stack, "RefArn", value=role.role_ref.role_arn),
    ],
}


def _stack_with(make_role: Callable[[Construct], iam.IRole], use: Callable[[cdk.Stack, iam.IRole], object], parent_id: str) -> dict[str, Any]:
    stack = cdk.Stack(new_app(), "Roles")
    parent = Construct(stack, parent_id)
    use(stack, make_role(parent))
    return template_of(stack)


def _l2(scope: Construct) -> iam.IRole:
    role = iam.Role(scope, "ExecutionRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    role.add_to_principal_policy(iam.PolicyStatement(actions=["logs:PutLogEvents"], resources=["*"]))
    return role


def _lean(scope: Construct) -> iam.IRole:
    return ExecutionRole(scope, "ExecutionRole", statements=[statement(["logs:PutLogEvents"], ["*"])]).role


#: Statements of the shapes the library writes: several actions and resources, conditions, and
#: more than one on "*" (which CDK's minimizing merges when their conditions agree).
FIRST_STATEMENTS = [
    (["logs:CreateLogGroup", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/a/*", "arn:aws:logs:us-east-1:123456789012:log-group:/b/*"], None),
    (["cloudwatch:PutMetricData"], ["*"], {"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker*"]}}),
    (["ec2:CreateNetworkInterface", "ec2:DescribeVpcs"], ["*"], None),
    (["ecr:GetAuthorizationToken"], ["*"], None),
    (["s3:GetObject"], [cdk.Fn.join("", ["arn:", cdk.Aws.PARTITION, ":s3:::bucket/prefix/*"])], None),
    (["s3:ListBucket"], ["arn:aws:s3:::bucket"], {"StringLike": {"s3:prefix": ["prefix/*"]}}),
]


def test_first_statements_as_json_render_as_policy_statements_do() -> None:
    """The lean role takes its first statements as JSON and makes its document from them in one
    call; the template is the one ``iam.Role`` writes for the same ``PolicyStatement``s."""

    def l2(scope: Construct) -> iam.IRole:
        role = iam.Role(scope, "ExecutionRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        for actions, arns, conditions in FIRST_STATEMENTS:
            role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=arns, conditions=conditions))
        return role

    def lean(scope: Construct) -> iam.IRole:
        return ExecutionRole(scope, "ExecutionRole", statements=[statement(*s) for s in FIRST_STATEMENTS]).role

    template = _stack_with(lean, USES["add_to_principal_policy"], "Model")
    assert template == _stack_with(l2, USES["add_to_principal_policy"], "Model")
    (policy,) = resources(template, "AWS::IAM::Policy").values()
    document = policy["Properties"]["PolicyDocument"]["Statement"]
    assert len(document) < len(FIRST_STATEMENTS) + 1  # minimizing merged something: the comparison covers it
    assert any(s.get("Condition", {}).get("StringLike", {}).get("s3:prefix") == ["prefix/*"] for s in document)


@pytest.mark.parametrize("use", list(USES), ids=list(USES))
def test_the_role_synthesizes_what_iam_role_synthesizes(use: str) -> None:
    """Same logical ids, policy names and documents as ``iam.Role`` with a default policy, for
    every use of the ``IRole`` a user may make."""
    lean = _stack_with(_lean, USES[use], "Model")
    assert lean == _stack_with(_l2, USES[use], "Model")
    if use != "nothing more":  # the use shows in the template: the equality above compares something
        assert lean != _stack_with(_lean, USES["nothing more"], "Model")


def test_a_long_path_names_the_policy_as_iam_policy_does() -> None:
    """``iam.Policy`` names itself after the last 128 characters of its logical id; so does the lean role's."""
    parent_id = "A" * 150
    lean = _stack_with(_lean, USES["nothing more"], parent_id)
    (name,) = [p["Properties"]["PolicyName"] for p in resources(lean, "AWS::IAM::Policy").values()]
    (logical_id,) = resources(lean, "AWS::IAM::Policy")
    assert len(logical_id) > 128 and name == logical_id[-128:]
    assert lean == _stack_with(_l2, USES["nothing more"], parent_id)


def test_a_created_model_role_is_lean_and_its_model_waits_for_its_policy() -> None:
    stack = cdk.Stack(new_app(), "Models")
    model = PoolModel(stack, "Int4", image=ContainerImage.from_image_uri(IMAGE),
                      model_data=ModelData.from_s3_object("my-llm-artifacts", "llm/int4/model.tar.gz"))
    role_construct = model.node.find_child("ExecutionRole")
    assert [c.node.id for c in role_construct.node.children] == ["Resource", "DefaultPolicy"]  # no IRole until asked
    assert model.role.node.path == f"{role_construct.node.path}/Role" and model.role is model.role
    template = template_of(stack)
    (policy_id,) = resources(template, "AWS::IAM::Policy")
    (cfn_model,) = resources(template, "AWS::SageMaker::Model").values()
    assert policy_id in cfn_model["DependsOn"]


def test_role_customization_gets_an_iam_role() -> None:
    """Under ``iam.Role.customize_roles`` only ``iam.Role`` is replaced by a precreated role, so a
    created model's role is one; so it is in a stack that allocates its own logical ids (which
    name ``iam.Policy``)."""

    class OwnIds(cdk.Stack):
        def _allocate_logical_id(self, cfn_element: cdk.CfnElement) -> str:
            return "Own" + super()._allocate_logical_id(cfn_element)

    customized = cdk.Stack(new_app(), "Customized")
    iam.Role.customize_roles(customized)
    own_ids = OwnIds(new_app(), "OwnIds")
    for stack in (customized, own_ids):
        model = PoolModel(stack, "Int4", image=ContainerImage.from_image_uri(IMAGE),
                          model_data=ModelData.from_s3_object("my-llm-artifacts", "llm/int4/model.tar.gz"))
        assert isinstance(model.role, iam.Role)
    # An iam.Role's policy is a construct: the model still waits for it.
    template = template_of(own_ids)
    (policy_id,) = resources(template, "AWS::IAM::Policy")
    (cfn_model,) = resources(template, "AWS::SageMaker::Model").values()
    assert policy_id.startswith("Own") and policy_id in cfn_model["DependsOn"]
    plain = PoolModel(cdk.Stack(new_app(), "Plain"), "Int4", image=ContainerImage.from_image_uri(IMAGE))
    assert isinstance(plain._created_role, ExecutionRole) and not isinstance(plain.role, iam.Role)


@pytest.mark.parametrize("nested", [False, True], ids=["model in a stack", "model in a construct of a stack in a stage"])
def test_a_created_role_names_its_policy_after_the_policy_logical_id(nested: bool) -> None:
    """The policy's name is the last 128 characters of its logical id, as ``iam.Policy`` names
    itself, wherever the model sits (the path is known in Python or asked of Node)."""
    app = new_app()
    stack = cdk.Stack(cdk.Stage(app, "Prod"), "Models") if nested else cdk.Stack(app, "Models")
    scope: Construct = Construct(stack, "Llm" + "Group" * 30) if nested else stack
    PoolModel(scope, "Int4", image=ContainerImage.from_image_uri(IMAGE))
    ((logical_id, policy),) = resources(template_of(stack), "AWS::IAM::Policy").items()
    assert policy["Properties"]["PolicyName"] == logical_id[-128:]
    assert len(logical_id) > 128 if nested else len(logical_id) < 128


@pytest.mark.parametrize("given", [False, True], ids=["its own role", "another model's role, given"])
def test_a_model_less_endpoint_config_waits_for_its_role_policy(given: bool) -> None:
    """CreateEndpointConfig checks that SageMaker can assume the execution role: the config
    depends on the role's default policy, created here or another model's lean role."""
    stack = cdk.Stack(new_app(), "Components")
    other = PoolModel(stack, "Other", image=ContainerImage.from_image_uri(IMAGE))
    PooledEndpoint(stack, "Endpoint", pools=[InstancePool(instance_type="ml.g6e.48xlarge")],
                   instance_scaling=InstanceScaling(max_instance_count=2), execution_role=other.role if given else None)
    template = template_of(stack)
    (config,) = resources(template, "AWS::SageMaker::EndpointConfig").values()
    owner = "Other" if given else "Endpoint"
    (policy_id,) = [k for k in resources(template, "AWS::IAM::Policy") if k.startswith(f"{owner}ExecutionRoleDefaultPolicy")]
    assert policy_id in config["DependsOn"]
