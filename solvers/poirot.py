"""POIROT: the analysed system's own agents, as personas, attribute its failure by deliberation.

The full specification, and how it departs from the paper and its code:
``docs/protocols/poirot.md``.

Dellibarda Varela et al., "POIROT", arXiv 2606.02282 (2026); reference code
github.com/11inaki11/POIROT (PyPI ``poirot-framework``). Implemented from the paper's protocol:
no prompt text or code of the reference is reused. Phases (each an Inspect span; the calls of
one phase run concurrently, each inside a span named after its persona):

I.   Hazard space. ``hazard_space="dataset"`` (default): the dataset's SystemSpec gives the
     dimensions and their order, so scores line up with the labels. ``"constructed"``: one call
     to the ``constructor`` role builds the space from the system's structural description
     (agents, their roles and tools, the link graph; not the component list). Each constructed
     dimension must resolve to a distinct dataset component and every agent needs its own, else
     the attribution is invalid. The space then holds the mapped components, in dataset order,
     with the constructor's descriptions; components it left out cannot be voted for.
II.  Self-assessment. Every agent component is a persona (its system prompt where the data has
     one, else its description). It reconstructs its own trajectory and reports anomalies or
     confirms none. ``persona_view="own"`` (default): a persona sees only the steps it sent or
     received, the paper's epistemic independence (the POIROT site: each agent sees only the
     messages it took part in; the reference's Phase 2 history filter likewise): its own steps,
     steps addressed to it, and steps with no recipient (broadcasts, group-chat turns) whose
     author has a link to it in the SystemSpec (the author's output reaches it). ``"full"``: the
     whole log, as the reference code's later Phase 1 does. ``"reference"``: the reference's
     rules, the whole log for the self-assessment and the own view for the interrogation and the
     vote.
III. Peer interrogation, ``rounds`` rounds (default 1). All reports are shared. In each round
     every persona (concurrently) asks at most ``max_questions`` questions, each to a different
     peer; then every question is answered (concurrently) by the questioned persona from its own
     context: its view of the log, the reports, and the exchanges it took part in. Nobody votes
     or states a verdict here.
IV.  Private vote (concurrent; no persona sees another's vote): ``{"faulty": [ids],
     "justification"}``, ids from the hazard space (an enum), several or none allowed; on
     step-labelled data also ``"step"`` (an integer enum 0..n-1), the decisive step of the
     accused agent. A malformed vote, or a step-level one marking components but no agent, is
     invalid and left out, with its reason.
V.   Aggregation (``solvers._aggregation``: formulas there). ``weighting="proximity"``
     (default; the reference implementation's, the only one with published results),
     ``"structural"`` or ``"uniform"``; ``beta`` = 0.25. ``faulty`` = the components whose score
     reaches ``threshold`` x the top score (default 0.5: a component needs at least half the
     weighted support of the most-blamed one; chosen a priori, not tuned on any case; 1.0 keeps
     every component tied at the top, which is *not* the reference's rule). ``max_faulty`` caps
     the set (default: no cap), ties at the cut to the lowest hazard index and listed in ``ties``;
     ``max_faulty=1`` is the reference's single winner. ``weight_decimals=4`` rounds the weights
     as the reference does, which decides some ties differently (``solvers._aggregation``).
     ``agent`` = the top-scoring component (the top-scoring agent on step-labelled data; ties in
     ``Attribution.ties``, first in hazard order wins); ``step`` = the weighted choice among the
     valid votes for that agent.

Unknown outcome (a task with safe controls, ``solvers._framing``): the shared context says the
session may or may not have failed, and on step-labelled data a vote may mark nothing with
``"step": null``; when every valid vote is empty the answer is the valid "no fault".

``preset="paper"``: the setting of the paper's Table 1 as far as the paper and the reference code
define it (``PRESETS``; BENCHMARK.md gives the commands and the remaining differences).

Ablation ladder ``mode``: C0 votes straight from the log; C1 self-assessment, then each votes
seeing its own report; C2 reports shared with all, then votes; C3 (default) the full protocol.

Prompt layout (prefix caching): every call is three user turns. 1: the shared context (the
task, the hazard space and, under "full", the whole log), byte-identical for every call of a
sample; 2: the persona (under "own" its view of the log, then its identity and role; the view
comes first so that personas whose views begin with the same steps share that prefix too),
identical across that persona's calls; 3: the phase (shared reports, exchanges, instructions).
The persona's own system prompt is quoted in turn 2 rather than sent as a system message, which
several providers move to the front. Reports, questions and answers quoted in turn 3 are cut to
``max_report_chars``; the attribution keeps them whole.

Calls per sample with A personas, R rounds, Q_r questions asked in round r:
C0: A; C1, C2: 2A; C3: 2A + R*[A >= 2]*A + sum_r Q_r, with Q_r <= A*min(max_questions, A-1);
plus 1 for ``hazard_space="constructed"``.

Models: role ``persona`` for every persona call, else role ``judge`` when only that is bound (with
a warning: ``solvers._roles``), else the evaluated model; role ``constructor`` builds the space.

Label access: the prompts are built only from ``model_view_from_state``. The one exception is
``top_k_from_label``: after every model call, Phase V reads the true number of faults k from
``trajectory_from_state`` and predicts the top k components, ranked as ``agent`` is.
Such an attribution has ``label_informed=True`` and the transcript says so.

Departures from the reference implementation: personas run concurrently, not one at a time;
answers come from the questioned persona's own context rather than a stateless server-side
model; questions are structured JSON calls, not tool calls, capped per round; the constructor
gets no correction turn; a malformed vote is excluded instead of counted as all zeros; the
multi-fault rule is a threshold (the reference has none; ``max_faulty=1`` gives its single
winner); weights are exact unless ``weight_decimals`` is set (the reference rounds them to 4
decimals); votes are parsed with the suite's shared parser. Followed: beta = 0.25 and the proximity formula, one-hot position at the voter's
own dimension, lowest hazard index wins a tie, one dimension per agent with tools inside it.
"""

