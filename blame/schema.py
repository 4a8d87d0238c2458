"""The data model shared by loaders, tasks, solvers, scorers and analysis.

Conventions (every part of the suite relies on them):

- Steps are 0-based positions in the trajectory's ``steps`` list. ``Step.index`` always equals
  that position; labels and predictions use it. ``Step.source_index`` keeps the source file's own
  numbering for traceability.
- A component's ``id`` is its stable key. ``SystemSpec.components`` is ordered and that order IS
  the order of the binary hazard vector (``SystemSpec.vector``).
- ``Trajectory.outcome`` (failed, succeeded, unknown) says how the session ended, apart from its
  label and the label's source (``Trajectory.label_source``: none, human, silver, constructed). A
  *safe* control is a run that succeeded with no label (``Trajectory.safe``); a failed run without
  a label (a user's own run) is a failure of unknown cause, never a safe control. A task frames its
  samples by the outcomes (``blame.state``); scorers skip what they cannot score
  (``Trajectory.scorable``).
- Solvers only ever see ``Trajectory.model_view()``: no label, no ``meta`` covariates, and no
  reference answer unless a task argument asks for it.

All models are pydantic v2 and round-trip through JSON (``model_dump_json`` /
``model_validate_json``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ComponentKind = Literal["agent", "software", "hardware", "human"]
StepKind = Literal["agent", "tool_call", "tool_result", "human", "system"]
LabelKind = Literal["step", "vector"]
Outcome = Literal["failed", "succeeded", "unknown"]
LabelSource = Literal["none", "human", "silver", "constructed"]
Scalar = str | int | float | bool | None

LABEL_ONLY_KEY = "label_agent_not_in_log"
"""``Trajectory.meta`` key naming a component added only because the label names it (it never
appears in the log); ``model_view`` hides it from solvers."""

SYSTEM_SPEAKER = "system"
"""Reserved ``Step.agent`` for messages the orchestration framework itself injected (kind "system");
it is not a hazard dimension."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Component(_Model):
    """One hazard dimension: an agent, a piece of software or hardware, or a human."""

    id: str = Field(min_length=1)
    name: str
    kind: ComponentKind
    description: str = ""
    system_prompt: str | None = None
    tools: list[str] = Field(default_factory=list)


class Link(_Model):
    """A directed edge of the system's structural graph (``source`` talks to or reads ``target``)."""

    source: str
    target: str


class SystemSpec(_Model):
    """The analysed multi-agent system: ordered components and their structural links."""

    name: str
    components: list[Component]
    links: list[Link] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> SystemSpec:
        ids = [c.id for c in self.components]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"duplicate component ids: {dup}")
        known = set(ids)
        for link in self.links:
            for end in (link.source, link.target):
                if end not in known:
                    raise ValueError(f"link {link.source}->{link.target} names unknown component {end!r}")
        return self

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.components]

    @property
    def agents(self) -> list[Component]:
        return [c for c in self.components if c.kind == "agent"]

    def component(self, component_id: str) -> Component:
        for c in self.components:
            if c.id == component_id:
                return c
        raise KeyError(component_id)

    def vector(self, faulty: list[str] | set[str]) -> list[int]:
        """The binary hazard vector (in component order) for a set of component ids."""
        unknown = set(faulty) - set(self.ids)
        if unknown:
            raise ValueError(f"unknown component ids: {sorted(unknown)}")
        return [1 if c.id in faulty else 0 for c in self.components]

    def from_vector(self, vector: list[int]) -> list[str]:
        """The component ids marked 1 in a binary vector of this system's length."""
        if len(vector) != len(self.components):
            raise ValueError(f"vector has length {len(vector)}, system has {len(self.components)} components")
        if any(v not in (0, 1) for v in vector):
            raise ValueError(f"vector {vector} is not binary")
        return [c.id for c, v in zip(self.components, vector) if v == 1]


