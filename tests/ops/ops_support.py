"""Helpers shared by the command tests (importable by name: conftest modules are not)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sagemaker_pools.ops.aws import AwsOptions, Clients

#: The fixed "now" of command runs (names generated from the time use it).
NOW = dt.datetime(2026, 11, 29, 10, 15, 0, tzinfo=dt.timezone.utc)


class StubClients(Clients):
    """Clients whose SageMaker (and Application Auto Scaling, CloudWatch, CloudFormation) clients are the given
    (Stubber-wrapped) ones."""

    def __init__(self, sagemaker: Any, autoscaling: Any = None, cloudwatch: Any = None, cloudformation: Any = None) -> None:
        super().__init__(AwsOptions(region="us-east-1"))
        self._sagemaker = sagemaker
        self._autoscaling = autoscaling
        self._cloudwatch = cloudwatch
        self._cloudformation = cloudformation

    def sagemaker(self) -> Any:
        return self._sagemaker

    def autoscaling(self) -> Any:
        assert self._autoscaling is not None, "this test gave no Application Auto Scaling client"
        return self._autoscaling

    def cloudwatch(self) -> Any:
        assert self._cloudwatch is not None, "this test gave no CloudWatch client"
        return self._cloudwatch

    def cloudformation(self) -> Any:
        assert self._cloudformation is not None, "this test gave no CloudFormation client"
        return self._cloudformation


@dataclasses.dataclass
class Result:
    """What one command run printed and returned."""

    code: int
    out: str
    err: str
    sleeps: list[float]


def not_managed(cfn_stub: Any, endpoint_arn: str) -> None:
    """Queue CloudFormation's answer for an endpoint no stack owns (DescribeStackResources' ValidationError)."""
    cfn_stub.add_client_error(
        "describe_stack_resources",
        service_error_code="ValidationError",
        service_message=f"Stack for {endpoint_arn} does not exist",
        http_status_code=400,
        expected_params={"PhysicalResourceId": endpoint_arn},
    )
