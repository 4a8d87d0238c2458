"""JSON documents drawn from a JSON schema: the first choice everywhere, or seeded random choices.

Used by the offline model provider (:mod:`providers.offline_model`) to answer with schema-valid JSON,
and by the tests' fake OpenAI server. Every choice goes through a :class:`Chooser`: policy
``first`` takes the first enum value, the first ``anyOf``/``oneOf`` branch, the first listed type,
the minimum of a numeric range, ``false`` and the shortest array (``minItems`` items, or one item
when ``minItems`` is absent/0 and ``maxItems`` allows it); policy ``random`` draws each choice
from a ``random.Random`` seeded from a SHA-256 digest (:func:`seeded_digest`), never from
Python's ``hash()``, so identical inputs give identical documents across runs and processes.

Supported keywords: ``type`` (also lists of types), ``enum``, ``const``,
``properties``/``required``/``additionalProperties`` (all properties are produced),
``items``/``prefixItems``/``minItems``/``maxItems``/``uniqueItems`` (an enum item schema yields a
subset of the enum), ``anyOf``/``oneOf`` (one branch), ``allOf`` (merged), ``$ref`` into
``$defs``/``definitions``, ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``/
``multipleOf``, ``minLength``/``maxLength``/``format``, ``null``. ``pattern`` is not honoured.

Note on schemas: ``ResponseSchema.json_schema`` is Inspect's pydantic ``JSONSchema`` model, which
silently drops keywords it does not declare (``$defs``/``$ref``, ``oneOf``, ``allOf``, ``const``,
``minItems``/``maxItems``/``uniqueItems``, ``exclusiveMinimum``...), at every nesting level. The
walker handles them when they survive (a plain dict passed to :func:`sample_from_schema`, or a
``ResponseSchema.model_construct(json_schema=<dict>)``). It always emits distinct, enum-drawn items
for enum arrays, so vector answers stay duplicate-free even though ``uniqueItems`` was dropped.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from typing import Any

from pydantic import BaseModel

UNKNOWN_ENUM_VALUE = "__offline_unknown_option__"
"""Value substituted for an enum value in a deliberately schema-invalid document (the offline
model's ``mixed`` replies, via ``Walker.mutations``)."""

_MAX_DEPTH = 24
"""Hard recursion cap for self-referencing schemas."""
_SHALLOW_DEPTH = 6
"""Beyond this depth only required properties and minimal arrays are produced."""

_SUBJECTS = ["The planner", "The coder", "The verifier", "The orchestrator", "The web agent",
             "The assistant", "The tool", "The retriever", "The critic", "The executor"]
_VERBS = ["misread", "skipped", "mishandled", "overlooked", "misreported", "ignored",
          "misapplied", "confused", "truncated", "invented"]
_OBJECTS = ["the task constraints", "the tool output", "the user request", "a key fact",
            "the intermediate result", "the final answer", "the search results", "the plan",
            "the file contents", "the error message"]


# --------------------------------------------------------------------------------------------
# choice policies


class Chooser:
    """Makes every choice of the schema walk: the first option, or a seeded random draw."""

    def __init__(self, rng: random.Random | None, digest: bytes) -> None:
        self.rng = rng  # None = policy "first"
        self.digest = digest

    @property
    def first(self) -> bool:
        return self.rng is None

    def derive(self, *tag: Any) -> Chooser:
        """A fresh random chooser, deterministic in (this chooser's digest, tag)."""
        d = hashlib.sha256(self.digest + json.dumps(tag, default=str).encode()).digest()
        return Chooser(random.Random(int.from_bytes(d[:16], "big")), d)

    def index(self, n: int) -> int:
        return 0 if self.rng is None or n <= 1 else self.rng.randrange(n)

    def integer(self, lo: int, hi: int) -> int:
        return lo if self.rng is None or hi <= lo else self.rng.randint(lo, hi)

    def uniform(self, lo: float, hi: float) -> float:
        return lo if self.rng is None or hi <= lo else self.rng.uniform(lo, hi)

    def boolean(self) -> bool:
        return False if self.rng is None else self.rng.random() < 0.5

    def sample(self, n: int, k: int) -> list[int]:
        """k distinct indices out of range(n), in increasing order."""
        k = max(0, min(k, n))
        if self.rng is None:
            return list(range(k))
        return sorted(self.rng.sample(range(n), k))


# --------------------------------------------------------------------------------------------
# schema walk


def schema_dict(schema: Any) -> dict[str, Any]:
    if isinstance(schema, BaseModel):
        return schema.model_dump(exclude_none=True, by_alias=True)
    if isinstance(schema, dict):
        return schema
    if schema is True or schema is None:
        return {}
    raise TypeError(f"unsupported JSON schema object: {type(schema).__name__}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class Walker:
    """Builds one document for the schema ``root`` (``value(root, [])``), making every choice with
    ``chooser``; records in ``mutations`` the places where a substituted value would make the
    document invalid."""

    def __init__(self, root: dict[str, Any], chooser: Chooser) -> None:
        self.root = root
        self.chooser = chooser
        # (path, bad value) pairs where substituting the bad value makes the document invalid
        self.mutations: list[tuple[list[str | int], Any]] = []

    # -- schema normalisation ----------------------------------------------------------------

    def _deref(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        node: Any = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise ValueError(f"unresolvable $ref {ref!r}")
        return schema_dict(node)

    def _resolve(self, schema: Any) -> dict[str, Any]:
        s = schema_dict(schema)
        seen: set[str] = set()
        while "$ref" in s:
            ref = s["$ref"]
            if ref in seen:
                raise ValueError(f"circular $ref {ref!r}")
            seen.add(ref)
            rest = {k: v for k, v in s.items() if k != "$ref"}
            s = {**self._deref(ref), **rest}
        if "allOf" in s:
            merged = {k: v for k, v in s.items() if k != "allOf"}
            for sub in s["allOf"]:
                merged = _merge(merged, self._resolve(sub))
            s = self._resolve(merged) if "$ref" in merged or "allOf" in merged else merged
        return s

    # -- generation --------------------------------------------------------------------------

    def value(
        self, schema: Any, path: list[str | int], depth: int = 0, in_union: bool = False
    ) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("schema nests too deeply (recursive $ref without a way out?)")
        s = self._resolve(schema)
        c = self.chooser

        if "const" in s:
            return s["const"]

        if s.get("enum"):
            options = list(s["enum"])
            if not in_union and UNKNOWN_ENUM_VALUE not in options:
                self.mutations.append((path, UNKNOWN_ENUM_VALUE))
            return options[c.index(len(options))]

        for key in ("anyOf", "oneOf"):
            if s.get(key):
                branches = [self._resolve(b) for b in s[key]]
                rest = {k: v for k, v in s.items() if k not in ("anyOf", "oneOf")}
                if depth >= _SHALLOW_DEPTH:
                    nulls = [b for b in branches if _types(b) == ["null"]]
                    if nulls:
                        branches = nulls
                branch = branches[c.index(len(branches))]
                return self.value({**rest, **branch}, path, depth + 1, in_union=True)

        types = _types(s)
        if not types:
            types = [_infer_type(s)]
        t = types[c.index(len(types))]
        if t == "null":
            return None
        if t == "boolean":
            return c.boolean()
        if t == "integer":
            return self._integer(s, path, in_union)
        if t == "number":
            return self._number(s, path, in_union)
        if t == "string":
            return self._string(s, path, in_union)
        if t == "array":
            return self._array(s, path, depth, in_union)
        if t == "object":
            return self._object(s, path, depth, in_union)
        raise ValueError(f"unsupported JSON schema type {t!r}")

    def _object(
        self, s: dict[str, Any], path: list[str | int], depth: int, in_union: bool
    ) -> dict[str, Any]:
        props: dict[str, Any] = s.get("properties") or {}
        required: list[str] = list(s.get("required") or [])
        keys = list(props) if depth < _SHALLOW_DEPTH else [k for k in props if k in required]
        keys += [k for k in required if k not in keys]
        extra = s.get("additionalProperties")
        out: dict[str, Any] = {}
        for k in keys:
            sub = props.get(k, extra if isinstance(extra, (dict, BaseModel)) else {})
            out[k] = self.value(sub, [*path, k], depth + 1, in_union)
        return out

    def _array(
        self, s: dict[str, Any], path: list[str | int], depth: int, in_union: bool
    ) -> list[Any]:
        c = self.chooser
        lo = int(s.get("minItems") or 0)
        hi_raw = s.get("maxItems")
        hi = int(hi_raw) if hi_raw is not None else None
        unique = bool(s.get("uniqueItems"))
        prefix = s.get("prefixItems")
        items = s.get("items")
        if isinstance(items, list):  # draft-4 tuple form
            prefix, items = items, s.get("additionalItems", {})
        if items is False:
            items = None
        prefix = list(prefix or [])

        out: list[Any] = [
            self.value(p, [*path, i], depth + 1, in_union) for i, p in enumerate(prefix)
        ]
        item_schema = self._resolve(items) if items is not None else ({} if not prefix else None)
        if item_schema is None:
            return out

        # enum items: a subset of the enum (distinct items whenever the bounds allow)
        enum = item_schema.get("enum") if not prefix else None
        if enum and "anyOf" not in item_schema and "oneOf" not in item_schema:
            options: list[Any] = []
            for o in enum:
                if _canonical(o) not in {_canonical(x) for x in options}:
                    options.append(o)
            if hi is not None and hi < lo:
                raise ValueError(f"unsatisfiable array bounds at {path!r}")
            if lo > len(options):
                if unique:
                    raise ValueError(f"cannot produce {lo} unique items at {path!r}")
                picked = [options[c.index(len(options))] for _ in range(lo)]
            else:
                cap = len(options) if hi is None else min(hi, len(options))
                if depth >= _SHALLOW_DEPTH:
                    n = lo
                elif c.first:
                    n = lo if lo > 0 else min(1, cap)
                else:
                    n = c.integer(lo, cap)
                picked = [options[i] for i in c.sample(len(options), n)]
            if not in_union:
                for i in range(len(picked)):
                    self.mutations.append(([*path, i], UNKNOWN_ENUM_VALUE))
            return picked

        # general items
        lo_rest = max(0, lo - len(out))
        hi_rest = None if hi is None else max(0, hi - len(out))
        if depth >= _SHALLOW_DEPTH:
            n = lo_rest
        elif c.first:
            n = lo_rest if lo_rest > 0 else (1 if hi_rest is None or hi_rest >= 1 else 0)
        else:
            cap = lo_rest + 3 if hi_rest is None else min(hi_rest, lo_rest + 3)
            n = c.integer(lo_rest, max(lo_rest, cap))
        seen = {_canonical(v) for v in out}
        for _ in range(n):
            i = len(out)
            mark = len(self.mutations)
            v = self.value(item_schema, [*path, i], depth + 1, in_union)
            if unique and _canonical(v) in seen:
                # retry with derived random choosers; their values offer no mutation sites
                del self.mutations[mark:]
                for attempt in range(1, 65):
                    alt = Walker(self.root, c.derive("unique", path, i, attempt))
                    v = alt.value(item_schema, [*path, i], depth + 1, True)
                    if _canonical(v) not in seen:
                        break
                if _canonical(v) in seen:
                    if len(out) >= lo:
                        break  # no further distinct value found; stop at a valid length
                    raise ValueError(f"cannot produce {lo} unique items at {path!r}")
            seen.add(_canonical(v))
            out.append(v)
        return out

    def _integer(self, s: dict[str, Any], path: list[str | int], in_union: bool) -> int:
        lo_b, hi_b = _bounds(s, integer=True)
        lo, hi = _fill_range(lo_b, hi_b)
        mult = s.get("multipleOf")
        if isinstance(mult, int) and mult > 0:
            klo, khi = math.ceil(lo / mult), math.floor(hi / mult)
            if klo > khi:  # widen upwards until a multiple fits
                khi = klo
            value = self.chooser.integer(klo, khi) * mult
        else:
            value = self.chooser.integer(lo, hi)
        if not in_union:
            if hi_b is not None:
                self.mutations.append((path, hi_b + 1000))
            elif lo_b is not None:
                self.mutations.append((path, lo_b - 1000))
        return value

    def _number(self, s: dict[str, Any], path: list[str | int], in_union: bool) -> float | int:
        if isinstance(s.get("multipleOf"), int) and not isinstance(s["multipleOf"], bool):
            return self._integer(s, path, in_union)  # an integer multiple is a valid number
        lo_f, hi_f, lo_x, hi_x = _float_bounds(s)
        lo = lo_f if lo_f is not None else (hi_f - 10.0 if hi_f is not None else 0.0)
        hi = hi_f if hi_f is not None else lo + 10.0
        hi = max(hi, lo)
        if self.chooser.first and not lo_x:
            value = lo
        else:
            value = round(self.chooser.uniform(lo, hi), 3)
            if (lo_x and value <= lo) or (hi_x and value >= hi) or not (lo <= value <= hi):
                value = (lo + hi) / 2
        if not in_union:
            if hi_f is not None:
                self.mutations.append((path, hi_f + 1000.5))
            elif lo_f is not None:
                self.mutations.append((path, lo_f - 1000.5))
        return value

    def _string(self, s: dict[str, Any], path: list[str | int], in_union: bool) -> str:
        c = self.chooser
        fmt = s.get("format")
        if fmt == "date-time":
            text = "2024-01-01T00:00:00Z"
        elif fmt == "date":
            text = "2024-01-01"
        elif fmt == "time":
            text = "00:00:00"
        elif fmt == "email":
            text = "offline@example.com"
        elif fmt in ("uri", "url"):
            text = "https://example.com/offline"
        elif fmt == "uuid":
            d = hashlib.sha256(c.digest + _canonical(path).encode()).hexdigest()
            text = f"{d[:8]}-{d[8:12]}-4{d[13:16]}-a{d[17:20]}-{d[20:32]}"
        elif c.first:
            text = "Offline answer."
        else:
            text = sentence(c)
        min_len = int(s.get("minLength") or 0)
        max_len = s.get("maxLength")
        if len(text) < min_len:
            text = (text + " ok" * min_len)[:min_len]
        if max_len is not None and len(text) > int(max_len):
            text = text[: int(max_len)]
        if max_len is not None and not in_union:
            self.mutations.append((path, "x" * (int(max_len) + 10)))
        return text


_LOWER_BOUNDS = ("minimum", "minLength", "minItems", "exclusiveMinimum")
_UPPER_BOUNDS = ("maximum", "maxLength", "maxItems", "exclusiveMaximum")


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Merge two ``allOf`` branches (properties and required unioned, bounds tightened)."""
    out = dict(a)
    for k, v in b.items():
        if k == "properties" and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        elif k == "required" and isinstance(out.get(k), list):
            out[k] = list(dict.fromkeys([*out[k], *v]))
        elif k in _LOWER_BOUNDS and _is_num(out.get(k)) and _is_num(v):
            out[k] = max(out[k], v)
        elif k in _UPPER_BOUNDS and _is_num(out.get(k)) and _is_num(v):
            out[k] = min(out[k], v)
        else:
            out[k] = v
    return out


def _types(s: dict[str, Any]) -> list[str]:
    t = s.get("type")
    if t is None:
        return []
    return [t] if isinstance(t, str) else list(t)


def _infer_type(s: dict[str, Any]) -> str:
    if "properties" in s or "required" in s or "additionalProperties" in s:
        return "object"
    if "items" in s or "prefixItems" in s or "minItems" in s or "maxItems" in s:
        return "array"
    if any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    if "multipleOf" in s:
        return "number"
    return "string"


def _float_bounds(s: dict[str, Any]) -> tuple[float | None, float | None, bool, bool]:
    """(lower, upper, lower exclusive, upper exclusive), accepting draft-4 and later forms."""
    lo = s.get("minimum")
    hi = s.get("maximum")
    lo_x = hi_x = False
    xmin, xmax = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    if isinstance(xmin, bool):
        lo_x = xmin and lo is not None
    elif xmin is not None and (lo is None or xmin >= lo):
        lo, lo_x = xmin, True
    if isinstance(xmax, bool):
        hi_x = xmax and hi is not None
    elif xmax is not None and (hi is None or xmax <= hi):
        hi, hi_x = xmax, True
    return (None if lo is None else float(lo), None if hi is None else float(hi), lo_x, hi_x)


def _bounds(s: dict[str, Any], integer: bool) -> tuple[int | None, int | None]:
    lo_f, hi_f, lo_x, hi_x = _float_bounds(s)
    lo = None
    hi = None
    if lo_f is not None:
        lo = math.floor(lo_f) + 1 if lo_x and lo_f == math.floor(lo_f) else math.ceil(lo_f)
    if hi_f is not None:
        hi = math.ceil(hi_f) - 1 if hi_x and hi_f == math.ceil(hi_f) else math.floor(hi_f)
    return lo, hi


def _fill_range(lo: int | None, hi: int | None) -> tuple[int, int]:
    if lo is None and hi is None:
        return 0, 9
    if lo is None:
        assert hi is not None
        return hi - 9, hi
    if hi is None:
        return lo, lo + 9
    return lo, max(lo, hi)


def sentence(c: Chooser) -> str:
    """A short plain-text sentence drawn with ``c`` (the offline model's free-text answer)."""
    return (
        f"{_SUBJECTS[c.index(len(_SUBJECTS))]} {_VERBS[c.index(len(_VERBS))]} "
        f"{_OBJECTS[c.index(len(_OBJECTS))]}."
    )


def set_path(doc: Any, path: list[str | int], value: Any) -> Any:
    """``doc`` with the value at ``path`` (keys and indices) replaced by ``value``, in place."""
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def seeded_digest(seed: int, prompt: str, schema_name: str | None, call_seed: int | None = None) -> bytes:
    """SHA-256 of (seed, prompt text, schema name[, the call's own seed]): the seed of every random
    choice for one request."""
    key = [seed, prompt, schema_name] + ([call_seed] if call_seed is not None else [])
    payload = json.dumps(key, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).digest()


def chooser_for(policy: str, digest: bytes) -> Chooser:
    """The chooser of ``policy`` ("first", else seeded random) for a request's ``digest``."""
    if policy == "first":
        return Chooser(None, digest)
    return Chooser(random.Random(int.from_bytes(digest[:16], "big")), digest)


def sample_from_schema(
    schema: Any, policy: str = "first", seed: int = 0, key: str = ""
) -> Any:
    """A value valid against ``schema`` (dict or Inspect ``JSONSchema``), chosen by ``policy``.

    ``policy`` is ``"first"`` or ``"random"``; for ``"random"`` the choices are seeded from
    ``sha256(seed, key, None)``. Raises ValueError for schemas it cannot satisfy.
    """
    if policy not in ("first", "random"):
        raise ValueError("sample_from_schema policy must be 'first' or 'random'")
    root = schema_dict(schema)
    return Walker(root, chooser_for(policy, seeded_digest(seed, key, None))).value(root, [])