class Step(_Model):
    """One entry of a log. ``agent`` is the canonical id of the component that produced it
    (or ``SYSTEM_SPEAKER`` for a framework message of kind "system"). ``source_role`` keeps the
    source's own speaker label (e.g. ``Orchestrator (-> WebSurfer)``, ``tool:search``) and
    ``source_id`` the id of the message or event it came from (Inspect logs), so that an
    attribution can cite it."""

    index: int = Field(ge=0)
    agent: str
    kind: StepKind
    content: str = ""
    recipient: str | None = None
    tool_calls: list[str] = Field(default_factory=list)
    source_index: int | None = None
    source_role: str | None = None
    source_id: str | None = None


class ListedFailure(_Model):
    """One failure an annotation lists besides its root cause (AgentRx): its 0-based ``step``,
    the ``agent`` blamed, the normalised ``category``, the annotator's ``reason``, and
    ``speaker_matches`` (False when the agent does not produce that step: kept and flagged,
    never moved)."""

    step: int = Field(ge=0)
    agent: str
    category: str = ""
    reason: str = ""
    speaker_matches: bool = True


class LabelProvenance(_Model):
    """Who made a label and how. A label without one (``FaultLabel.provenance is None``) is the
    source dataset's own (human annotators; for BLAME the injected faults): ``label_source``
    reads it as ``human``.

    A ``constructed`` label was made by a generator that injected the fault it names (``blame
    generate``): true by construction, not by annotation.

    A ``silver`` label was made by a model (``blame label``): ``method`` (e.g. ``propose_verify``)
    run on ``model`` with ``proposers`` (P) and ``verifiers`` (V); ``support`` is the number of
    verifiers that supported the chosen candidate and ``confidences`` their confidences;
    ``rejected`` every other candidate, admitted or not; ``settings`` the method's options and
    ``log`` the name of the eval log that made it.
    """

    source: Literal["human", "silver", "constructed"]
    model: str | None = None
    method: str | None = None
    proposers: int | None = Field(default=None, ge=1)
    verifiers: int | None = Field(default=None, ge=1)
    support: int | None = Field(default=None, ge=0)
    confidences: list[Annotated[float, Field(ge=0, le=1)]] = Field(default_factory=list)
    rejected: list[Candidate] = Field(default_factory=list)
    settings: dict[str, Scalar] = Field(default_factory=dict)
    log: str | None = None


class FaultLabel(_Model):
    """Ground truth for an unsafe trajectory.

    ``faulty`` lists the faulty component ids (the binary vector is derived from it and the
    SystemSpec). ``step``/``agent`` are the decisive step and the responsible agent, when the
    source has them. ``failures`` lists every failure the source annotates (the decisive one
    included), when it lists more than the decisive one. ``provenance`` says who made the label
    (None: the source dataset, see :class:`LabelProvenance`).
    """

    faulty: list[str]
    step: int | None = None
    agent: str | None = None
    reason: str | None = None
    fault_names: list[str] = Field(default_factory=list)
    failures: list[ListedFailure] = Field(default_factory=list)
    provenance: LabelProvenance | None = None


def label_source(label: FaultLabel | None) -> str | None:
    """``human``, ``silver`` or ``constructed`` (see :class:`LabelProvenance`); None for no label."""
    if label is None:
        return None
    return label.provenance.source if label.provenance else "human"


