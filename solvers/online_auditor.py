"""Online auditor: judge each prefix of the log as it unfolds; the earliest alarm is the prediction.

The full specification, and how it departs from the paper and its code:
``docs/protocols/online_auditor.md``.

The online-auditing protocol of AgentForesight (Zhang et al. 2026, "AgentForesight: Online
Auditing for Early Failure Prediction in Multi-Agent Systems", arXiv 2605.08715,
github.com/ZBox1005/AgentForesight). The auditor sees only a prefix tau_{0:k} of the session
(steps 0..k) and answers a structured verdict:

- ``continue``: no decisive error is visible yet; or
- ``alarm``: a decisive error has already happened, with the decisive step (0..k), the
  responsible agent and a one-sentence reason.

Protocol
--------
1. **Schedule.** The audited prefixes end at steps ``stride-1, 2*stride-1, ...`` and always at the
   last step ``n-1`` (:func:`prefix_schedule`): ``ceil(n / stride)`` prefixes. ``stride=1`` audits
   after every step. A coarse stride still localises to any step, since the alarm names the step.
   ``stride=auto`` (default, :func:`auto_stride`) is 1 for logs of up to :data:`AUTO_PREFIXES`
   steps and ``ceil(n / AUTO_PREFIXES)`` beyond, so no log gets more than ``AUTO_PREFIXES``
   prompts: each prompt is within the render budget, so time and memory grow linearly with the
   log, not quadratically (Inspect keeps every call's prompt in the sample's events). The stride
   used is ``Attribution.stride``.
2. **Walk** (span ``audit``), one of:
   - ``sequential``: prefix by prefix, stopping at the first valid alarm (fewest calls);
   - ``parallel``: every scheduled prefix at once with ``solvers._gather.gather``, at most
     ``max_concurrency`` calls in flight for the sample (lowest latency).
3. **Decision** (:func:`decide`, the single source of truth for both walks): the earliest valid
   alarm, by prefix end, is the prediction; its named step and agent become ``Attribution.step``
   and ``agent``, its prefix end ``alarm_step``, and ``faulty = [agent]`` (so the prediction is
   also a one-component hazard vector on vector-labelled data, where the alarm may name any
   component). No alarm means "predicted safe": ``step = agent = alarm_step = None``,
   ``faulty = []``. Both walks see the same verdicts up to the decision point, so for the same
   model answers they give identical predictions; parallel merely records more verdicts.

Every prefix verdict the walk obtained is recorded in ``Attribution.verdicts`` (so that false
alarms before the decisive step can be counted, see ``scorers/auditing.py``). Every trajectory is
walked the same way whatever its label: the solver reads only
``blame.state.model_view_from_state`` (no label, no meta).

Invalid verdicts
----------------
A reply that cannot be read (no JSON and no ``verdict:`` line, an unknown verdict word, an alarm
without a step or with an unknown agent, a context overflow, an empty reply) is an **invalid**
``PrefixVerdict`` (``valid=False`` with the reason), never a Continue. An alarm naming a step
after the prefix end (a step the auditor cannot have seen) is invalid too. The walk goes on past
an invalid verdict, as a deployed monitor would, but the trajectory's prediction is then
unknowable: the auditor might have alarmed at that prefix. So the Attribution is marked
**invalid** (``valid=False``, one error per invalid verdict) whenever an invalid verdict precedes
the earliest valid alarm, or occurs anywhere when there is no valid alarm; the earliest valid
alarm, if any, is still recorded in ``step``/``agent``/``alarm_step`` for analysis, and scorers
count the whole trajectory as wrong. An invalid verdict *after* the earliest valid alarm (seen
only by the parallel walk) does not affect the prediction, so the two walks stay identical.

Prompt layout (prefix caching)
------------------------------
Each call is ``[system: fixed instructions, user: header + log prefix + question]``. The system
prompt is the same for every trajectory; the header (task, components, framing sentence, who may
be named) is the same for every prefix of a trajectory; the log prefix of step k is the rendering of steps 0..k,
each step rendered on its own (:func:`blame.render.render_prefix_blocks`), so prefix k's text is
a string prefix of prefix k+1's; only the short final question names k. Consecutive calls therefore share
everything up to the end of the shorter log, which servers with prefix caching (vLLM, SGLang,
hosted APIs) reuse. With ``bound_step=False`` the answer's JSON schema is fixed per trajectory too: ``step``
is an unbounded integer checked by the parser (an enum of 0..k changes the schema at every
prefix, and some providers place the schema before the messages, e.g. OpenAI structured outputs
and gpt-oss's harmony developer message, which would defeat the cache; an enum over the whole log
would tell the auditor how long the run will be). Every prompt ends with a user turn (a final
assistant turn makes vLLM continue it as a prefill).

Schema and step range. The verdict schema has exactly two shapes (``anyOf``; Inspect's
``JSONSchema`` drops ``oneOf`` and ``const``): ``continue`` with ``step`` and ``agent`` null, or
``alarm`` with an agent among the candidates and an integer step, so constrained decoding cannot
produce an alarm without a step or agent. The step's range is the one choice left:
``bound_step=True`` (default) makes it an enum 0..k of the audited prefix, so no alarm can name a
step the auditor has not seen, at the price of one schema per prefix (the cache cost above, on
providers that put the schema first; the messages stay byte-identical prefixes);
``bound_step=False`` keeps one unbounded schema per trajectory. Measured under ``offline/random``
on ``who_and_when -T safe_controls=true`` (BENCHMARK.md): with the unbounded step most alarms name
an unseen step and most samples end invalid, so the cache-friendly schema gives way by default.

Render budget (:class:`blame.render.PrefixLogs`): a step longer than ``max_step_chars`` is cut in
the middle; if the whole log would exceed ``max_log_chars``, one lower per-step limit, chosen once
for the whole trajectory, applies to every prefix. That limit is the one departure from a strictly
online view (it depends on the log's total length); it changes how much of a long step is shown,
never which steps, and it is what keeps consecutive prompts byte-identical prefixes. A log that
does not fit even at the limit 0 (headers only) shows, in a prefix too long for the budget, its
first steps, one omission line and a window of the steps up to k that moves on only in jumps
(``blame.render``, "Prefixes"; ``Attribution.omitted_steps``, ``over_budget``): consecutive
prompts still extend each other between jumps.

Cost per trajectory of n steps with stride s: parallel makes ``ceil(n/s)`` calls; sequential
makes ``j`` calls when the first valid alarm comes at the j-th scheduled prefix (all ``ceil(n/s)``
when none). Input tokens are about ``sum over audited k of (H + L(k))`` with H the fixed part
and L(k) the tokens of steps 0..k: for steps of about l tokens, ``ceil(n/s)·H + l·n²/(2s)``
uncached, but only about ``H + l·n`` new tokens with prefix caching. Calls and tokens are booked
in ``Attribution.calls`` / ``usage["audit"]``; the store key ``online_auditor`` keeps the
schedule, the audited prefixes and per-prefix token usage.

Departures from AgentForesight's released code, on purpose: it picks the mode from the gold label
(one full-trajectory audit for safe runs, the prefix walk for unsafe ones), here every trajectory
gets the same walk; its parser maps unparseable replies to SAFE, here they are invalid; steps are
0-based and numbered in the prompt; ``stride`` and the parallel walk are additions.

The auditor is the model bound to the role ``judge`` (``--model-role judge=...``), as for every
other LLM method of the suite, else the evaluated model.
"""

