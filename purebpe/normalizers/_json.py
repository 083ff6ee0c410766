"""Reading the fields of a ``tokenizer.json`` component object, with one-line errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_REQUIRED = object()
_NAMES = {
    str: "a string",
    bool: "true or false",
    int: "a non-negative integer",
    list: "a list",
    Mapping: "a JSON object",
}


def field(obj: Any, name: str, kind: type, component: str, default: Any = _REQUIRED) -> Any:
    """``obj[name]`` if it is a ``kind`` (``default`` when absent, if given), else a
    :class:`~purebpe.errors.PureBPEError` naming ``component`` and the field.

    >>> field({"split": True}, "split", bool, "pre-tokenizer 'Metaspace'")
    True
    >>> field({}, "content", str, "decoder 'Strip'")
    Traceback (most recent call last):
    purebpe.errors.PureBPEError: decoder 'Strip': field 'content' must be a string, got nothing
    """
    from ..errors import PureBPEError

    if name not in obj and default is not _REQUIRED:
        return default
    value = obj.get(name, _REQUIRED)
    good = isinstance(value, kind)
    if kind is int:
        good = good and not isinstance(value, bool) and value >= 0
    if not good:
        got = "nothing" if value is _REQUIRED else repr(value)
        raise PureBPEError(
            f"{component}: field {name!r} must be {_NAMES.get(kind, kind.__name__)}, got {got}"
        )
    return value