class Trajectory(_Model):
    """One logged session of a multi-agent system: its outcome, and its label when it has one."""

    id: str
    source: str
    label_kind: LabelKind
    task: str = ""
    reference_answer: str | None = None
    system: SystemSpec
    steps: list[Step]
    label: FaultLabel | None = None
    meta: dict[str, Scalar] = Field(default_factory=dict)
    outcome: Outcome = "failed"
    """How the session ended: ``failed`` (Who&When, BLAME, a user's failed run, labelled or not),
    ``succeeded`` (no decisive fault: a safe control, a verified-safe run) or ``unknown`` (it may
    or may not have failed: AFTraj's runs, which are audited blind). In a solver's view
    (``model_view``, ``blame.state.model_view_from_state``) it holds the task's framing, ``failed``
    or ``unknown``, never ``succeeded``."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_outcome(cls, data: object) -> object:
        """Records written before ``outcome`` carry ``outcome_known`` (a bool): True reads as
        ``failed``; False as ``succeeded`` without a label (the old safe control) and ``unknown``
        with one (AFTraj's unsafe runs)."""
        if not isinstance(data, dict) or "outcome_known" not in data:
            return data
        data = dict(data)
        known = data.pop("outcome_known")
        if "outcome" in data:
            raise ValueError("outcome_known: an older name of outcome; give one of them, not both")
        if not isinstance(known, bool):
            raise ValueError(f"outcome_known: {known!r} is not true or false")
        data["outcome"] = "failed" if known else "succeeded" if data.get("label") is None else "unknown"
        return data

    @model_validator(mode="after")
    def _check(self) -> Trajectory:
        if not self.system.components:
            raise ValueError(f"system.components is empty ({self.system.name!r}): a system has at least one component")
        ids = set(self.system.ids)
        for position, step in enumerate(self.steps):
            if step.index != position:
                raise ValueError(f"steps[{position}].index is {step.index}, expected {position}")
            if step.agent not in ids and not (step.agent == SYSTEM_SPEAKER and step.kind == "system"):
                raise ValueError(f"steps[{position}].agent {step.agent!r} is not a component of {self.system.name}")
        problem = None if self.label is None else label_problem(self.label, self.system, len(self.steps), self.label_kind)
        if problem:
            raise ValueError(problem)
        return self

    @property
    def label_source(self) -> LabelSource:
        """Who made the label: ``none`` (no label), ``human``, ``silver`` or ``constructed``."""
        return label_source(self.label) or "none"

    @property
    def safe(self) -> bool:
        """A safe control: the run succeeded and no label names a fault."""
        return self.outcome == "succeeded" and self.label is None

    @property
    def scorable(self) -> bool:
        """Whether a scorer has a ground truth to compare with: a label, or a safe control. A
        failed run (or one of unknown outcome) without a label has none: scorers skip it."""
        return self.label is not None or self.safe

    @property
    def vector(self) -> list[int]:
        """The ground-truth binary hazard vector (all zeros for a safe control)."""
        return self.system.vector(self.label.faulty if self.label else [])

    def model_view(self, with_reference_answer: bool = False) -> Trajectory:
        """The copy a solver may show to a model: no label, an outcome of ``failed`` or
        ``unknown`` (never ``succeeded``), no reference answer unless asked,
        and no ``meta`` (it holds label-derived covariates such as ``n_errors`` and
        ``label_consistent``, which are for analysis only). A component that exists only because
        the label names it (``meta[LABEL_ONLY_KEY]``, e.g. an AFTraj agent absent from the log)
        is left out, so that the label never adds a choice the model is offered."""
        update: dict = {
            "outcome": "failed" if self.outcome == "failed" else "unknown",
            "label": None,
            "meta": {},
            "reference_answer": self.reference_answer if with_reference_answer else None,
        }
        hidden = self.meta.get(LABEL_ONLY_KEY)
        if hidden is not None:
            components = [c for c in self.system.components if c.id != hidden]
            links = [link for link in self.system.links if hidden not in (link.source, link.target)]
            update["system"] = self.system.model_copy(update={"components": components, "links": links})
        return self.model_copy(update=update)


STEP_HOLDER_KINDS: tuple[str, ...] = ("agent", "software", "human")
"""Component kinds a step label or a listed failure may blame. A hardware component is never
blamed for a step: its faults are hazard-vector faults only (BLAME, the simulators)."""


def label_problem(label: FaultLabel, system: SystemSpec, n_steps: int, label_kind: LabelKind) -> str | None:
    """Why ``label`` is inconsistent with itself or its system (a message naming the field), else
    None: the one rule every label meets, whichever loader made it and however a task scores it.

    - ``faulty``: at least one component (a run with no fault has no label), each a component of
      ``system``, none repeated;
    - ``step`` and ``agent``: both or neither (a ``step`` label needs both); the step inside the
      log; the agent one of ``faulty`` and of a kind in :data:`STEP_HOLDER_KINDS`;
    - ``failures``: each step inside the log and each agent a component of such a kind; under a
      ``vector`` label one of ``faulty`` (a ``step`` label's ``faulty`` is its root cause alone,
      and its listed failures may blame other agents: AgentRx);
    - ``fault_names``: each non-blank and on one line.
    """
    ids = set(system.ids)
    unknown = set(label.faulty) - ids
    if unknown:
        return f"label.faulty names unknown components {sorted(unknown)}"
    if not label.faulty:
        return "label.faulty is empty: a label names at least one faulty component (a run with no fault has no label)"
    if len(set(label.faulty)) != len(label.faulty):
        return f"label.faulty repeats a component: {label.faulty}"
    if label.step is not None and not 0 <= label.step < n_steps:
        return f"label.step {label.step} is outside the log (0..{n_steps - 1})"
    if label.agent is not None and label.agent not in ids:
        return f"label.agent {label.agent!r} is not a component"
    if (label.step is None) != (label.agent is None) or (label_kind == "step" and label.step is None):
        return (f"label: step {label.step} and agent {label.agent!r}: a label gives both or neither (a step label "
                "needs both step and agent)")
    if label.agent is not None and label.agent not in label.faulty:
        return f"label.agent {label.agent!r} is not in label.faulty {label.faulty}"
    blamed = [("label.agent", label.agent)] if label.agent is not None else []
    for i, failure in enumerate(label.failures):
        if failure.step >= n_steps or failure.agent not in ids:
            return f"label.failures[{i}] names step {failure.step} or agent {failure.agent!r} outside the log"
        if label_kind == "vector" and failure.agent not in label.faulty:
            return f"label.failures[{i}].agent {failure.agent!r} is not in label.faulty {label.faulty}"
        blamed.append((f"label.failures[{i}].agent", failure.agent))
    for where, component in blamed:
        kind = system.component(component).kind
        if kind not in STEP_HOLDER_KINDS:
            return (f"{where} {component!r} is a {kind} component: only a component of kind "
                    f"{', '.join(STEP_HOLDER_KINDS)} is blamed for a step")
    for i, name in enumerate(label.fault_names):
        if not name.strip() or name.splitlines() != [name]:
            return f"label.fault_names[{i}] {name!r}: a fault name is non-blank and on one line"
    return None


class PhaseUsage(_Model):
    """Model calls and tokens spent in one protocol phase.

    ``reasoning_tokens`` counts what providers reported. For calls whose provider reported none
    but returned reasoning text, ``reasoning_tokens_estimated`` adds ceil(characters / 4) of that
    text, so the two never count the same call.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    reasoning_tokens_estimated: int = 0


class Vote(_Model):
    """One persona's private vote (POIROT).

    ``weight`` is the voter's single weight w_i under weightings that give one (proximity,
    uniform); ``dimension_weights`` holds w_ij per hazard dimension under weightings that vary by
    dimension (structural). Both stay unset for an invalid vote, which is left out of the
    aggregation for the reasons in ``errors``.
    """

    voter: str
    faulty: list[str] = Field(default_factory=list)
    step: int | None = None
    justification: str = ""
    weight: float | None = None
    dimension_weights: dict[str, float] = Field(default_factory=dict)
    valid: bool = True
    errors: list[str] = Field(default_factory=list)


class Report(_Model):
    """A persona's self-assessment (POIROT Phase II), as shared with the others.

    ``errors`` says why ``text`` is empty or incomplete (no usable answer); such a report is
    still shared, marked as missing.
    """

    persona: str
    text: str = ""
    errors: list[str] = Field(default_factory=list)


class Exchange(_Model):
    """One question of the peer interrogation (POIROT Phase III) and the questioned persona's
    answer. ``round`` counts from 1; ``errors`` says why ``answer`` is empty."""

    round: int = Field(ge=1)
    asker: str
    target: str
    question: str
    answer: str = ""
    errors: list[str] = Field(default_factory=list)


class PrefixVerdict(_Model):
    """The online auditor's verdict on the prefix ending at step ``prefix_end`` (inclusive)."""

    prefix_end: int
    alarm: bool
    step: int | None = None
    agent: str | None = None
    reason: str = ""
    valid: bool = True
    errors: list[str] = Field(default_factory=list)