from __future__ import annotations

import sys
import math
from typing import Any, Literal, NamedTuple

import anyio
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, as_choice, as_int, invalid_argument, refuse_unknown
from blame.render import (
    PrefixLogs,
    RenderBudget,
    inline_list,
    note_cuts,
    render_system,
    render_task,
)
from blame.schema import Attribution, PrefixVerdict, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import situation
from solvers._gather import gather
from solvers._output import (
    final_answer,
    output_problem,
    parse_step,
    resolve_component,
)
from solvers.all_at_once import candidate_agents

Strategy = Literal["sequential", "parallel"]
STRATEGIES: tuple[str, ...] = ("sequential", "parallel")
STORE_KEY = "online_auditor"
AUTO_PREFIXES = 200
"""``stride=auto`` audits at most this many prefixes of a log (see "Schedule")."""
"""Sample-store key of the walk's details (schedule, audited prefixes, per-prefix usage)."""

SYSTEM_PROMPT = """\
You are an online auditor of an LLM-based multi-agent system. You watch one session of the \
system while it runs: at each audit you see the task, the system's components and the log of the \
steps produced so far, and nothing after them. Decide whether a decisive error has already \
been made: a mistake by one agent or component that will make the session fail unless someone \
intervenes now.

- Answer "continue" if no decisive error is visible in the steps shown so far.
- Answer "alarm" if a decisive error has already been made. Give the step of the decisive error \
(the earliest step at which it was made; it must be one of the steps shown, numbered from 0 as \
in the log) and the agent or component responsible for it.

Base every judgement on evidence in the log shown; do not raise an alarm without evidence, and \
do not wait for a failure to become obvious if the decisive error is already there.

Answer with a JSON object only:
{"reason": "<one sentence>", "verdict": "continue" or "alarm", "step": <step index, or null \
for continue>, "agent": "<who is responsible, or null for continue>"}"""

