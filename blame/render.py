"""The step-numbered, agent-labelled text of a log that every solver shows a model.

Layout of one step (``i`` is the 0-based step index that labels and predictions use)::

    [step i] <agent> -> <recipient> (<kind>; tools: a, b)
    <content>

and the log ends with the line :data:`END_OF_LOG`; a solver's instructions come after it.

Fencing: the log is data, not instructions, for every reader (a model, a tokenizer, a viewer),
whatever it counts as a line break and however it normalises characters. A line of log-derived
text is checked as such a reader sees it: split at every ``str.splitlines`` boundary (``\n``,
``\r``, ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``, ``\x85``, U+2028, U+2029), format characters
(Unicode category Cf: zero-width spaces and joiners, BOM, bidi marks, soft hyphen) removed, and
NFKC applied (full-width ``［step 3］`` reads ``[step 3]``). A line that then could pass for a step
header (``[step ...``), the end-of-log marker (``[end of log``) or a quotation delimiter (a line
starting ``<<<`` or ``>>>``, as POIROT quotes a persona's role) gets a leading backslash
(:func:`fence`), which is ASCII and so survives both normalisations. Step content, the task, system
prompts and the deliberation text solvers quote are fenced this way. One-line fields (speaker,
recipient, tool, component id, name and description, system name) go through :func:`inline`,
which writes every line break as its Python escape (``\n``, ``\u2028``) and then fences the
result, so a name can neither break a header line nor start one; prompts offer a component with
such an id in that escaped form, and ``solvers._output.resolve_component`` resolves it.

Budgets (:class:`RenderBudget`), in characters, applied in this order:

1. ``max_step_chars``: a step's content longer than this keeps that many characters, its head
   and tail, around the marker ``[... N characters cut ...]`` (a step only a marker's length
   longer is kept whole: cutting never lengthens a step).
2. ``max_total_chars``: if the whole log is still longer, the per-step limit is lowered (the same
   limit for every step, found by bisection) until it fits. Headers stay whole, so every step
   number and speaker stays visible.
3. If even the limit 0 (headers plus cut markers) does not fit, the log is *over budget*
   (``RenderedLog.over_budget``) and whole steps are left out: a header longer than
   :data:`MAX_HEADER_CHARS` is cut in the middle like content, each step shown keeps at least
   ``min(max_step_chars, 200, max_total_chars // 10)`` characters of content, and steps are
   kept from both ends inwards (step 0, the last step, step 1, the one before the last, ...)
   while they fit; the run of steps in between is replaced by one line
   ``[... steps i-j omitted: N steps not shown ...]`` (:data:`OMITTED_MARKER`; i and j are step
   numbers, so the 0-based numbering of the steps shown is unchanged, and a log line that could
   pass for this marker is fenced like a header). The per-step limit of the steps shown is then
   raised by bisection as in 2. The text then never exceeds ``max_total_chars``, unless the
   budget is shorter than the omission marker and the end-of-log marker together.

A log that fits at some per-step limit (1-2) renders exactly as without step 3. Every step whose
content (or header) was cut is listed in ``RenderedLog.truncated_steps`` and every step left out
in ``RenderedLog.omitted_steps``; solvers add both and ``over_budget`` to the Attribution
(:func:`note_cuts`). The defaults (4,000 per step, 60,000 in all, about 15k tokens) keep every
Who&When Algorithm-Generated log whole and cut long Hand-Crafted logs (up to ~305k characters);
for a model with an 8k-token window pass about ``max_total_chars=20000``. The budget bounds the
log; the task (:func:`render_task`: cut to ``max_total_chars``), the component list (each
description cut to ``max_prompt_chars``; ids and names whole, since answers name them) and each
system prompt (``max_prompt_chars``) come on top.

Prefixes (:class:`PrefixLogs`: step-by-step, the hybrid's walk and the online auditor show the log
up to step k for many k). Each step is rendered once, as a block, and prefix k is joined from
blocks, so the work per prefix is the length of the text sent, and consecutive prefixes share a
long common prefix, which servers with prefix caching reuse:

- If the whole log fits at some per-step limit (1-2), every block has that one limit and prefix k
  is blocks 0..k: a string prefix of every later prefix up to its end-of-log marker.
- Else (the whole log is over budget, 3), every block has its header cut to
  :data:`MAX_HEADER_CHARS` and its content to the floor of 3. A prefix whose blocks fit is shown
  whole. A longer one shows a fixed *head* (steps 0, 1, ... while they fit in half the budget less
  a marker), one omission line for the steps after it, and a *tail window* of the steps up to k.
  The window keeps its first step while the prefix fits; when it no longer does, the window moves
  on in one jump, far enough that the tail holds at most half of the room left for it. So between
  jumps each prompt extends the previous one, and at a jump the two still share the head. Which
  steps prefix k shows depends on k alone. Every prefix stays within ``max_total_chars`` (with the
  exception of 3) and shows step k unless that step alone does not fit beside the head and the
  marker; its ``truncated_steps``, ``omitted_steps`` and ``over_budget`` say what it cut.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import accumulate
from dataclasses import dataclass, field

from blame.arguments import as_int
from blame.schema import Attribution, Component, Step, SystemSpec, Trajectory

CUT_MARKER = "[... {n} characters cut ...]"
OMITTED_MARKER = "[... steps {first}-{last} omitted: {n} steps not shown ...]"
"""The line that replaces a run of steps left out to fit the budget (step 3 of the budgets)."""
OMITTED_ONE = "[... step {step} omitted: 1 step not shown ...]"
MAX_HEADER_CHARS = 300
"""Headers longer than this are cut in the middle when a log is over budget."""
_OMIT_FLOOR = 200
END_OF_LOG = "[end of log]"
"""The last line of every rendered log."""
_END = f"\n\n{END_OF_LOG}"
_FORGEABLE = re.compile(r"\s*(?:\[\s*(?:step|end\s*of\s*log|\.\.\.\s*steps?\b)|<<<|>>>)", re.IGNORECASE)
_BRACKETS = re.compile("[\\[<>\ufe47\uff3b\ufe64\uff1c\ufe65\uff1e]")
"""Every character whose NFKC form holds ``[``, ``<`` or ``>``: a line without one is never forgeable."""
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _forgeable(line: str) -> bool:
    """Whether ``line``, with format characters removed and NFKC applied, reads as a step header,
    an omission marker, an end-of-log marker or a quotation delimiter."""
    if not _BRACKETS.search(line):
        return False
    if line.isascii():  # no format character, and NFKC leaves ASCII as it is
        return bool(_FORGEABLE.match(line))
    visible = "".join(ch for ch in line if unicodedata.category(ch) != "Cf")
    return bool(_FORGEABLE.match(unicodedata.normalize("NFKC", visible)))


def fence(text: str) -> str:
    """``text`` with a backslash before every line that could pass for a step header, the
    end-of-log marker or a quotation delimiter, to any reader (see the module docstring)."""
    if not _BRACKETS.search(text):
        return text
    return "".join(f"\\{line}" if _forgeable(line) else line for line in text.splitlines(keepends=True))


def inline(text: str) -> str:
    """One-line ``text``: every line break written as its Python escape, then fenced."""
    return fence(_LINE_BREAK.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text))


def inline_list(names: Iterable[str]) -> str:
    """``names`` as one line, each :func:`inline`, comma-separated (a prompt's list of choices)."""
    return ", ".join(inline(name) for name in names)


@dataclass(frozen=True)
class RenderBudget:
    """Character budgets for rendering a log (see the module docstring)."""

    max_step_chars: int = 4000
    max_total_chars: int = 60000
    max_prompt_chars: int = 1500

    def __post_init__(self) -> None:
        """Each budget is an integer >= 0, named by its solver argument in the error."""
        as_int("max_step_chars", self.max_step_chars, minimum=0)
        as_int("max_log_chars", self.max_total_chars, minimum=0)
        as_int("max_prompt_chars", self.max_prompt_chars, minimum=0)


@dataclass
class RenderedLog:
    """A rendered log and what was cut to fit the budget: steps whose content was cut, steps left
    out, and whether the log was over budget (steps 1-3 of the module docstring)."""

    text: str
    truncated_steps: list[int] = field(default_factory=list)
    over_budget: bool = False
    omitted_steps: list[int] = field(default_factory=list)


def note_cuts(target: Attribution | RenderedLog, log: RenderedLog) -> None:
    """Add what rendering ``log`` cut to ``target`` (an Attribution, or a RenderedLog collecting
    the cuts of several renderings): truncated and omitted steps (sorted unions), over_budget."""
    if log.truncated_steps:
        target.truncated_steps = sorted(set(target.truncated_steps) | set(log.truncated_steps))
    if log.omitted_steps:
        target.omitted_steps = sorted(set(target.omitted_steps) | set(log.omitted_steps))
    target.over_budget = target.over_budget or log.over_budget


def cut_middle(text: str, limit: int) -> str:
    """``text`` with its middle replaced by a cut marker so that ``limit`` characters remain.

    The text is kept whole when cutting would not make it shorter (it is at most ``limit``
    characters plus the marker's length), so cutting never lengthens a step and the rendered
    length grows monotonically with ``limit`` (which the total-budget bisection relies on).
    """
    keep = max(limit, 0)
    head = text[: (keep + 1) // 2]
    tail = text[len(text) - keep // 2 :] if keep // 2 else ""
    cut = f"{head}{CUT_MARKER.format(n=len(text) - len(head) - len(tail))}{tail}"
    return cut if len(cut) < len(text) else text


def step_header(step: Step) -> str:
    """``[step i] agent -> recipient (kind; tools: ...)``, names :func:`inline`."""
    who = inline(step.agent) if step.recipient is None else f"{inline(step.agent)} -> {inline(step.recipient)}"
    details = step.kind if not step.tool_calls else f"{step.kind}; tools: {inline_list(step.tool_calls)}"
    return f"[step {step.index}] {who} ({details})"


_Part = tuple[int, str, str]
"""A step ready to render: (index, header, fenced content); fencing is done once per rendering."""


def _parts(steps: list[Step]) -> list[_Part]:
    return [(step.index, step_header(step), fence(step.content)) for step in steps]


def _render_parts(parts: list[_Part], limit: int) -> tuple[str, list[int]]:
    blocks, truncated = [], []
    for index, header, fenced in parts:
        content = cut_middle(fenced, limit)
        if content != fenced:
            truncated.append(index)
        blocks.append(f"{header}\n{content}" if content else header)
    return "\n\n".join(blocks), truncated


def _step_limit(parts: list[_Part], budget: RenderBudget, low: int = 0) -> tuple[int, bool]:
    """The per-step limit that fits ``parts`` into ``budget`` (module docstring, 1-2), and whether
    even the limit ``low`` is over the budget."""
    total = budget.max_total_chars - len(_END)
    if len(_render_parts(parts, budget.max_step_chars)[0]) <= total:
        return budget.max_step_chars, False
    if len(_render_parts(parts, low)[0]) > total:
        return low, True
    high = budget.max_step_chars  # invariant: `low` fits, `high` is too long
    while high - low > 1:
        middle = (low + high) // 2
        if len(_render_parts(parts, middle)[0]) <= total:
            low = middle
        else:
            high = middle
    return low, False


def _omit_floor(budget: RenderBudget) -> int:
    """The least content each shown step keeps when steps are left out (module docstring, 3)."""
    return min(budget.max_step_chars, _OMIT_FLOOR, budget.max_total_chars // 10)


def _short_headers(parts: list[_Part]) -> tuple[list[_Part], list[int]]:
    """``parts`` with each header cut to :data:`MAX_HEADER_CHARS`, and the steps whose header was cut."""
    shortened = [(index, cut_middle(header, MAX_HEADER_CHARS), fenced) for index, header, fenced in parts]
    return shortened, [index for (index, header, _), (_, short, _) in zip(parts, shortened) if short != header]


def _omission(parts: list[_Part], head: int, tail: int) -> _Part:
    """The marker part standing for ``parts[head : len(parts) - tail]`` (at least one part)."""
    return -1, _omitted_line(parts[head][0], parts[len(parts) - tail - 1][0], len(parts) - head - tail), ""


def _omitted_line(first: int, last: int, n: int) -> str:
    """The marker line for the ``n`` steps ``first..last`` left out."""
    return OMITTED_ONE.format(step=first) if n == 1 else OMITTED_MARKER.format(first=first, last=last, n=n)


def _omit(parts: list[_Part], budget: RenderBudget) -> RenderedLog:
    """Step 3 of the module docstring: cut long headers, keep steps from both ends inwards while
    they fit, and one marker line for the run left out."""
    total = budget.max_total_chars - len(_END)
    floor = _omit_floor(budget)
    parts, cut_headers = _short_headers(parts)
    sizes = [len(_render_parts([part], floor)[0]) for part in parts]
    n, head, tail, used = len(parts), 0, 0, 0  # used: characters of the kept blocks

    def length(head: int, tail: int, used: int) -> int:
        blocks, chars = head + tail, used
        if blocks < n:
            blocks, chars = blocks + 1, chars + len(_omission(parts, head, tail)[1])
        return chars + 2 * (blocks - 1)

    while head + tail < n:
        front = head <= tail  # alternate: step 0, the last step, step 1, ...
        position = head if front else n - tail - 1
        grown = (head + 1, tail) if front else (head, tail + 1)
        if length(*grown, used + sizes[position]) > total:
            break
        (head, tail), used = grown, used + sizes[position]
    kept = parts[:head] + ([_omission(parts, head, tail)] if head + tail < n else []) + parts[n - tail :]
    limit, _ = _step_limit(kept, budget, low=floor)
    text, truncated = _render_parts(kept, limit)
    omitted = [index for index, _, _ in parts[head : n - tail]]
    return RenderedLog(text + _END, sorted(set(truncated) | set(cut_headers)), over_budget=True, omitted_steps=omitted)


def _render(parts: list[_Part], budget: RenderBudget) -> RenderedLog:
    limit, over_budget = _step_limit(parts, budget)
    if over_budget:
        return _omit(parts, budget)
    text, truncated = _render_parts(parts, limit)
    return RenderedLog(text + _END, truncated)


def render_steps(steps: list[Step], budget: RenderBudget = RenderBudget()) -> RenderedLog:
    """Render ``steps`` (any contiguous or filtered subset of a log) within ``budget``, ending
    with the end-of-log marker."""
    return _render(_parts(steps), budget)


def _blocks(parts: list[_Part], budget: RenderBudget) -> tuple[list[tuple[str, list[int]]], bool]:
    limit, over_budget = _step_limit(parts, budget)
    return [_render_parts([part], limit) for part in parts], over_budget


def render_prefix_blocks(trajectory: Trajectory, budget: RenderBudget = RenderBudget()) -> tuple[list[str], list[int]]:
    """Each step rendered on its own, all with the per-step limit that fits the *whole* log into
    ``budget`` (the limit :func:`render_log` uses), and the steps whose content was cut.

    ``join_blocks(blocks[: k + 1])`` is the log up to step k, and up to its end-of-log marker a
    string prefix of the log up to any later step: solvers that show growing prefixes of one log
    keep consecutive prompts byte-identical up to the end of the shorter prefix, which servers
    with prefix caching reuse. (Rendering each prefix within the budget on its own would let an
    early prefix keep more of a long step than a later one.) For an over-budget log the joined
    blocks exceed the budget: :class:`PrefixLogs` then leaves steps out (module docstring,
    "Prefixes").
    """
    rendered, _ = _blocks(_parts(trajectory.steps), budget)
    return [text for text, _ in rendered], [index for _, cut in rendered for index in cut]


class PrefixLogs:
    """The log up to each step k of one trajectory, within ``budget``, for methods that show
    growing prefixes of one log (module docstring, "Prefixes").

    Each step is rendered once, as a block; prefix k is joined from blocks, never rendered from
    scratch, so the work per prefix is the length of its text and only the blocks are held.
    Which steps prefix k shows depends on k alone, not on which prefixes were asked before.
    """

    def __init__(self, trajectory: Trajectory, budget: RenderBudget = RenderBudget()) -> None:
        parts = _parts(trajectory.steps)
        limit, self.over_budget = _step_limit(parts, budget)
        cut_headers: list[int] = []
        if self.over_budget:
            parts, cut_headers = _short_headers(parts)
            limit = _omit_floor(budget)
        rendered = [_render_parts([part], limit) for part in parts]
        self._indices = [index for index, _, _ in parts]
        self._blocks = [text for text, _ in rendered]
        headers = set(cut_headers)
        self._cut = [p for p, (_, cut) in enumerate(rendered) if cut or self._indices[p] in headers]
        self._cut_headers = [p for p in self._cut if self._indices[p] in headers]
        self._ends = [0, *accumulate(len(block) + 2 for block in self._blocks)]  # + 2: the separator
        self._total = budget.max_total_chars - len(_END)
        self._starts: list[int] = []  # the tail window's first block, for each prefix so far
        self._head, head_room, marker = 0, -1, len(OMITTED_MARKER.format(first=len(parts), last=len(parts), n=len(parts)))
        if self.over_budget:
            head_room = (self._total - marker - 4) // 2
            while self._head < len(parts) and self._joined(0, self._head) <= head_room:
                self._head += 1
        self._head_text = "\n\n".join(self._blocks[: self._head])
        self._head_chars = len(self._head_text) + 2 if self._head else 0
        self._tail_room = (self._total - self._head_chars - marker - 2) // 2

    def _joined(self, first: int, last: int) -> int:
        """Length of blocks ``first..last`` joined (0 when ``last < first``)."""
        return max(self._ends[last + 1] - self._ends[first] - 2, 0)

    def _marker(self, start: int) -> str:
        """The omission line for blocks ``head..start - 1``."""
        return _omitted_line(self._indices[self._head], self._indices[start - 1], start - self._head)

    def _length(self, k: int, start: int) -> int:
        """Length of prefix ``k`` (without the end-of-log marker) whose tail starts at ``start``."""
        if start == self._head:  # nothing left out
            return self._joined(0, k)
        tail = self._joined(start, k) + 2 if start <= k else 0
        return self._head_chars + len(self._marker(start)) + tail

    def _start(self, k: int) -> int:
        """Where prefix ``k``'s tail window starts: where prefix k - 1's did while the prefix
        fits, else far enough on that the tail holds at most half the room left for it (but step
        k, if it fits beside the head and the marker)."""
        while len(self._starts) <= k:
            j = len(self._starts)
            start = self._starts[-1] if self._starts else self._head
            if self._length(j, start) > self._total:
                start = max(start, self._head + 1)
                while start < j and self._joined(start, j) > self._tail_room:
                    start += 1
                while start <= j and self._length(j, start) > self._total:  # step j alone too long
                    start += 1
            self._starts.append(start)
        return self._starts[k]

    def upto(self, k: int) -> RenderedLog:
        """Steps 0..k, ending with the end-of-log marker, and what was cut or left out of them."""
        start, head = self._start(k), self._head
        cut = self._cut[: bisect_right(self._cut, k)]
        if start == head:
            text = "\n\n".join(self._blocks[: k + 1])
            shown_headers = self._cut_headers[: bisect_right(self._cut_headers, k)]
            return RenderedLog(text + _END, [self._indices[p] for p in cut], over_budget=bool(shown_headers))
        shown = cut[: bisect_left(cut, head)] + cut[bisect_left(cut, start) :]
        pieces = [self._head_text] if head else []
        text = "\n\n".join([*pieces, self._marker(start), *self._blocks[start : k + 1]])
        omitted = self._indices[head:start]
        return RenderedLog(text + _END, [self._indices[p] for p in shown], over_budget=True, omitted_steps=omitted)


def join_blocks(blocks: list[str]) -> str:
    """Blocks of :func:`render_prefix_blocks` as one log, ending with the end-of-log marker."""
    return "\n\n".join(blocks) + _END


def render_log(trajectory: Trajectory, budget: RenderBudget = RenderBudget()) -> RenderedLog:
    """Render the whole log of ``trajectory`` within ``budget``."""
    return render_steps(trajectory.steps, budget)


def render_system(system: SystemSpec, budget: RenderBudget = RenderBudget(), prompts: bool = True) -> str:
    """The system's components (id, kind, description: cut to ``max_prompt_chars``) and, optionally,
    agents' system prompts (each cut to ``max_prompt_chars``)."""
    lines = [f"System: {inline(system.name)}", "Components (hazard dimensions, in order):"]
    for position, c in enumerate(system.components):
        description = f": {inline(cut_middle(c.description, budget.max_prompt_chars))}" if c.description else ""
        lines.append(f"  {position}. {component_label(c)} [{c.kind}]{description}")
    if prompts:
        for c in system.components:
            if c.system_prompt:
                prompt = fence(cut_middle(c.system_prompt, budget.max_prompt_chars))
                lines.append(f"\nSystem prompt of {inline(c.id)}:\n{prompt}")
    return "\n".join(lines)


def component_label(component: Component) -> str:
    """``id`` or ``id (name)`` when the display name differs, both :func:`inline`."""
    if component.name == component.id:
        return inline(component.id)
    return f"{inline(component.id)} ({inline(component.name)})"


def render_task(trajectory: Trajectory, budget: RenderBudget = RenderBudget()) -> str:
    """The user's task, plus the reference answer only if the trajectory still carries it, each
    cut in the middle to ``budget.max_total_chars`` (a task as long as a whole log is hostile).

    Pass ``Trajectory.model_view()`` here: it carries the reference answer only when the task
    argument ``with_reference_answer`` asked for it.
    """
    task = fence(cut_middle(trajectory.task, budget.max_total_chars))
    text = f"Task given to the system:\n{task or '(not recorded)'}"
    if trajectory.reference_answer is not None:
        answer = fence(cut_middle(trajectory.reference_answer, budget.max_total_chars))
        text += f"\n\nReference answer to the task (shown by task option): {answer}"
    return text