class Candidate(_Model):
    """One distinct (step, agent) candidate of a propose-and-verify ensemble.

    ``proposers`` counts the proposer calls that named it; ``support`` the verifier calls that
    answered yes to all four questions; ``confidences`` are those supporting verifiers'
    confidences; ``admitted`` says its support reached the majority threshold."""

    step: int
    agent: str
    proposers: int = Field(ge=0)
    support: int = Field(ge=0)
    confidences: list[float] = Field(default_factory=list)
    admitted: bool = False


class Attribution(_Model):
    """What every solver produces for one sample.

    ``faulty`` is the predicted set of components (the predicted binary vector); ``agent`` and
    ``step`` the predicted responsible agent and decisive step. ``valid=False`` with ``errors``
    records an answer that could not be used (malformed output, unknown agent, step outside the
    log, context overflow); scorers count it as wrong. ``truncated_steps`` lists the steps whose
    content (or header) was cut to fit the rendering budget, ``omitted_steps`` the steps left out
    of some prompt because the log could not fit the budget even with every step's content cut,
    and ``over_budget`` says that happened (``blame.render``, budgets step 3); ``stride`` is the
    stride the online auditor used (``stride=auto`` picks it from the log's length); ``answer_notes`` what was changed in a model
    answer before it was parsed (cut to its end, invalid characters replaced: ``solvers._output``).

    Fields of deliberative methods (POIROT): ``ties`` lists the components sharing the top score
    when several do (``agent`` is then the first of them in hazard order); ``label_informed``
    says a label fact (the true number of faults) shaped the prediction, so it is not comparable
    with label-free predictions; ``reports`` and ``exchanges`` are the shared deliberation;
    ``persona_usage`` books every call to the persona that made it (``usage`` books it to its
    phase); ``settings`` are the protocol options that produced this attribution, for grouping
    results.
    """

    method: str
    scores: dict[str, float] = Field(default_factory=dict)
    faulty: list[str] = Field(default_factory=list)
    agent: str | None = None
    step: int | None = None
    alarm_step: int | None = None
    stride: int | None = None
    verdicts: list[PrefixVerdict] = Field(default_factory=list)
    votes: list[Vote] = Field(default_factory=list)
    ties: list[str] = Field(default_factory=list)
    label_informed: bool = False
    reports: list[Report] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    abstained: bool = False
    valid: bool = True
    errors: list[str] = Field(default_factory=list)
    reason: str = ""
    calls: int = 0
    usage: dict[str, PhaseUsage] = Field(default_factory=dict)
    persona_usage: dict[str, PhaseUsage] = Field(default_factory=dict)
    settings: dict[str, Scalar] = Field(default_factory=dict)
    truncated_steps: list[int] = Field(default_factory=list)
    omitted_steps: list[int] = Field(default_factory=list)
    over_budget: bool = False
    answer_notes: list[str] = Field(default_factory=list)

    def invalid(self, reason: str) -> Attribution:
        """Mark this attribution invalid, keeping what was recorded so far."""
        self.valid = False
        self.errors.append(reason)
        return self
