"""Example stacks for cdk-sagemaker-pools, built only from the library's public API.

Each stack is a ``Stack`` subclass that you can instantiate in your own app, or whose body
you can copy into an existing stack.
"""

from .async_scale_to_zero import AsyncScaleToZeroStack
from .inference_components import InferenceComponentPoolsStack
from .realtime import RealtimePooledLlmStack

__all__ = ["AsyncScaleToZeroStack", "InferenceComponentPoolsStack", "RealtimePooledLlmStack"]