QUESTION = """\
This is the log up to step {k}. Audit it now: "continue", or "alarm" with the decisive step \
(0..{k}) and who is responsible. JSON only."""


class PrefixCall(NamedTuple):
    """One audited prefix: its verdict and the model output it came from. (A NamedTuple, not a
    dataclass: ``--solver solvers/online_auditor.py@...`` loads this file outside
    ``sys.modules``, where ``@dataclass`` fails on string annotations.)"""

    verdict: PrefixVerdict
    output: ModelOutput
    messages: list[ChatMessage]


def prefix_schedule(n_steps: int, stride: int = 1) -> list[int]:
    """The prefix ends audited for a log of ``n_steps`` steps: ``stride-1, 2*stride-1, ...`` and
    always ``n_steps-1``; ``ceil(n_steps / stride)`` of them (none for an empty log)."""
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    ends = list(range(stride - 1, n_steps, stride))
    if n_steps and (not ends or ends[-1] != n_steps - 1):
        ends.append(n_steps - 1)
    return ends


def auto_stride(n_steps: int) -> int:
    """The stride of ``stride=auto``: 1 up to ``AUTO_PREFIXES`` steps, else ``ceil(n / AUTO_PREFIXES)``."""
    return max(1, math.ceil(n_steps / AUTO_PREFIXES))