from __future__ import annotations

import inspect
from typing import Any, Literal, get_args

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessageUser,
    Model,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import ArgumentError, as_bool, as_choice, as_float, as_int, refuse_unknown
from blame.render import (
    RenderBudget,
    component_label,
    cut_middle,
    fence,
    inline,
    inline_list,
    note_cuts,
    render_steps,
    render_system,
    render_task,
)
from blame.schema import (
    Attribution,
    Exchange,
    Report,
    Step,
    SystemSpec,
    Trajectory,
    Vote,
)
from blame.state import model_view_from_state, save_attribution, trajectory_from_state
from solvers import _aggregation as agg
from solvers._calls import book_usage, generate_answer, response_schema
from solvers._framing import situation, told_failed
from solvers._gather import gather
from solvers._hazard_space import construct_space
from solvers._output import output_problem
from solvers._persona_answers import (
    questions_schema,
    read_questions,
    read_report,
    read_vote,
    report_schema,
    vote_schema,
)
from solvers._roles import role_model

Mode = Literal["C0", "C1", "C2", "C3"]
PersonaView = Literal["own", "full", "reference"]
HazardSpace = Literal["dataset", "constructed"]
MODES: tuple[str, ...] = get_args(Mode)
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_REPORT_CHARS = 2000
PRESETS = {
    "paper": {
        "mode": "C3", "persona_view": "reference", "weighting": "proximity", "beta": agg.DEFAULT_BETA,
        "weight_decimals": 4, "top_k_from_label": True, "max_faulty": None,
    },
}  # fmt: skip
"""Named configurations; ``paper``: the setting of the POIROT paper's Table 1 (BENCHMARK.md)."""

CONTEXT = """\
You are taking part in a review of one session of an LLM-based multi-agent system. \
{outcome} The system's own agents analyse the session, each in the role it had in it.

{task}

{space}

{log}"""

FULL_LOG = "Session log (steps numbered from 0):\n{log}"
OWN_LOG = "Each participant sees only the steps of the log that it sent or received."

PERSONA = """\
From here on you are {persona}, an agent of this system. Your role in the session:
<<<
{role}
>>>"""

