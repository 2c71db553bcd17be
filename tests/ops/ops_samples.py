"""Realistic SageMaker API responses for the command tests (Stubber checks them against the service model)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-1"
T0 = dt.datetime(2026, 11, 28, 9, 0, 0, tzinfo=dt.timezone.utc)
T1 = dt.datetime(2026, 11, 29, 10, 0, 0, tzinfo=dt.timezone.utc)


def arn(kind: str, name: str) -> str:
    """``arn:aws:sagemaker:us-east-1:123456789012:<kind>/<name>``."""
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:{kind}/{name.lower()}"


def endpoint(name: str, config: str, variants: list[dict[str, Any]], status: str = "InService", **extra: Any) -> dict[str, Any]:
    """A DescribeEndpoint output."""
    return {
        "EndpointName": name,
        "EndpointArn": arn("endpoint", name),
        "EndpointConfigName": config,
        "ProductionVariants": variants,
        "EndpointStatus": status,
        "CreationTime": T0,
        "LastModifiedTime": T1,
        **extra,
    }


def config(name: str, variants: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A DescribeEndpointConfig output."""
    return {
        "EndpointConfigName": name,
        "EndpointConfigArn": arn("endpoint-config", name),
        "ProductionVariants": variants,
        "CreationTime": T0,
        **extra,
    }


def live_variant(pools: dict[str, int], name: str = "AllTraffic", **extra: Any) -> dict[str, Any]:
    """A ProductionVariantSummary with per-type instance counts."""
    return {
        "VariantName": name,
        "DeployedImages": [
            {
                "SpecifiedImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
                "ResolvedImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference@sha256:" + "a" * 64,
                "ResolutionTime": T0,
            }
        ],
        "CurrentWeight": 1.0,
        "DesiredWeight": 1.0,
        "CurrentInstanceCount": sum(pools.values()),
        "DesiredInstanceCount": sum(pools.values()),
        "InstancePools": [{"InstanceType": t, "CurrentInstanceCount": n} for t, n in pools.items()],
        **extra,
    }


LOR = {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}

# -- one pool ----------------------------------------------------------------------------------

ONE_POOL_CONFIG = config(
    "llm-prod-config-1",
    [
        {
            "VariantName": "AllTraffic",
            "ModelName": "llm-70b",
            "InitialInstanceCount": 2,
            "InstancePools": [{"InstanceType": "ml.g6e.48xlarge", "Priority": 1}],
            "VariantInstanceProvisionTimeoutInSeconds": 1200,
            "RoutingConfig": LOR,
        }
    ],
)
ONE_POOL_ENDPOINT = endpoint("llm-prod", "llm-prod-config-1", [live_variant({"ml.g6e.48xlarge": 2})])

# -- three pools, two fallbacks in use (the config lists them out of priority order) ------------

THREE_POOLS_CONFIG = config(
    "llm-prod-config-2",
    [
        {
            "VariantName": "AllTraffic",
            "ModelName": "llm-70b",
            "InitialInstanceCount": 4,
            "InstancePools": [
                {"InstanceType": "ml.p4d.24xlarge", "Priority": 3, "ModelNameOverride": "llm-70b-int4"},
                {"InstanceType": "ml.g6e.48xlarge", "Priority": 1},
                {"InstanceType": "ml.g6.48xlarge", "Priority": 2, "ModelNameOverride": "llm-70b-g6"},
            ],
            "VariantInstanceProvisionTimeoutInSeconds": 1200,
            "RoutingConfig": LOR,
        }
    ],
)
THREE_POOLS_ENDPOINT = endpoint(
    "llm-prod",
    "llm-prod-config-2",
    [live_variant({"ml.g6e.48xlarge": 1, "ml.g6.48xlarge": 2, "ml.p4d.24xlarge": 1})],
)

# -- a deployment in progress -----------------------------------------------------------------

