"""Helpers for writing Python source: literals and identifiers."""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping, Sequence

__all__ = ["literal", "camel_case", "snake_case", "type_suffix", "app_main"]


def literal(value: object, indent: int = 0) -> str:
    """``value`` (str, int, float, bool, None, list, dict of those) as a Python literal.

    Strings use double quotes (``json.dumps`` escapes are valid Python); dicts and lists with
    more than one item are laid out one item a line at ``indent``.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, Mapping):
        items = [f"{literal(str(k))}: {literal(v, indent + 4)}" for k, v in value.items()]
        if len(items) <= 1:
            return "{" + "".join(items) + "}"
        return "{\n" + "".join(f"{inner}{item},\n" for item in items) + pad + "}"
    if isinstance(value, Sequence):
        elements = [literal(v, indent + 4) for v in value]
        if len(elements) <= 1:
            return "[" + "".join(elements) + "]"
        return "[\n" + "".join(f"{inner}{e},\n" for e in elements) + pad + "]"
    raise TypeError(f"no literal for {type(value).__name__}")


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]


def camel_case(text: str, default: str = "Generated") -> str:
    """``"my-llm.endpoint"`` -> ``"MyLlmEndpoint"`` (a valid class name or construct id)."""
    name = "".join(w[:1].upper() + w[1:] for w in _words(text))
    if not name or not name[0].isalpha():
        name = default + name
    return name


def snake_case(text: str, default: str = "value") -> str:
    """``"ml.g6e.48xlarge"`` -> ``"ml_g6e_48xlarge"`` (a valid Python identifier)."""
    name = "_".join(w.lower() for w in _words(text))
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = f"{default}_{name}" if name else default
    return name + "_" if keyword.iskeyword(name) else name


def type_suffix(instance_type: str) -> str:
    """``"ml.g6e.48xlarge"`` -> ``"G6e48xlarge"``: the part that names a pool in ids."""
    text = instance_type[3:] if instance_type.startswith("ml.") else instance_type
    return camel_case(text, default="Type")


def app_main(stack_class: str) -> list[str]:
    """The lines that end a generated app: two blank lines and a ``__main__`` block that synthesizes ``stack_class``."""
    return [
        "",
        "",
        'if __name__ == "__main__":',
        "    app = App()",
        f'    {stack_class}(app, "{stack_class}")',
        "    app.synth()",
        "",
    ]
