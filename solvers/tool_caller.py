"""Tool-Caller: a Planner that reads the whole log and may ask a Judge about at most three steps.

The full specification, and how it departs from the paper and its code:
``docs/protocols/tool_caller.md``.

The fourth baseline of RAFFLES (Zhu et al., "RAFFLES: Reasoning-based Attribution of Faults for
LLM Systems", EACL 2026, arXiv 2509.06822, section 5.1; its prompt is in appendix F.2, not
reused: this module's prompts are our own). A globally informed Planner sees the task, the system
and the whole step-numbered log, and may call the tool ``judge_step(step, suspicion)`` to have a
Judge assess one step; then it answers with the attribution. Unlike RAFFLES there is no iterative
plan and no panel of evaluators.

Protocol (one sample):

1. **Planner** (role ``planner``, phase ``planner``): ``[system, user: task + system + log +
   instructions]`` with the Inspect tool ``judge_step``. Real tool calling: the calls go through
   the provider's tool interface and Inspect's ``execute_tools``, so providers' tool parsers are
   exercised.
2. **Judge** (role ``judge``, phase ``judge``, span ``judge_step_<k>``): each accepted tool call
   is one model call that sees the task, the system and the whole log and answers whether the
   named step is the decisive error (``{"reason", "decisive_error"}``, as step-by-step asks).
   The tool returns the verdict (or why it could not be used) to the Planner.
3. **Limit.** At most ``max_tool_calls`` (default 3, the paper's) calls are accepted per sample; a
   further call is refused (a tool error that tells the Planner to answer now; no Judge call).
   A call naming a step outside the log is answered with an error and counts toward the limit.
   The loop ends when the Planner answers without a tool call; after ``max_tool_calls + 2``
   Planner turns it is asked once more with tools disabled (``tool_choice="none"``) and, with
   ``structured_output``, the answer's JSON schema. An answer without a tool call that cannot be
   read gets that same forced turn once (a user turn says why), also only with
   ``structured_output``.
4. **Answer**: the Planner's final text, read exactly as all-at-once reads its judge's answer
   (``solvers.all_at_once.read_answer``: agent and step, or the faulty set on vector data; under
   unknown outcome the "no fault" answer of ``solvers._framing``). An unusable answer is an
   invalid Attribution with the reason.

Every tool call (step, suspicion, verdict, reason, refused, errors) is stored under
``tool_caller`` in the sample store, and the conversation (tool calls and results included) is
the sample's messages, so the log shows whether the Planner used the tool.

Calls per sample: P + J, where J <= ``max_tool_calls`` is the number of accepted calls naming a
step of the log (Judge calls) and P the Planner's turns: 1 with no tool call, and at most
``max_tool_calls + 3`` (one turn per tool-calling turn, a refused turn, and the forced answer);
with one tool call per turn, no refusal and a readable answer, P = J + 1, so 1 (no call) to 7
(three calls); an unreadable answer adds the forced turn (+1).
Every call carries the whole log (O(n) tokens); the Planner's prompt grows with the tool results.

Where the paper is silent we chose: the Judge reads the whole log (not a prefix); a call naming a
step outside the log counts toward the limit; structured output applies only to the forced
final turn (tools and a response schema in one request are not supported by every provider:
vLLM's guided decoding would keep the Planner from writing a tool call).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import span

from blame.arguments import as_bool, as_int, refuse_unknown
from blame.render import RenderBudget, fence, inline, inline_list, note_cuts, render_log
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import book_usage, generate_answer, response_schema
from solvers._framing import mistake, no_fault_clause, situation, told_failed
from solvers._output import output_problem
from solvers.all_at_once import IDENTIFY, candidate_agents, read_answer, step_schema, system_prompt, vector_schema
from solvers.step_by_step import DECISIVE, decisive_schema, parse_yes_no, user_turn

STORE_KEY = "tool_caller"
"""Store key: one dict per tool call (step, suspicion, decisive, reason, refused, errors)."""

PLANNER_STEP = """\
You are the Planner. {situation} {identify}: the earliest step at which that agent made \
{mistake}. Steps are numbered from 0 as shown in the log ([step i]).

You may call the tool judge_step to have an independent Judge assess one step you suspect; use \
it only where the log leaves you unsure, at most {max_calls} times in all, then answer.

Final answer, a JSON object only:
{{"reason": "<one or two sentences of evidence>", "agent": "<one of: {agents}>", "step": <integer step index>}}{no_fault}"""

PLANNER_VECTOR = """\
You are the Planner. {situation} Identify every faulty component, listing a component only if \
the log gives evidence of its own fault, not of a fault it merely passed on.

You may call the tool judge_step to have an independent Judge assess one step you suspect; use \
it only where the log leaves you unsure, at most {max_calls} times in all, then answer.

