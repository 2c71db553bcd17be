"""Check synthesized CloudFormation resources against the real AWS API contract (botocore).

Each resource is turned into the API request CloudFormation's handler would send (for example
``AWS::SageMaker::EndpointConfig`` -> ``CreateEndpointConfig``), with intrinsic functions
replaced by placeholder values valid for the target member, then checked two ways:

* botocore's own ``ParamValidator`` (required members, types, minimums, unknown members);
* a walk of the shape model for what botocore does not check: enums, maxima, patterns.
"""

from __future__ import annotations

import regex  # botocore patterns are Java-style: \p{L} classes, surrogate-pair ranges
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import botocore.session
from botocore.model import ListShape, MapShape, OperationModel, Shape, StringShape, StructureShape
from botocore.validate import ParamValidator

ACCOUNT = "123456789012"
REGION = "us-east-1"

# Candidate values for a string member whose template value is an intrinsic: the first one
# that satisfies the member's pattern and length is used.
_STRING_CANDIDATES = (
    "placeholder-1",
    f"arn:aws:iam::{ACCOUNT}:role/placeholder",
    f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    f"arn:aws:sns:{REGION}:{ACCOUNT}:placeholder",
    f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model-package/placeholder/1",
    f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/placeholder-1",
    "s3://placeholder-bucket/placeholder/",
    f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/placeholder:latest",
    "placeholder",
)
_PSEUDO = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": "amazonaws.com"}


@lru_cache(maxsize=None)
def service_model(service: str) -> Any:
    """botocore's service model for ``service`` (e.g. ``"sagemaker"``)."""
    return botocore.session.get_session().get_service_model(service)


def operation(service: str, name: str) -> OperationModel:
    """One operation's model."""
    return service_model(service).operation_model(name)


# Application Auto Scaling spells "any XML character above U+FFFF" as a Java surrogate-pair range,
# which no Python regex engine compiles: rewrite it as the code-point range it means.
_JAVA_SURROGATE_RANGE = r"\uD800\uDC00-\uDBFF\uDFFF"


def matches(pattern: str, value: str) -> bool:
    """``value`` matches the whole of botocore ``pattern`` (the service matches whole values)."""
    return regex.fullmatch(pattern.replace(_JAVA_SURROGATE_RANGE, r"\U00010000-\U0010FFFF"), value) is not None


def _is_intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt", "Fn::Join", "Fn::Sub", "Fn::Select", "Fn::If", "Fn::ImportValue", "Fn::Split")


def _placeholder(shape: Shape) -> Any:
    if shape.type_name == "string":
        if shape.enum:
            return shape.enum[0]
        pattern = shape.metadata.get("pattern")
        low, high = shape.metadata.get("min", 0), shape.metadata.get("max", 10**9)
        for candidate in _STRING_CANDIDATES:
            if low <= len(candidate) <= high and (pattern is None or matches(pattern, candidate)):
                return candidate
        raise AssertionError(f"no placeholder fits {shape.name} (pattern {pattern!r})")
    if shape.type_name in ("integer", "long"):
        return max(1, shape.metadata.get("min", 1))
    if shape.type_name in ("float", "double"):
        return float(shape.metadata.get("min", 1))
    if shape.type_name == "boolean":
        return True
    raise AssertionError(f"cannot make a placeholder for {shape.name} ({shape.type_name})")


def _join_text(value: Any) -> str:
    """Render an intrinsic inside a Fn::Join as plausible text (pseudo parameters resolved)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Ref" in value:
        return _PSEUDO.get(value["Ref"], "placeholder1")
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(_join_text(p) for p in parts)
    return "placeholder1"


def resolve(value: Any, shape: Shape) -> Any:
    """``value`` with every intrinsic replaced by a placeholder valid for ``shape``."""
    if _is_intrinsic(value):
        if "Fn::Join" in value and shape.type_name == "string" and not shape.enum:
            return _join_text(value)
        if "Ref" in value and value["Ref"] in _PSEUDO:
            return _PSEUDO[value["Ref"]]
        return _placeholder(shape)
    if isinstance(shape, StructureShape) and isinstance(value, dict):
        return {k: resolve(v, shape.members[k]) if k in shape.members else v for k, v in value.items()}
    if isinstance(shape, ListShape) and isinstance(value, list):
        return [resolve(v, shape.member) for v in value]
    if isinstance(shape, MapShape) and isinstance(value, dict):
        return {k: resolve(v, shape.value) for k, v in value.items()}
    if shape.type_name in ("integer", "long") and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)  # CloudFormation passes numbers as strings sometimes
    if shape.type_name in ("float", "double") and isinstance(value, (int, str)) and not isinstance(value, bool):
        return float(value)
    if shape.type_name == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def _walk(shape: Shape, value: Any, path: str) -> Iterator[str]:
    """What botocore's validator leaves out: enums, maxima, patterns (whole-value match)."""
    meta = shape.metadata
    if isinstance(shape, StructureShape) and isinstance(value, dict):
        for key, item in value.items():
            if key in shape.members:
                yield from _walk(shape.members[key], item, f"{path}.{key}")
    elif isinstance(shape, ListShape) and isinstance(value, list):
        if "max" in meta and len(value) > meta["max"]:
            yield f"{path}: {len(value)} items > max {meta['max']}"
        for index, item in enumerate(value):
            yield from _walk(shape.member, item, f"{path}[{index}]")
    elif isinstance(shape, MapShape) and isinstance(value, dict):
        if "max" in meta and len(value) > meta["max"]:
            yield f"{path}: {len(value)} entries > max {meta['max']}"
    elif isinstance(shape, StringShape) and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            yield f"{path}: {value!r} not in enum {shape.name}"
        if "max" in meta and len(value) > meta["max"]:
            yield f"{path}: length {len(value)} > max {meta['max']}"
        if "pattern" in meta and not matches(meta["pattern"], value):
            yield f"{path}: {value!r} does not match {meta['pattern']!r}"
    elif shape.type_name in ("integer", "long", "float", "double") and isinstance(value, (int, float)):
        if "max" in meta and value > meta["max"]:
            yield f"{path}: {value} > max {meta['max']}"


