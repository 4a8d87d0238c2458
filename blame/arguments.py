"""Validation of task and solver arguments at the boundary: one-line errors, never a traceback.

Inspect parses ``-T``/``-S`` values as YAML scalars and passes anything it cannot parse through
as a string, so ``-T with_reference_answer=flase`` arrives as the truthy string ``"flase"``. Every
task and solver factory therefore checks its arguments with these helpers before any sample
runs. A bad value raises Inspect's ``PrerequisiteError``, which the CLI prints as one line (no
traceback) naming the argument and its valid values; it is raised as ``ArgumentError``, which is
also a ``ValueError`` for code that calls a factory directly.

- ``as_bool``: a bool, 0/1, or (any case) true/false, yes/no, on/off, 1/0. Nothing else.
- ``as_choice``: one of a fixed list of strings.
- ``as_int`` / ``as_float``: a number (not a bool) within optional bounds; a float must be finite.
- ``as_optional_str``: None or a non-empty string (an integer is taken as its digits).
- ``refuse_unknown``: the keys a factory does not take. Inspect only warns about an unknown ``-T``
  key and drops it (unless the factory takes ``**kwargs``, and then it also passes ``model``), and
  hands an unknown ``-S`` key to the solver factory, a ``TypeError`` with a traceback. So every
  task and solver factory keeps its typed parameters (Inspect records and shows them), takes
  ``**kwargs`` and passes them here first: ``model`` is allowed, any other key stops the run with
  one line listing the valid keys (tasks go through ``tasks._common.refuse_unknown_task_args``,
  which lets through, with Inspect's warning, a key that another task takes).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from inspect_ai._util.error import PrerequisiteError

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


_ALLOWED_EXTRA = {"model"}
"""Keys Inspect may pass to a factory that takes ``**kwargs`` whatever the user wrote."""


class ArgumentError(PrerequisiteError, ValueError):
    """A task, solver or model argument that is unknown or has a value outside its valid values
    (printed as one line)."""


def invalid_argument(name: str, value: Any, expected: str) -> ArgumentError:
    """The one-line error for ``name=value``, which should have been ``expected``."""
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return ArgumentError(f"Invalid argument {name}={shown}: expected {expected}.")


def refuse_unknown(factory: Callable[..., Any], extra: Mapping[str, Any]) -> None:
    """Raise an ``ArgumentError`` listing ``factory``'s named parameters when ``extra`` (its
    ``**kwargs``) holds any key but ``model`` (see the module docstring)."""
    unknown = sorted(set(extra) - _ALLOWED_EXTRA)
    if unknown:
        parameters = inspect.signature(factory).parameters.values()
        valid = [p.name for p in parameters if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        plural = "s" if len(unknown) > 1 else ""
        raise ArgumentError(
            f"Unknown argument{plural} {', '.join(unknown)} for {factory.__name__}: "
            f"valid arguments are {', '.join(valid) or 'none'}."
        )


def as_bool(name: str, value: Any) -> bool:
    """``value`` as a bool (see the module docstring for what is accepted)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise invalid_argument(name, value, "true or false (also yes/no, on/off, 1/0)")


def as_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``."""
    allowed = list(choices)
    if isinstance(value, str) and value in allowed:
        return value
    raise invalid_argument(name, value, f"one of {', '.join(allowed)}")


def as_int(name: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int within ``minimum..maximum`` (either bound optional)."""
    if not isinstance(value, int) or isinstance(value, bool) or not _within(value, minimum, maximum):
        raise invalid_argument(name, value, f"an integer{_range(minimum, maximum)}")
    return value


def as_float(
    name: str, value: Any, minimum: float | None = None, maximum: float | None = None, above: float | None = None
) -> float:
    """``value`` (an int or float, finite) as a float within ``minimum..maximum`` and ``> above``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not _within(value, minimum, maximum) or not (above is None or value > above):
        bound = _range(minimum, maximum) + (f"{' and' if minimum is not None or maximum is not None else ''} > {above}" if above is not None else "")
        raise invalid_argument(name, value, f"a finite number{bound}")
    return float(value)


def as_optional_str(name: str, value: Any) -> str | None:
    """``value`` if it is None or a non-empty string (e.g. a folder or a component id); an
    integer is taken as its digits (YAML reads ``-T data_dir=2024`` as a number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    raise invalid_argument(name, value, "a non-empty string")


def _within(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" in {minimum}..{maximum}"
    if minimum is not None:
        return f" >= {minimum}"
    return f" <= {maximum}" if maximum is not None else ""
