"""boto3 sessions and clients for the command: standard retry mode, one place to configure.

Subcommands receive a :class:`Clients` and ask it for clients by service name; tests pass a
:class:`Clients` whose clients are wrapped in botocore's ``Stubber``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from botocore.credentials import ReadOnlyCredentials

__all__ = ["AwsOptions", "Clients", "DEFAULT_MAX_ATTEMPTS", "USER_AGENT", "pages"]

#: botocore's standard-mode default: the first attempt and two retries.
DEFAULT_MAX_ATTEMPTS = 3
USER_AGENT = "sagemaker-pools"


@dataclasses.dataclass(frozen=True)
class AwsOptions:
    """Where and as whom to call AWS.

    Attributes:
        region: AWS region. Default: ``AWS_REGION``, then boto3's resolution (``AWS_DEFAULT_REGION``,
            the profile).
        profile: a named profile from ``~/.aws/config``. Default: boto3's resolution.
        endpoint_url: a different API endpoint (a VPC endpoint, or a local test server).
        max_attempts: total attempts per call in botocore's standard retry mode (1 = no retry).
    """

    region: str | None = None
    profile: str | None = None
    endpoint_url: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


class Clients:
    """Makes (and caches) one boto3 client per service for one :class:`AwsOptions`."""

    def __init__(self, options: AwsOptions) -> None:
        self.options = options
        self._session: boto3.session.Session | None = None
        self._clients: dict[str, Any] = {}

    @property
    def session(self) -> boto3.session.Session:
        """The boto3 session (created on first use: a bad profile fails here)."""
        if self._session is None:
            # botocore reads AWS_DEFAULT_REGION only; AWS_REGION is what the AWS CLI v2, the other
            # SDKs and Lambda set, so honour it too (an explicit --region wins).
            region = self.options.region or os.environ.get("AWS_REGION") or None
            self._session = boto3.session.Session(profile_name=self.options.profile, region_name=region)
        return self._session

    def client(self, service: str, **config: Any) -> Any:
        """A client for ``service`` in standard retry mode; ``config`` adds ``botocore.config.Config`` options."""
        key = service if not config else f"{service}:{sorted(config.items())}"
        if key not in self._clients:
            make: Any = self.session.client  # typed per literal service name; ours is a variable
            self._clients[key] = make(service, config=self._config(**config), endpoint_url=self.options.endpoint_url)
        return self._clients[key]

    def _config(self, **config: Any) -> Config:
        """Standard retry mode with ``max_attempts``, our user agent, and ``config``."""
        return Config(retries={"mode": "standard", "total_max_attempts": self.options.max_attempts}, user_agent_extra=USER_AGENT, **config)

    def sagemaker(self) -> Any:
        """The SageMaker control-plane client."""
        return self.client("sagemaker")

    def s3(self) -> Any:
        """The S3 client (``bench --managed`` reads the job's exports, ``gate --from-capture s3://...``
        the data capture files). ``endpoint_url`` is not used: it names a SageMaker API endpoint, not S3's."""
        if "s3" not in self._clients:
            self._clients["s3"] = self.session.client("s3", config=self._config())
        return self._clients["s3"]

    def autoscaling(self) -> Any:
        """The Application Auto Scaling client."""
        return self.client("application-autoscaling")

    def cloudwatch(self) -> Any:
        """The CloudWatch client."""
        return self.client("cloudwatch")

    def cloudformation(self) -> Any:
        """The CloudFormation client (``migrate`` asks it which stack, if any, owns the endpoint)."""
        return self.client("cloudformation")

    def region(self) -> str:
        """The region the clients call (raises ``NoRegionError`` when none is configured)."""
        from botocore.exceptions import NoRegionError

        region = self.session.region_name
        if not region:
            raise NoRegionError()
        return str(region)

    def frozen_credentials(self) -> ReadOnlyCredentials:
        """The current credentials, resolved once (bench hands them to its worker processes)."""
        from botocore.exceptions import NoCredentialsError

        credentials = self.session.get_credentials()
        if credentials is None:
            raise NoCredentialsError()
        return credentials.get_frozen_credentials()


def pages(call: Callable[..., Mapping[str, Any]], key: str, **kwargs: Any) -> Iterator[Mapping[str, Any]]:
    """Every item under ``key`` of ``call(**kwargs)``, following ``NextToken`` to the last page."""
    while True:
        page = call(**kwargs)
        yield from page.get(key, [])
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]