OWN_STEPS = (
    "The steps of the session seen by the participant you will play, those it sent or received "
    "(numbered as in the full log):\n{log}"
)
NO_STEPS = "The participant you will play sent or received no step of this session."

SELF_ASSESSMENT = """\
Self-assessment. Reconstruct your own trajectory in this session: what reached you, what you \
did and why, which tools you used and what they returned, citing step numbers. Check it against \
your role. Then report every anomaly the log lets you point to, in your own conduct or in what \
reached you from others, devices or people, or state that you found none. Report only what the \
log shows.

Answer with a JSON object only:
{"own_trajectory": "<your steps and reasons>", "anomalies": ["<one anomaly, with step numbers>"]}"""

QUESTIONS = """\
Peer interrogation, round {round} of {rounds}. Question the other participants to establish what \
really happened: where a report is vague, contradicts the log or another report, or concerns \
information you depended on. Ask at most {max_questions} question(s), each to a different \
participant among: {peers}. Each will answer from its own knowledge of the session. Do not say \
who you think is at fault and do not vote here: this dialogue is shared.

Answer with a JSON object only (an empty list if you have nothing to ask):
{{"questions": [{{"to": "<participant>", "question": "<your question>"}}]}}"""

ANSWER = """\
{asker} asks you (interrogation round {round}): {question}

Answer from what you saw and did in this session, citing step numbers where you can. Stick to \
facts; do not say who is at fault and do not vote. Reply in plain text."""

VOTE_VECTOR = """\
Private vote: no other participant will see it. Decide which hazard dimensions, if any, were \
faulty. Mark a component only for a fault of its own (a root cause), not for an error it merely \
passed on; mark several only if they failed independently; mark none if the session shows no fault.

Answer with a JSON object only:
{{"faulty": [<zero or more of: {dims}>], "justification": "<one or two sentences of evidence>"}}"""

VOTE_STEP = """\
Private vote: no other participant will see it. Decide which agent made the decisive error that \
led to the failure and at which step: the earliest step at which that agent made the mistake \
(steps are numbered from 0 as in the log). Mark that agent as faulty.

Answer with a JSON object only:
{{"faulty": [<the agent, one of: {agents}>], "step": <step index>, "justification": "<one or two sentences of evidence>"}}"""

VOTE_STEP_UNKNOWN = """\
Private vote: no other participant will see it. Decide whether an agent made a decisive error \
that led to a failure and, if so, which agent and at which step: the earliest step at which that \
agent made the mistake (steps are numbered from 0 as in the log). Mark that agent as faulty; if \
no agent made a decisive error, mark none and give the step as null.

Answer with a JSON object only:
{{"faulty": [<the agent, one of: {agents}; or none>], "step": <step index or null>, "justification": "<one or two sentences of evidence>"}}"""

REPORTS = "Self-assessments shared by the participants:\n\n{reports}"
OWN_REPORT = "Your self-assessment:\n{report}"
EXCHANGES = "Your exchanges in the interrogation so far:\n\n{exchanges}"


def persona_steps(trajectory: Trajectory, persona: str, view: PersonaView) -> list[Step]:
    """The steps ``persona`` sees: all of them ("full"), or those it sent or received ("own").

    Under "own" a step without a recipient (a broadcast, a group-chat turn) counts as received by
    the agents its author's outgoing links reach in the SystemSpec (who reads whose output).
    """
    if view == "full":
        return trajectory.steps
    readers = {link.source for link in trajectory.system.links if link.target == persona}
    return [
        s
        for s in trajectory.steps
        if s.agent == persona or s.recipient == persona or (s.recipient is None and s.agent in readers)
    ]