def as_stride(value: Any) -> int | str:
    """``value`` as the ``stride`` argument: ``auto`` or an integer >= 1."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise invalid_argument("stride", value, "auto or an integer >= 1")


def candidates(trajectory: Trajectory) -> list[str]:
    """Who an alarm may name: the agents on step-labelled data, every component on vector data."""
    return candidate_agents(trajectory) if trajectory.label_kind == "step" else trajectory.system.ids


def audit_header(trajectory: Trajectory, budget: RenderBudget) -> str:
    """The fixed part of a trajectory's user turn: task, components, the framing sentence
    (``solvers._framing``), who may be named."""
    who = candidates(trajectory)
    return "\n\n".join(
        [
            render_task(trajectory, budget),
            render_system(trajectory.system, budget),
            f"{situation(trajectory)} An alarm may name as responsible one of: {inline_list(who)}",
            "Session log so far:",
        ]
    )


def audit_messages(header: str, log: str, k: int) -> list[ChatMessage]:
    """The messages of the call on the prefix ``log`` ending at step ``k`` (see "Prompt layout")."""
    text = f"{header}\n{log}\n\n{QUESTION.format(k=k)}"
    return [ChatMessageSystem(content=SYSTEM_PROMPT), ChatMessageUser(content=text)]


def verdict_schema(trajectory: Trajectory, k: int | None = None) -> dict[str, Any]:
    """The verdict's JSON schema: exactly two shapes (``anyOf``), "continue" with a null step and
    agent, or "alarm" with an agent and a step. The alarm's step is an enum 0..``k`` (the audited
    prefix) when ``k`` is given, else an unbounded integer (one schema for every prefix: see
    "Schema and step range")."""
    step: dict[str, Any] = {"type": "integer"} if k is None else {"type": "integer", "enum": list(range(k + 1))}

    def shape(verdict: str, step: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
        properties = {"reason": {"type": "string"}, "verdict": {"type": "string", "enum": [verdict]}, "step": step, "agent": agent}
        return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}

    return {
        "anyOf": [
            shape("continue", {"type": "null"}, {"type": "null"}),
            shape("alarm", step, {"type": "string", "enum": candidates(trajectory)}),
        ]
    }


def parse_verdict(text: str, trajectory: Trajectory, k: int) -> PrefixVerdict:
    """The verdict on the prefix ending at ``k`` from a reply (JSON, else ``verdict:``/``step:``/
    ``agent:`` lines). Never raises: an unusable reply is ``valid=False`` with the reasons."""
    data, _ = final_answer(text, ("verdict",), ("verdict", "step", "agent", "reason"))
    if data is None:
        return PrefixVerdict(
            prefix_end=k, alarm=False, valid=False, errors=["no JSON object with 'verdict' and no 'verdict:' line in the answer"]
        )
    reason = str(data.get("reason") or "")
    word = data.get("verdict")
    word = word.strip().lower() if isinstance(word, str) else word
    if word == "continue":
        return PrefixVerdict(prefix_end=k, alarm=False, reason=reason)
    if word != "alarm":
        return PrefixVerdict(
            prefix_end=k, alarm=False, reason=reason, valid=False,
            errors=[f"verdict {data.get('verdict')!r} is neither 'continue' nor 'alarm'"],
        )
    errors: list[str] = []
    who = candidates(trajectory)
    agent = resolve_component(data.get("agent"), trajectory.system, who)
    if agent is None:
        errors.append(f"alarm names unknown agent {data.get('agent')!r} (expected one of {who})")
    step: int | None = None
    if data.get("step") is None:
        errors.append("alarm without a step")
    else:
        step, step_error = parse_step(data.get("step"), k + 1)
        if step_error:
            named, _ = parse_step(data.get("step"), sys.maxsize)  # the integer it names, if any
            if named is not None and named > k:
                step_error = f"alarm names step {named}, after the prefix end {k} (a step the auditor cannot see)"
            errors.append(step_error)
    return PrefixVerdict(prefix_end=k, alarm=True, step=step, agent=agent, reason=reason, valid=not errors, errors=errors)


def decide(verdicts: list[PrefixVerdict]) -> tuple[PrefixVerdict | None, list[PrefixVerdict]]:
    """(the earliest valid alarm or None, the invalid verdicts before it): the decision rule
    shared by both walks. Verdicts are taken in order of ``prefix_end``."""
    invalid: list[PrefixVerdict] = []
    for verdict in sorted(verdicts, key=lambda v: v.prefix_end):
        if verdict.valid and verdict.alarm:
            return verdict, invalid
        if not verdict.valid:
            invalid.append(verdict)
    return None, invalid


def _invalid_verdict(k: int, problem: str) -> PrefixVerdict:
    return PrefixVerdict(prefix_end=k, alarm=False, valid=False, errors=[problem])


@solver
def online_auditor(
    strategy: Strategy = "sequential",
    stride: int | str = "auto",
    max_concurrency: int = 8,
    structured_output: bool = True,
    bound_step: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """Per-prefix auditor: Continue or Alarm at each scheduled prefix; the earliest alarm wins.

    Args:
        strategy: ``sequential`` (stop at the first valid alarm: fewest calls) or ``parallel``
            (every scheduled prefix at once: lowest latency). Same predictions for the same answers.
        stride: audit after every ``stride`` steps (and always at the last step); ``auto``
            (default): 1 up to ``AUTO_PREFIXES`` (200) steps, else ``ceil(n / 200)``.
        max_concurrency: at most this many calls in flight per sample in the parallel walk.
        structured_output: send the verdict's JSON schema as the response format; the text is
            parsed either way.
        bound_step: the alarm's step is an enum 0..k of the audited prefix (default; a schema per
            prefix), or False: an unbounded integer, one schema per trajectory.
        max_step_chars: render budget per step, in characters (see ``blame.render.PrefixLogs``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the auditor.
    """
    refuse_unknown(online_auditor, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    strategy = as_choice("strategy", strategy, STRATEGIES)  # type: ignore[assignment]
    stride = as_stride(stride)
    max_concurrency = as_int("max_concurrency", max_concurrency, minimum=1)
    bound_step = as_bool("bound_step", bound_step)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        used = auto_stride(len(trajectory.steps)) if stride == "auto" else int(stride)
        attribution = Attribution(method="online_auditor", stride=used)
        prefixes = PrefixLogs(trajectory, budget)
        header = audit_header(trajectory, budget)
        open_schema = response_schema("audit_verdict", verdict_schema(trajectory))
        model = get_model(role="judge")
        schedule = prefix_schedule(len(trajectory.steps), used)

        async def audit(k: int) -> PrefixCall:
            log = prefixes.upto(k)
            note_cuts(attribution, log)
            messages = audit_messages(header, log.text, k)
            schema = None
            if structured_output:
                schema = response_schema("audit_verdict", verdict_schema(trajectory, k)) if bound_step else open_schema
            async with span(f"prefix_{k}"):
                output = await generate_answer(model, messages, attribution, phase="audit", schema=schema)
            problem = output_problem(output)
            verdict = _invalid_verdict(k, problem) if problem else parse_verdict(output.completion, trajectory, k)
            return PrefixCall(verdict, output, messages)

        async with span("audit"):
            if strategy == "sequential":
                calls = await _walk_sequential(audit, schedule)
            else:
                calls = await _walk_parallel(audit, schedule, max_concurrency)

        _fill(attribution, [c.verdict for c in calls])
        _record(state, calls, strategy, used, schedule)
        save_attribution(state, attribution)
        return state

    return solve


async def _walk_sequential(audit: Any, schedule: list[int]) -> list[PrefixCall]:
    calls: list[PrefixCall] = []
    for k in schedule:
        call = await audit(k)
        calls.append(call)
        if call.verdict.valid and call.verdict.alarm:
            break
    return calls


async def _walk_parallel(audit: Any, schedule: list[int], max_concurrency: int) -> list[PrefixCall]:
    limiter = anyio.Semaphore(max_concurrency)

    async def bounded(k: int) -> PrefixCall:
        async with limiter:
            return await audit(k)

    return list(await gather(*(bounded(k) for k in schedule)))


def _fill(attribution: Attribution, verdicts: list[PrefixVerdict]) -> None:
    """Record every verdict and the decision (see "Decision" and "Invalid verdicts")."""
    attribution.verdicts = sorted(verdicts, key=lambda v: v.prefix_end)
    alarm, invalid = decide(verdicts)
    if alarm is not None:
        attribution.step, attribution.agent, attribution.alarm_step = alarm.step, alarm.agent, alarm.prefix_end
        attribution.faulty = [alarm.agent] if alarm.agent else []
        attribution.reason = alarm.reason
    else:
        attribution.reason = "no alarm: the auditor let every audited prefix continue"
    for verdict in invalid:
        attribution.invalid(f"verdict on the prefix ending at step {verdict.prefix_end} is unusable: {'; '.join(verdict.errors)}")


def _record(state: TaskState, calls: list[PrefixCall], strategy: str, stride: int, schedule: list[int]) -> None:
    """The decisive call's messages and output go to the state; walk details to the store."""
    ordered = sorted(calls, key=lambda c: c.verdict.prefix_end)
    if ordered:
        alarm, _ = decide([c.verdict for c in ordered])
        last = next((c for c in ordered if alarm is not None and c.verdict is alarm), ordered[-1])
        state.messages = [*last.messages, last.output.message]
        state.output = last.output
    state.store.set(
        STORE_KEY,
        {
            "strategy": strategy,
            "stride": stride,
            "schedule": schedule,
            "audited": [c.verdict.prefix_end for c in ordered],
            "prefix_usage": [
                {
                    "prefix_end": c.verdict.prefix_end,
                    "input_tokens": c.output.usage.input_tokens if c.output.usage else None,
                    "output_tokens": c.output.usage.output_tokens if c.output.usage else None,
                    "input_tokens_cache_read": c.output.usage.input_tokens_cache_read if c.output.usage else None,
                }
                for c in ordered
            ],
        },
    )