PENDING_ENDPOINT = endpoint(
    "llm-prod",
    "llm-prod-config-1",
    [live_variant({"ml.g6e.48xlarge": 2})],
    status="Updating",
    PendingDeploymentSummary={
        "EndpointConfigName": "llm-prod-config-2",
        "StartTime": T1,
        "ProductionVariants": [
            {
                "VariantName": "AllTraffic",
                "CurrentInstanceCount": 1,
                "DesiredInstanceCount": 4,
                "InstancePools": [
                    {"InstanceType": "ml.g6e.48xlarge", "CurrentInstanceCount": 1},
                    {"InstanceType": "ml.g6.48xlarge", "CurrentInstanceCount": 0},
                    {"InstanceType": "ml.p4d.24xlarge", "CurrentInstanceCount": 0},
                ],
                "VariantStatus": [{"Status": "Creating", "StatusMessage": "Launching instances", "StartTime": T1}],
            }
        ],
    },
)

# -- an endpoint that hosts inference components ----------------------------------------------

IC_CONFIG = config(
    "hetero-config-1",
    [
        {
            "VariantName": "primary",
            "InitialInstanceCount": 2,
            "InstancePools": [
                {"InstanceType": "ml.p5.48xlarge", "Priority": 1},
                {"InstanceType": "ml.g6.48xlarge", "Priority": 2},
            ],
            "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4},
            "RoutingConfig": LOR,
        }
    ],
    ExecutionRoleArn=f"arn:aws:iam::{ACCOUNT}:role/sagemaker-endpoint",
)
IC_ENDPOINT = endpoint(
    "my-heterogeneous-endpoint", "hetero-config-1", [live_variant({"ml.p5.48xlarge": 1, "ml.g6.48xlarge": 1}, name="primary")]
)
IC_LIST = {
    "InferenceComponents": [
        {
            "CreationTime": T0,
            "InferenceComponentArn": arn("inference-component", "my-ic"),
            "InferenceComponentName": "my-ic",
            "EndpointArn": arn("endpoint", "my-heterogeneous-endpoint"),
            "EndpointName": "my-heterogeneous-endpoint",
            "VariantName": "primary",
            "InferenceComponentStatus": "InService",
            "LastModifiedTime": T1,
        }
    ]
}
IC_DESCRIBED = {
    "InferenceComponentName": "my-ic",
    "InferenceComponentArn": arn("inference-component", "my-ic"),
    "EndpointName": "my-heterogeneous-endpoint",
    "EndpointArn": arn("endpoint", "my-heterogeneous-endpoint"),
    "VariantName": "primary",
    "Specifications": [
        {
            "InstanceType": "ml.p5.48xlarge",
            "ModelName": "my-model-p5-optimized",
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 8, "MinMemoryRequiredInMb": 65536},
        },
        {
            "InstanceType": "ml.g6.48xlarge",
            "ModelName": "my-model-g6-optimized",
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 8, "MinMemoryRequiredInMb": 32768},
        },
    ],
    "RuntimeConfig": {
        "DesiredCopyCount": 4,
        "CurrentCopyCount": 4,
        "PlacementStatus": [
            {"InstanceType": "ml.p5.48xlarge", "CurrentCopyCount": 3},
            {"InstanceType": "ml.g6.48xlarge", "CurrentCopyCount": 1},
        ],
    },
    "CreationTime": T0,
    "LastModifiedTime": T1,
    "InferenceComponentStatus": "InService",
}

# -- a single-type endpoint to migrate (the launch post's "before") -----------------------------

SINGLE_CONFIG = config(
    "my-config",
    [
        {
            "VariantName": "primary",
            "ModelName": "my-llm",
            "InitialInstanceCount": 2,
            "InstanceType": "ml.g6e.48xlarge",
            "InitialVariantWeight": 1.0,
            "ModelDataDownloadTimeoutInSeconds": 1800,
            "ContainerStartupHealthCheckTimeoutInSeconds": 900,
            "RoutingConfig": LOR,
        }
    ],
)
SINGLE_ENDPOINT = {
    **endpoint("my-endpoint", "my-config", [live_variant({"ml.g6e.48xlarge": 3}, name="primary")]),
}
SINGLE_TAGS = {"Tags": [{"Key": "team", "Value": "ml-platform"}, {"Key": "cost-center", "Value": "4711"}]}