class _Session:
    """One sample's deliberation: the shared and per-persona turns, the model, the records.

    (A plain class: Inspect loads ``--solver solvers/poirot.py@poirot`` as a module outside
    ``sys.modules``, where ``@dataclass`` fails on postponed annotations.)
    """

    def __init__(
        self,
        trajectory: Trajectory,
        space: SystemSpec,
        mode: Mode,
        view: PersonaView,
        model: Model,
        structured: bool,
        budget: RenderBudget,
        max_report_chars: int,
        attribution: Attribution,
    ) -> None:
        self.trajectory, self.space, self.mode, self.model = trajectory, space, mode, model
        self.structured, self.max_report_chars, self.attribution = structured, max_report_chars, attribution
        # book_usage is the one place calls and tokens are counted; this scratch Attribution books
        # them by persona instead of by phase and becomes Attribution.persona_usage.
        self.ledger = Attribution(method="persona-ledger")
        self.personas: dict[str, ChatMessageUser] = {}
        self.assessing: dict[str, ChatMessageUser] = {}
        self._build_turns(view, budget)

    def _build_turns(self, view: PersonaView, budget: RenderBudget) -> None:
        """The shared context turn and each persona's turn; records the steps that were cut."""
        trajectory, log = self.trajectory, OWN_LOG
        whole = render_steps(trajectory.steps, budget)
        if view == "full":
            log = FULL_LOG.format(log=whole.text)
            note_cuts(self.attribution, whole)
        self.context = ChatMessageUser(
            content=CONTEXT.format(
                outcome=situation(trajectory),
                task=render_task(trajectory, budget),
                space=render_system(self.space, budget, prompts=False),
                log=log,
            )
        )
        for agent in trajectory.system.agents:
            role = agent.system_prompt or agent.description or f"the {inline(agent.name)} agent"
            parts = [PERSONA.format(persona=component_label(agent), role=fence(cut_middle(role, budget.max_prompt_chars)))]
            if view in ("own", "reference"):  # the view first: views that start alike share that prefix
                steps = persona_steps(trajectory, agent.id, "own")
                rendered = render_steps(steps, budget)
                note_cuts(self.attribution, rendered)
                parts.insert(0, OWN_STEPS.format(log=rendered.text) if steps else NO_STEPS)
            self.personas[agent.id] = ChatMessageUser(content="\n\n".join(parts))
            if view == "reference":  # the self-assessment reads the whole log (the reference's Phase 1)
                note_cuts(self.attribution, whole)
                parts[0] = FULL_LOG.format(log=whole.text)
                self.assessing[agent.id] = ChatMessageUser(content="\n\n".join(parts))

    def schema(self, name: str, schema: dict[str, Any]) -> ResponseSchema | None:
        return response_schema(name, schema) if self.structured else None

    async def call(self, persona: str, phase: str, text: str, schema: ResponseSchema | None = None) -> ModelOutput:
        turn = self.assessing.get(persona, self.personas[persona]) if phase == "self_assessment" else self.personas[persona]
        messages = [self.context, turn, ChatMessageUser(content=text)]
        output = await generate_answer(self.model, messages, self.attribution, phase, schema)
        book_usage(self.ledger, persona, output)
        return output

    def quote(self, text: str) -> str:
        """Model text shared with the personas: fenced like the log, cut to the report budget."""
        return cut_middle(fence(text), self.max_report_chars)

    def deliberation(self, persona: str) -> str:
        """What ``persona`` knows of the deliberation so far, by mode (empty under C0)."""
        reports = {r.persona: r for r in self.attribution.reports}
        if self.mode == "C0":
            return ""
        if self.mode == "C1":
            return OWN_REPORT.format(report=self._report(reports[persona]))
        blocks = [
            REPORTS.format(reports="\n\n".join(f"[report of {inline(p)}]\n{self._report(r)}" for p, r in reports.items()))
        ]
        own = [e for e in self.attribution.exchanges if persona in (e.asker, e.target)]
        if own:
            blocks.append(EXCHANGES.format(exchanges="\n\n".join(self._exchange(e) for e in own)))
        return "\n\n".join(blocks)

    def _report(self, report: Report) -> str:
        return self.quote(report.text) if report.text else f"(no report: {'; '.join(report.errors)})"

    def _exchange(self, e: Exchange) -> str:
        answer = self.quote(e.answer) if e.answer else f"(no answer: {'; '.join(e.errors)})"
        asker, target = inline(e.asker), inline(e.target)
        return f"[round {e.round}] {asker} asked {target}: {self.quote(e.question)}\n{target} answered: {answer}"

    def prompt(self, persona: str, instructions: str) -> str:
        return "\n\n".join(part for part in (self.deliberation(persona), instructions) if part)


