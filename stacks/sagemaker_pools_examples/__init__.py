"""Example stacks for cdk-sagemaker-pools, built only from the library's public API.

Each stack is a ``Stack`` subclass that you can instantiate in your own app, or whose body
you can copy into an existing stack.
"""

from .realtime import RealtimePooledLlmStack

__all__ = ["RealtimePooledLlmStack"]
