"""L1 property types as plain dicts: what jsii would send to Node, without the Python-side cost.

A generated ``Cfn*.…Property`` class type-checks every field in Python when it is made (jsii's
bindings run typeguard over the field's declared type, evaluating its annotations each time),
and an endpoint renders dozens of them: its variant and pools, its deployment policy, its models'
containers, its alarms' and scaling policy's metric queries. The L1 resources take a plain dict
in the place of any property type, keyed as the type's jsii (camelCase) names, which is exactly
what jsii makes of the class on its way to Node. :func:`l1_properties` builds that dict from the
same Python keyword arguments the class takes, so call sites read like the class and a misspelt
field still fails loudly, in Python.
"""

from __future__ import annotations

from typing import Any

__all__ = ["l1_properties"]


def l1_properties(property_type: type, /, **fields: Any) -> dict[str, Any]:
    """``property_type(**fields)`` as the dict jsii sends to Node: each field under the type's jsii
    name, ``None`` fields left out (as an unset field is). Values are passed as they are (nested
    property types may be dicts of their own, or tokens).

    Raises:
        TypeError: a field ``property_type`` does not have (as the class's constructor would).
    """
    names: dict[str, str] = property_type.__jsii_name_mapping__  # type: ignore[attr-defined]
    unknown = [name for name in fields if name not in names]
    if unknown:
        raise TypeError(f"{property_type.__qualname__} has no field {', '.join(map(repr, unknown))}")
    return {names[name]: value for name, value in fields.items() if value is not None}