async def _self_assess(session: _Session, persona: str) -> Report:
    async with span(persona):
        output = await session.call(
            persona, "self_assessment", SELF_ASSESSMENT, session.schema("report", report_schema())
        )
        return read_report(persona, output)


async def _ask(session: _Session, persona: str, round_: int, rounds: int, max_questions: int) -> list[Exchange]:
    async with span(persona):
        peers = [p for p in session.personas if p != persona]
        instructions = QUESTIONS.format(
            round=round_, rounds=rounds, max_questions=max_questions, peers=inline_list(peers)
        )
        schema = session.schema("questions", questions_schema(peers))
        output = await session.call(persona, "interrogation", session.prompt(persona, instructions), schema)
        asked, problems = read_questions(output, session.trajectory.system, peers, max_questions)
        if problems:
            transcript().info({"persona": persona, "round": round_, "question_problems": problems}, source="poirot")
        return [Exchange(round=round_, asker=persona, target=peer, question=q) for peer, q in asked]


async def _answer(session: _Session, exchange: Exchange) -> None:
    async with span(exchange.target):
        instructions = ANSWER.format(
            asker=inline(exchange.asker), round=exchange.round, question=session.quote(exchange.question)
        )
        output = await session.call(exchange.target, "interrogation", session.prompt(exchange.target, instructions))
        problem = output_problem(output)
        if problem:
            exchange.errors.append(problem)
        else:
            exchange.answer = output.completion.strip()


def _no_agent(vote: Vote, space: SystemSpec) -> str | None:
    """Why a step-level vote marking components but no agent is invalid (both framings), else None."""
    if vote.faulty and not {c.id for c in space.agents} & set(vote.faulty):
        return f"marks only {vote.faulty}, no agent: a step label always names an agent"
    return None


async def _vote(session: _Session, persona: str) -> Vote:
    async with span(persona):
        step_level = session.trajectory.label_kind == "step"
        n_steps = len(session.trajectory.steps) if step_level else None
        no_fault = step_level and not told_failed(session.trajectory)
        if step_level:
            template = VOTE_STEP_UNKNOWN if no_fault else VOTE_STEP
            instructions = template.format(agents=inline_list(c.id for c in session.space.agents))
        else:
            instructions = VOTE_VECTOR.format(dims=inline_list(session.space.ids))
        schema = session.schema("vote", vote_schema(session.space, n_steps, no_fault))
        output = await session.call(persona, "vote", session.prompt(persona, instructions), schema)
        vote = read_vote(persona, output, session.space, n_steps, no_fault)
        if step_level and (problem := _no_agent(vote, session.space)):
            vote.valid, vote.errors = False, [*vote.errors, problem]
        return vote


def _aggregate(session: _Session, state: TaskState, rules: dict[str, Any]) -> None:
    """Phase V: fill scores, faulty, agent, step and ties from the valid votes (``rules``: the
    weighting, beta, weight_decimals, threshold, top_k_from_label and max_faulty settings)."""
    attribution, space = session.attribution, session.space
    step_level = session.trajectory.label_kind == "step"
    valid = [v for v in attribution.votes if v.valid]
    if not valid:
        no_agent = sum(bool(_no_agent(v, space)) for v in attribution.votes) if step_level else 0
        detail = f" ({no_agent} marked components but no agent)" if no_agent else ""
        attribution.invalid(f"all {len(attribution.votes)} votes are invalid{detail}")
        return
    decimals = rules["weight_decimals"]
    exact = decimals is not None
    distances = agg.link_distances(session.trajectory.system)
    agg.weigh(valid, space.ids, rules["weighting"], rules["beta"], distances, decimals)
    attribution.scores = agg.scores(valid, space.ids, voter_order=exact)
    candidates = [c.id for c in space.agents] if step_level else space.ids
    top = agg.top_components(attribution.scores, candidates, exact)
    attribution.agent = top[0] if top else None
    attribution.ties = top if len(top) > 1 else []
    top_k_from_label, threshold = rules["top_k_from_label"], rules["threshold"]
    if top_k_from_label:
        label = trajectory_from_state(state).label  # the one label read: the fault count, after every call
        k = len(label.faulty) if label else 0
        attribution.faulty, attribution.label_informed = agg.top_k(attribution.scores, candidates, k, exact), True
        transcript().info({"label_informed": True, "top_k_from_label": k}, source="poirot")
    else:
        attribution.faulty = agg.threshold_rule(attribution.scores, threshold)
    if rules["max_faulty"] is not None:
        attribution.faulty, cut_ties = agg.cap(attribution.scores, attribution.faulty, rules["max_faulty"], exact)
        attribution.ties = sorted(set(attribution.ties) | set(cut_ties), key=space.ids.index)
    blamed = f"top {top[0]} (S = {attribution.scores[top[0]]:.3f})" if top else "no component was blamed"
    attribution.reason = f"{len(valid)} of {len(attribution.votes)} votes valid; {blamed}"
    if step_level:
        if attribution.agent is not None:
            attribution.step = agg.decisive_step(valid, attribution.agent)
        elif told_failed(session.trajectory) or any(v.faulty for v in valid):  # beta = 0: agent votes can weigh 0
            attribution.invalid("no agent has a positive score from the valid votes")
        else:  # every valid vote is empty
            attribution.faulty, attribution.reason = [], f"{len(valid)} valid votes, none marked a component: no fault"
    transcript().info({"scores": attribution.scores, "top": top, "faulty": attribution.faulty}, source="poirot")