def check_request(service: str, operation_name: str, params: dict[str, Any]) -> list[str]:
    """Every way ``params`` breaks ``operation_name``'s input contract (empty when valid)."""
    shape = operation(service, operation_name).input_shape
    params = resolve(params, shape)
    problems: list[str] = []
    report = ParamValidator().validate(params, shape)
    if report.has_errors():
        problems.append(report.generate_report())
    problems.extend(_walk(shape, params, operation_name))
    return problems


# -- CloudFormation resource -> API requests ---------------------------------------------------


def _endpoint_requests(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    name = props.get("EndpointName", "placeholder-1")
    create = {"EndpointName": name, "EndpointConfigName": props["EndpointConfigName"]}
    for key in ("DeploymentConfig", "Tags"):
        if key in props:
            create[key] = props[key]
    update = {"EndpointName": name, "EndpointConfigName": props["EndpointConfigName"]}
    for key in ("DeploymentConfig", "RetainAllVariantProperties", "ExcludeRetainedVariantProperties", "RetainDeploymentConfig"):
        if key in props:
            update[key] = props[key]
    return [("sagemaker", "CreateEndpoint", create), ("sagemaker", "UpdateEndpoint", update)]


def _inference_component_requests(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """CreateInferenceComponent, and UpdateInferenceComponent for what only an update carries.

    CloudFormation's create handler calls CreateInferenceComponent (no DeploymentConfig member);
    DeploymentConfig is write-only and sent by the update handler (UpdateInferenceComponent).
    EndpointArn is a CloudFormation-only convenience with no API counterpart.
    """
    name = props.get("InferenceComponentName", "placeholder-1")
    create = {k: v for k, v in props.items() if k not in ("EndpointArn", "DeploymentConfig")}
    create.setdefault("InferenceComponentName", name)
    update = {"InferenceComponentName": name}
    for key in ("Specification", "Specifications", "RuntimeConfig", "DeploymentConfig"):
        if key in props:
            update[key] = props[key]
    return [("sagemaker", "CreateInferenceComponent", create), ("sagemaker", "UpdateInferenceComponent", update)]


def _named(service: str, op: str, name_key: str, drop: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], list[tuple[str, str, dict[str, Any]]]]:
    def convert(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        params = {k: v for k, v in props.items() if k not in drop}
        params.setdefault(name_key, "placeholder-1")
        return [(service, op, params)]

    return convert


def _scaling_policy(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    params = {k: v for k, v in props.items() if k != "ScalingTargetId"}
    # With ScalingTargetId, CloudFormation takes the target's ResourceId/dimension/namespace.
    params.setdefault("ServiceNamespace", "sagemaker")
    params.setdefault("ResourceId", "endpoint/placeholder-1/variant/AllTraffic")
    params.setdefault("ScalableDimension", "sagemaker:variant:DesiredInstanceCount")
    return [("application-autoscaling", "PutScalingPolicy", params)]


def _alarm(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    params = dict(props)
    params.setdefault("AlarmName", "placeholder-1")
    return [("cloudwatch", "PutMetricAlarm", params)]


def _scalable_target(props: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """RegisterScalableTarget: CloudFormation's ``Tags`` list of {Key, Value} is the API's ``Tags`` map."""
    params = {k: v for k, v in props.items() if k != "ScheduledActions"}
    params.setdefault("ResourceId", "placeholder-1")
    if isinstance(params.get("Tags"), list):
        params["Tags"] = {tag["Key"]: tag["Value"] for tag in params["Tags"]}
    return [("application-autoscaling", "RegisterScalableTarget", params)]


REQUESTS: dict[str, Callable[[dict[str, Any]], list[tuple[str, str, dict[str, Any]]]]] = {
    "AWS::SageMaker::Model": _named("sagemaker", "CreateModel", "ModelName"),
    "AWS::SageMaker::EndpointConfig": _named("sagemaker", "CreateEndpointConfig", "EndpointConfigName"),
    "AWS::SageMaker::Endpoint": _endpoint_requests,
    "AWS::SageMaker::InferenceComponent": _inference_component_requests,
    "AWS::ApplicationAutoScaling::ScalableTarget": _scalable_target,
    "AWS::ApplicationAutoScaling::ScalingPolicy": _scaling_policy,
    "AWS::CloudWatch::Alarm": _alarm,
    # CloudFormation's properties are CreateAIWorkloadConfig's members, name for name.
    "AWS::SageMaker::AIWorkloadConfig": _named("sagemaker", "CreateAIWorkloadConfig", "AIWorkloadConfigName"),
}


def template_problems(template: dict[str, Any]) -> dict[str, list[str]]:
    """``{logical id: problems}`` for every resource of a known type in ``template``."""
    found: dict[str, list[str]] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        convert = REQUESTS.get(resource["Type"])
        if convert is None:
            continue
        problems: list[str] = []
        for service, op, params in convert(resource.get("Properties", {})):
            problems.extend(f"{op}: {p}" for p in check_request(service, op, params))
        found[logical_id] = problems
    return found