DATA_CAPTURE = {
    "EnableCapture": True,
    "InitialSamplingPercentage": 10,
    "DestinationS3Uri": "s3://capture-bucket/my-endpoint/",
    "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}],
}


def with_variant(cfg: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``cfg`` whose first variant has ``changes`` (None deletes a member)."""
    result = copy.deepcopy(cfg)
    variant = result["ProductionVariants"][0]
    for key, value in changes.items():
        if value is None:
            variant.pop(key, None)
        else:
            variant[key] = value
    return result


# -- AI recommendation jobs ------------------------------------------------------------------


def recommendation(
    instance_type: str, spec: str, cost: str, throughput: str, ttft: str, *, version: int = 1, optimization: str | None = None
) -> dict[str, Any]:
    """One AIRecommendation with expected performance."""
    item: dict[str, Any] = {
        "RecommendationDescription": f"{instance_type} with {optimization or 'no'} optimization",
        "ModelDetails": {
            "ModelPackageArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model-package/llama-70b-recs/{version}",
            "InferenceSpecificationName": spec,
            "InstanceDetails": [{"InstanceType": instance_type, "InstanceCount": 1, "CopyCountPerInstance": 2}],
        },
        "DeploymentConfiguration": {
            "S3": [{"ChannelName": "model", "Uri": f"s3://recs-bucket/llama-70b/{spec}/"}],
            "ImageUri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
            "InstanceType": instance_type,
            "InstanceCount": 1,
            "CopyCountPerInstance": 2,
            "EnvironmentVariables": {"OPTION_TENSOR_PARALLEL_DEGREE": "4", "OPTION_MAX_ROLLING_BATCH_SIZE": "64"},
        },
        "AIBenchmarkJobArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:ai-benchmark-job/bench-{spec}",
        "ExpectedPerformance": [
            {"Metric": "cost", "Stat": "avg", "Value": cost, "Unit": "USD/1M tokens"},
            {"Metric": "throughput", "Stat": "avg", "Value": throughput, "Unit": "tokens/s"},
            {"Metric": "ttft-ms", "Stat": "p90", "Value": str(float(ttft) * 1.5), "Unit": "ms"},
            {"Metric": "ttft-ms", "Stat": "p50", "Value": ttft, "Unit": "ms"},
        ],
    }
    if optimization:
        item["OptimizationDetails"] = [{"OptimizationType": optimization, "OptimizationConfig": {"draft_model": "eagle3"}}]
    return item


def recommendation_job(status: str = "Completed", recommendations: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A DescribeAIRecommendationJob output."""
    job: dict[str, Any] = {
        "AIRecommendationJobName": "llama-70b-recs",
        "AIRecommendationJobArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:ai-recommendation-job/llama-70b-recs",
        "AIRecommendationJobStatus": status,
        "ModelSource": {"S3": {"S3Uri": "s3://models-bucket/llama-70b/"}},
        "OutputConfig": {"S3OutputLocation": "s3://recs-bucket/output/"},
        "AIWorkloadConfigIdentifier": "chat-workload",
        "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/recommender",
        "PerformanceTarget": {"Constraints": [{"Metric": "cost"}, {"Metric": "ttft-ms"}]},
        "ComputeSpec": {"InstanceTypes": ["ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"]},
        "CreationTime": T0,
        **extra,
    }
    if recommendations is not None:
        job["Recommendations"] = recommendations
    return job


RECOMMENDATIONS = [
    recommendation("ml.g6e.48xlarge", "g6e-48xlarge-tp8", cost="4.10", throughput="5200", ttft="180"),
    recommendation("ml.g6.48xlarge", "g6-48xlarge-spec", cost="3.20", throughput="3100", ttft="260", optimization="SpeculativeDecoding"),
    recommendation("ml.p4d.24xlarge", "p4d-24xlarge-int4", cost="5.80", throughput="6100", ttft="140", version=2),
    recommendation("ml.g6.48xlarge", "g6-48xlarge-plain", cost="3.90", throughput="2600", ttft="300", version=3),
]
