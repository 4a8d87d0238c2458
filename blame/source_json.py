"""Reading source data files: every problem is a DataFormatError naming the file and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blame.errors import DataFormatError

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DIGITS = re.compile("[0-9]{1,18}")
_SIGNED_DIGITS = re.compile("-?[0-9]{1,18}")


def read_json(path: Path) -> Any:
    """The decoded JSON of ``path`` (:func:`parse_json`); an unreadable file (or not UTF-8) is a
    DataFormatError on field ``<file>``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, "<file>", f"cannot be read: {error}") from error
    return parse_json(path, text)


def parse_json(path: Path, text: str, where: str = "<json>") -> Any:
    """The decoded JSON ``text`` (of ``path``, at field ``where``); invalid JSON (also a BOM,
    NaN/Infinity, a key repeated in one object, integers beyond Python's digit limit, nesting
    beyond its recursion limit, lone surrogates) is a DataFormatError naming the file and
    ``where`` (or the string's path)."""
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_repeated_key)
    except RecursionError:
        raise DataFormatError(path, where, "nested too deeply to read") from None
    except ValueError as error:  # invalid JSON, NaN/Infinity, a repeated key, an integer beyond the digit limit
        raise DataFormatError(path, where, f"not valid JSON: {error}") from error
    if _SURROGATE_ESCAPE.search(text):  # a lone surrogate can only come from a \ud800-\udfff escape
        _check_unicode(path, data, where)
    return data


def _no_repeated_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice (``json`` would keep the last silently) is refused."""
    data = dict(pairs)
    if len(data) < len(pairs):
        keys = [key for key, _ in pairs]
        repeated = next(key for i, key in enumerate(keys) if key in keys[:i])
        raise ValueError(f"key {repeated[:80]!r} appears twice in one object")
    return data


def _check_unicode(path: Path, data: Any, root: str) -> None:
    """Refuse a string holding a lone surrogate (a ``\\ud800`` escape: not encodable as UTF-8)."""
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                pending.append((f"{where}.{key}" if where else key, item))
                pending.append((where or root, key))
        elif isinstance(value, list):
            pending.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise DataFormatError(path, where or root, "invalid Unicode: a lone surrogate escape")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def field(
    path: Path, obj: Any, key: str, kind: type | tuple[type, ...], where: str = "", required: bool = True
) -> Any:
    """``obj[key]`` checked against ``kind`` (a bool never passes for int); None if optional and absent.

    ``where`` is the JSON path of ``obj`` in the file (e.g. ``history[3]``), used in the error.
    """
    name = f"{where}.{key}" if where else key
    if not isinstance(obj, dict):
        raise DataFormatError(path, where or "<json>", f"expected an object, got {type(obj).__name__}")
    if key not in obj:
        if required:
            raise DataFormatError(path, name, "missing")
        return None
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise DataFormatError(path, name, f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(value).__name__}")
    return value


def validation_problem(error: ValidationError) -> str:
    """A pydantic ``ValidationError`` as one line: the first error's location and message, and
    how many more there are (``str(error)`` spans several lines)."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{location + ': ' if location else ''}{first['msg']}{more}"


def plain_digits(text: str) -> bool:
    """True when ``text`` is 1 to 18 ASCII digits and nothing else (the one digit rule: no sign,
    space, underscore or non-ASCII digit such as ``"３"`` or ``"٣"``, which ``str.isdecimal`` and
    ``int()`` take)."""
    return bool(_DIGITS.fullmatch(text))


def plain_int(path: Path, where: str, value: Any, signed: bool = False) -> int:
    """``value`` (a label's integer) as an int: a JSON integer (never a bool) or a string of ASCII
    digits, with a leading ``-`` only when ``signed``. Python's ``int()`` also reads ``"1_0"`` as
    10 and ``"+1"``, ``" 1"`` or non-ASCII digits as 1; here they are a DataFormatError on ``where``,
    as is a negative value when not ``signed``."""
    if isinstance(value, int) and not isinstance(value, bool) and (signed or value >= 0):
        return value
    if isinstance(value, str) and (_SIGNED_DIGITS if signed else _DIGITS).fullmatch(value):
        return int(value)
    digits = "ASCII digits, optionally after a -" if signed else "ASCII digits, no sign"
    raise DataFormatError(path, where, f"expected an integer ({digits}), got {str(value)[:80]!r}")
