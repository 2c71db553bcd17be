"""Validation of SageMaker resource names given on the command line (before any call)."""

from __future__ import annotations

import argparse
import re

__all__ = ["NAME_PATTERN", "sagemaker_name"]

#: Endpoints, endpoint configs, variants and AI recommendation jobs: 1-63 characters,
#: letters, digits and hyphens, starting and ending with a letter or digit.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def sagemaker_name(text: str) -> str:
    """An argparse ``type`` that accepts only a valid SageMaker name."""
    if not NAME_PATTERN.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a SageMaker name (1-63 letters, digits and hyphens, starting and ending with a letter or digit)"
        )
    return text