Final answer, a JSON object only:
{{"reason": "<one or two sentences of evidence>", "faulty": [<zero or more of: {components}>]}}"""

JUDGE_QUESTION = """\
You are the Judge. {situation} The Planner suspects step {step}, produced by {agent}, of being \
the decisive error{suspicion}. Decide whether step {step} is the decisive error: {mistake}, \
made at this step rather than inherited from an earlier one.

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "decisive_error": <true or false>}}"""

REPAIR = "Your answer could not be read ({problems}). Give your final answer now as the JSON object only."

REFUSED = "judge_step was already called {n} times, the most allowed. Give your final answer now, without calling a tool."


class _Budget:
    """The tool calls of one sample (a plain class: see ``solvers.step_by_step.Walk``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.records: list[dict[str, Any]] = []

    @property
    def accepted(self) -> int:
        return sum(1 for r in self.records if not r["refused"])


def judge_step_tool(
    model: Model, trajectory: Trajectory, log_text: str, budget: RenderBudget, attribution: Attribution,
    calls: _Budget, structured_output: bool,
) -> Tool:
    """The ``judge_step`` tool of one sample: each accepted call is one Judge model call."""

    @tool(name="judge_step")
    def judge_step() -> Tool:
        async def execute(step: int, suspicion: str = "") -> str:
            """Ask an independent Judge whether one step of the log is the decisive error.

            Args:
                step: the 0-based index of the step to judge, as in the log ([step i]).
                suspicion: what you suspect is wrong at that step (optional).
            """
            record: dict[str, Any] = {"step": step, "suspicion": suspicion, "decisive": None, "reason": "", "refused": False, "errors": []}
            calls.records.append(record)
            if calls.accepted > calls.limit:
                record["refused"] = True
                raise ToolError(REFUSED.format(n=calls.limit))
            if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < len(trajectory.steps):
                record["errors"].append(f"step {step!r} is not a step of the log (0..{len(trajectory.steps) - 1})")
                raise ToolError(record["errors"][-1])
            k = calls.accepted
            async with span(f"judge_step_{k}"):
                question = JUDGE_QUESTION.format(
                    situation=situation(trajectory),
                    mistake=mistake(trajectory),
                    step=step,
                    agent=inline(trajectory.steps[step].agent),
                    suspicion=f" ({inline(suspicion.strip())})" if suspicion.strip() else "",
                )
                messages: list[ChatMessage] = [
                    ChatMessageSystem(content=system_prompt(trajectory)),
                    ChatMessageUser(content=user_turn(trajectory, budget, f"Session log:\n{log_text}", question)),
                ]
                schema = response_schema("step_verdict", decisive_schema()) if structured_output else None
                output = await generate_answer(model, messages, attribution, phase="judge", schema=schema)
            problem = output_problem(output)
            decisive, reason, errors = (None, "", [problem]) if problem else parse_yes_no(output.completion, DECISIVE)
            record.update(decisive=decisive, reason=reason, errors=errors)
            if errors:
                return f"The Judge gave no usable verdict on step {step}: {'; '.join(errors)}"
            verdict = "is" if decisive else "is not"
            return fence(f"The Judge finds that step {step} {verdict} the decisive error. Reason: {reason}")

        return execute

    return judge_step()


def _answer_problems(output: ModelOutput, trajectory: Trajectory) -> list[str]:
    """Why the Planner's answer is unusable (empty when it can be read)."""
    problem = output_problem(output)
    if problem:
        return [problem]
    return read_answer(output.completion, trajectory, Attribution(method="tool_caller")).errors


def planner_prompt(trajectory: Trajectory, log_text: str, budget: RenderBudget, max_calls: int) -> str:
    """The Planner's user turn: task, system, log, instructions."""
    if trajectory.label_kind == "step":
        instructions = PLANNER_STEP.format(
            situation=situation(trajectory),
            identify=IDENTIFY[told_failed(trajectory)],
            mistake=mistake(trajectory),
            max_calls=max_calls,
            agents=inline_list(candidate_agents(trajectory)),
            no_fault=no_fault_clause(trajectory),
        )
    else:
        instructions = PLANNER_VECTOR.format(
            situation=situation(trajectory), max_calls=max_calls, components=inline_list(trajectory.system.ids)
        )
    return user_turn(trajectory, budget, f"Session log:\n{log_text}", instructions)


@solver
def tool_caller(
    max_tool_calls: int = 3,
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """RAFFLES' Tool-Caller baseline: a Planner with a ``judge_step`` tool (see the module docstring).

    Args:
        max_tool_calls: the most judge_step calls accepted per sample (paper: 3); >= 0.
        structured_output: send the answer's JSON schema on the forced final turn.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the models.
    """
    refuse_unknown(tool_caller, kwargs)
    max_tool_calls = as_int("max_tool_calls", max_tool_calls, minimum=0)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="tool_caller", settings={"max_tool_calls": max_tool_calls})
        log = render_log(trajectory, budget)
        note_cuts(attribution, log)
        calls = _Budget(max_tool_calls)
        tools = [
            judge_step_tool(get_model(role="judge"), trajectory, log.text, budget, attribution, calls, structured_output)
        ]
        planner = get_model(role="planner")
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=system_prompt(trajectory)),
            ChatMessageUser(content=planner_prompt(trajectory, log.text, budget, max_tool_calls)),
        ]
        output: ModelOutput | None = None
        repair = False
        async with span("planner"):
            for turn in range(max_tool_calls + 3):
                forced = repair or turn == max_tool_calls + 2
                config = GenerateConfig()
                if forced and structured_output:
                    schema = step_schema(trajectory) if trajectory.label_kind == "step" else vector_schema(trajectory)
                    config = GenerateConfig(response_schema=response_schema("attribution", schema))
                output = await planner.generate(messages, tools=tools, tool_choice="none" if forced else "auto", config=config)
                book_usage(attribution, "planner", output)
                messages.append(output.message)
                if forced or not output.message.tool_calls:
                    problems = _answer_problems(output, trajectory)
                    if forced or not problems or not structured_output:
                        break
                    repair = True  # one more turn, tools off, the answer's schema sent
                    messages.append(ChatMessageUser(content=REPAIR.format(problems="; ".join(problems))))
                    continue
                result = await execute_tools(messages, tools)
                messages.extend(result.messages)
        state.messages = messages
        assert output is not None
        state.output = output
        state.store.set(STORE_KEY, calls.records)
        problem = output_problem(output)
        if problem:
            attribution.invalid(f"planner: {problem}")
        else:
            read_answer(output.completion, trajectory, attribution)
        save_attribution(state, attribution)
        return state

    return solve
