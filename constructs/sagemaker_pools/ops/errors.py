"""Turn every failure into one line for stderr and an exit code (never a traceback).

:class:`OpsError` is what the subcommands raise for a failure they understand; :func:`explain`
maps everything boto3 and botocore raise (service errors, missing credentials, throttling
after retries, bad parameters, network failures) to an :class:`OpsError` with a message that
says what happened and what to do.
"""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
    TokenRetrievalError,
)

__all__ = ["OpsError", "explain", "error_code", "DENIED_CODES", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_INTERRUPTED"]

#: A failure: AWS said no, the resource is missing or in the wrong state, an update failed.
EXIT_FAILURE = 1
#: Invalid arguments (the same code argparse uses).
EXIT_USAGE = 2
#: Interrupted with Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130

_NOT_FOUND_CODES = frozenset({"ResourceNotFound", "ResourceNotFoundException", "NotFoundException"})
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
_BAD_CREDENTIALS_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "ExpiredTokenException",
        "RequestExpired",
    }
)
_THROTTLING_CODES = frozenset(
    {"Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException", "RequestLimitExceeded"}
)
# What each read operation looks up, for "X not found" messages.
_RESOURCE_OF = {
    "DescribeEndpoint": "endpoint",
    "DescribeEndpointConfig": "endpoint configuration",
    "DescribeInferenceComponent": "inference component",
    "DescribeAIRecommendationJob": "AI recommendation job",
    "ListTags": "resource",
}

# The IAM service prefix of the operations that are not SageMaker's (migrate --apply on an autoscaled variant,
# simulate --traffic-from, migrate's CloudFormation question, status --check-metrics).
_SERVICE_OF = {
    **{
        op: "application-autoscaling"
        for op in (
            "DescribeScalableTargets",
            "DescribeScalingPolicies",
            "DescribeScheduledActions",
            "ListTagsForResource",
            "DeregisterScalableTarget",
            "RegisterScalableTarget",
            "PutScalingPolicy",
            "PutScheduledAction",
        )
    },
    **{op: "cloudwatch" for op in ("DescribeAlarms", "PutMetricAlarm", "ListMetrics", "GetMetricData", "GetDashboard")},
    "DescribeStackResources": "cloudformation",
}


class OpsError(Exception):
    """A failure the command reports as one line on stderr, exiting with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(one_line(message))
        self.exit_code = exit_code

    @property
    def message(self) -> str:
        """The one-line message."""
        return str(self.args[0])


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(str(text).split())


def explain(exc: BaseException, *, max_attempts: int) -> OpsError:
    """The :class:`OpsError` to report for ``exc`` (anything boto3 or botocore raised).

    ``max_attempts`` is the retry budget the client ran with (botocore standard mode), quoted
    in the throttling message: by the time a throttling error reaches us the retries are spent.
    """
    if isinstance(exc, OpsError):
        return exc
    if isinstance(exc, ClientError):
        return _explain_client_error(exc, max_attempts)
    if isinstance(exc, NoCredentialsError):
        return OpsError(
            "no AWS credentials found: set AWS_PROFILE (or pass --profile), or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or run where an instance/container role is available"
        )
    if isinstance(exc, PartialCredentialsError):
        return OpsError(f"incomplete AWS credentials: {exc}")
    if isinstance(exc, TokenRetrievalError):
        return OpsError(f"cannot refresh AWS credentials: {exc} (for SSO profiles run `aws sso login`)")
    if isinstance(exc, ProfileNotFound):
        return OpsError(f"{exc}: check --profile / AWS_PROFILE against ~/.aws/config", EXIT_USAGE)
    if isinstance(exc, NoRegionError):
        return OpsError("no AWS region: pass --region or set AWS_REGION (or a region in your profile)", EXIT_USAGE)
    if isinstance(exc, ParamValidationError):
        return OpsError(f"invalid request: {exc}", EXIT_USAGE)
    if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError)):
        return OpsError(f"cannot reach the AWS endpoint: {exc} (check the region, --endpoint-url and the network)")
    if isinstance(exc, ReadTimeoutError):
        return OpsError(f"AWS did not answer in time: {exc}")
    if isinstance(exc, BotoCoreError):
        return OpsError(f"AWS SDK error: {exc}")
    return OpsError(f"unexpected error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")


def error_code(exc: ClientError) -> tuple[str, str]:
    """``(code, message)`` of a service error (``"Unknown"`` / ``"(no message)"`` when AWS sent none)."""
    error = exc.response.get("Error", {})
    return str(error.get("Code", "Unknown")), str(error.get("Message", "")).strip() or "(no message)"


def _explain_client_error(exc: ClientError, max_attempts: int) -> OpsError:
    code, message = error_code(exc)
    operation = exc.operation_name
    if code in _THROTTLING_CODES:
        return OpsError(
            f"throttled: AWS kept refusing {operation} with {code} ({message}) for all {max_attempts} attempts "
            "(botocore standard retry mode); wait a minute and retry, or raise --max-attempts"
        )
    if code in DENIED_CODES:
        service = _SERVICE_OF.get(operation, "sagemaker")
        return OpsError(f"access denied: {operation}: {message} (the caller needs {service}:{operation})")
    if code in _BAD_CREDENTIALS_CODES:
        return OpsError(f"AWS rejected the credentials ({code}): {message}")
    resource = _RESOURCE_OF.get(operation, "resource")
    if code in _NOT_FOUND_CODES or (code == "ValidationException" and message.startswith("Could not find")):
        return OpsError(f"{resource} not found: {message}")
    return OpsError(f"{operation} failed: {code}: {message}")