def preset_conflict(preset: str, given: dict[str, Any]) -> str | None:
    """Why ``given`` cannot go with ``preset``: one line naming each option given a value other
    than its default that the preset fixes to another value, or None. (An option left at its
    default cannot be told from one given explicitly: the preset sets it.)"""
    defaults = {name: parameter.default for name, parameter in inspect.signature(poirot).parameters.items()}
    fixed = PRESETS[preset]
    changed = [f"{name}={value}" for name, value in given.items() if value != defaults[name] and value != fixed[name]]
    if not changed:
        return None
    return (f"POIROT preset={preset} fixes {', '.join(f'{name}={fixed[name]}' for name in fixed)}: drop "
            f"{', '.join(changed)} or the preset.")


@solver
def poirot(
    mode: Mode = "C3",
    rounds: int = 1,
    max_questions: int = 2,
    persona_view: PersonaView = "own",
    hazard_space: HazardSpace = "dataset",
    weighting: agg.Weighting = "proximity",
    beta: float = agg.DEFAULT_BETA,
    threshold: float = DEFAULT_THRESHOLD,
    top_k_from_label: bool = False,
    max_faulty: int | None = None,
    weight_decimals: int | None = None,
    preset: str | None = None,
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    max_report_chars: int = DEFAULT_MAX_REPORT_CHARS,
    **kwargs: Any,
) -> Solver:
    """POIROT (see the module docstring for the protocol and every formula).

    Args:
        mode: ablation ladder, C0 (vote from the log) .. C3 (full protocol).
        rounds: interrogation rounds (C3 only), >= 1.
        max_questions: questions a persona may ask per round (each to a different peer), >= 1.
        persona_view: "own" (steps the persona sent or received), "full" (the whole log) or
            "reference" (the whole log for the self-assessment, the own steps afterwards).
        hazard_space: "dataset" (the SystemSpec) or "constructed" (role ``constructor``).
        weighting: "proximity", "structural" or "uniform".
        beta: baseline vote weight, >= 0.
        threshold: a component is faulty when its score >= threshold * the top score; in (0, 1].
        top_k_from_label: LABEL-INFORMED: predict the top k components (ranked as ``agent``), k =
            the true number of faults (a reference-code comment's rule); marked as such.
        max_faulty: cap on the predicted set (default None: no cap); ties at the cut go to the
            lowest hazard index and are listed in ``ties``. 1 is the reference's single winner.
        weight_decimals: round each vote weight to this many decimals, sum in voter-id order and
            break ties only on exact equality, as the reference does with 4 (default None: exact).
        preset: ``"paper"``, the POIROT paper's Table 1 setting (``PRESETS``; BENCHMARK.md): it
            fixes mode, persona_view, weighting, beta, weight_decimals, top_k_from_label and
            max_faulty (one of them given another value than its default and the preset's is
            refused in one line, :func:`preset_conflict`), and is LABEL-INFORMED.
        structured_output: send JSON schemas as the response format.
        max_step_chars, max_log_chars, max_prompt_chars: render budgets (``blame.render``).
        max_report_chars: cut for each report, question and answer quoted into a prompt.
    """
    refuse_unknown(poirot, kwargs)
    if preset is not None:
        preset = as_choice("preset", preset, sorted(PRESETS))
        fixed = PRESETS[preset]
        given = {"mode": mode, "persona_view": persona_view, "weighting": weighting, "beta": beta,
                 "weight_decimals": weight_decimals, "top_k_from_label": top_k_from_label, "max_faulty": max_faulty}  # fmt: skip
        conflict = preset_conflict(preset, given)
        if conflict:
            raise ArgumentError(conflict)
        mode, persona_view, weighting, beta = fixed["mode"], fixed["persona_view"], fixed["weighting"], fixed["beta"]
        weight_decimals, top_k_from_label, max_faulty = fixed["weight_decimals"], fixed["top_k_from_label"], fixed["max_faulty"]
    top_k_from_label = as_bool("top_k_from_label", top_k_from_label)
    structured_output = as_bool("structured_output", structured_output)
    mode = as_choice("mode", mode, MODES)  # type: ignore[assignment]
    persona_view = as_choice("persona_view", persona_view, get_args(PersonaView))  # type: ignore[assignment]
    hazard_space = as_choice("hazard_space", hazard_space, get_args(HazardSpace))  # type: ignore[assignment]
    weighting = as_choice("weighting", weighting, agg.WEIGHTINGS)  # type: ignore[assignment]
    rounds = as_int("rounds", rounds, minimum=1)
    max_questions = as_int("max_questions", max_questions, minimum=1)
    max_report_chars = as_int("max_report_chars", max_report_chars, minimum=0)
    beta = as_float("beta", beta, minimum=0)
    threshold = as_float("threshold", threshold, above=0, maximum=1)
    max_faulty = None if max_faulty is None else as_int("max_faulty", max_faulty, minimum=1)
    weight_decimals = None if weight_decimals is None else as_int("weight_decimals", weight_decimals, minimum=0)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)
    settings = {
        "mode": mode, "rounds": rounds, "max_questions": max_questions, "persona_view": persona_view,
        "hazard_space": hazard_space, "weighting": weighting, "beta": beta, "threshold": threshold,
        "top_k_from_label": top_k_from_label, "max_faulty": max_faulty, "weight_decimals": weight_decimals,
        "preset": preset,
    }  # fmt: skip

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="poirot", settings=dict(settings))
        personas = [c.id for c in trajectory.system.agents]
        if not personas:
            save_attribution(state, attribution.invalid("the system has no agent component to act as a persona"))
            return state
        async with span("hazard_space"):
            space = trajectory.system
            if hazard_space == "constructed":
                space = await construct_space(
                    trajectory.system, get_model(role="constructor"), attribution, budget, structured_output
                )
        if space is None:
            save_attribution(state, attribution)
            return state
        session = _Session(
            trajectory, space, mode, persona_view, role_model("persona", "poirot"), structured_output, budget,
            max_report_chars, attribution,
        )  # fmt: skip
        if mode != "C0":
            async with span("self_assessment"):
                attribution.reports = await gather(*(_self_assess(session, p) for p in personas))
        if mode == "C3" and len(personas) > 1:
            async with span("interrogation"):
                for round_ in range(1, rounds + 1):
                    async with span(f"round_{round_}"):
                        asked = await gather(*(_ask(session, p, round_, rounds, max_questions) for p in personas))
                        exchanges = [e for batch in asked for e in batch]
                        await gather(*(_answer(session, e) for e in exchanges))
                        attribution.exchanges.extend(exchanges)
        async with span("vote"):
            attribution.votes = await gather(*(_vote(session, p) for p in personas))
        async with span("aggregation"):
            _aggregate(session, state, settings)
        attribution.persona_usage = session.ledger.usage
        save_attribution(state, attribution)
        return state

    return solve
