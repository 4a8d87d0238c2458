"""The system-agnostic engine: run one session of a declared system step by step, inject faults,
replay its clean twin, check, label (``docs/simulators.md``).

A *system* (:class:`System`) declares its components in hazard-vector order, its links, its
agent roles (:class:`Role`: component, inputs, outputs, system prompt, template generator), its
tools, a seeded scenario sampler, the session script (the topology: who speaks when, reading
what), an outcome function and a fault catalogue (:class:`Fault`). The script never branches on
faults: it asks :meth:`Session.act` for an agent's turn and passes every value a non-agent
component produces (a sensor reading, a guardian's answer, a delivered command, a data feed)
through :meth:`Session.hook`; the engine applies the active faults there and records where an
injection changed what the component produced.

Randomness: the scenario comes from ``Random("<system>:<seed>:scenario")``; each role's n-th
turn, each hook's n-th value and the system's own simulation draw from streams keyed by system,
seed and name, so a session and its clean twin draw the same numbers at the same call sites, and
two systems never share a draw.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from blame.schema import Component, Link, Step, StepKind, SystemSpec

Output = dict[str, Any]
"""A turn's output: ``text`` (the message as logged) plus the role's declared output fields."""


@dataclass(frozen=True)
class Role:
    """An agent role: the component that plays it, what it reads and writes, the system prompt a
    model backend sends, and the template generator ``template(inputs, rng) -> Output``.

    Model mode (``simulators.model_mode``): the model writes ``text`` and the fields of
    ``outputs`` and ``fields`` (JSON schemas; a field without one takes the type of the template's
    value); ``derive(inputs, output)`` recomputes the fields that follow from them (a rating's
    direction); any other field is the template's for the same inputs."""

    component: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    system_prompt: str
    template: Callable[[dict[str, Any], random.Random], Output]
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    derive: Callable[[dict[str, Any], Output], Output] | None = None


@dataclass(frozen=True)
class Fault:
    """One elemental error vector of a system's catalogue.

    ``target`` is the role or roles (agent faults) or the hook (non-agent faults) it acts on. A fault
    never shapes the scenario: the system's sampler draws the conditions in which it can show for
    every session alike, and a session in which it cannot show is regenerated;
    ``apply(inputs_or_context, produced, rng)`` returns what the faulty component produces
    instead (template mode); ``check(session)`` is the programmatic manifestation check;
    ``instruction`` is the behaviour a model backend gives the role instead (agent faults);
    ``drawn`` False keeps a fault that never or almost never decides the outcome as built out of
    the default draw (drawn only when named; ``decisive_only`` refuses it).
    """

    id: str
    component: str
    target: str | tuple[str, ...]
    summary: str
    apply: Callable[[Any, Any, random.Random], Any]
    check: Callable[[Session], bool]
    instruction: str = ""
    drawn: bool = True


@dataclass(frozen=True)
class HardNegative:
    """A clean variant whose symptoms look like a fault's (zero vector): ``prepare`` shapes the
    scenario (None: the common sampler's scenario, kept only when the symptom shows),
    ``check(session)`` says the symptom showed."""

    name: str
    prepare: Callable[[dict[str, Any], random.Random], None] | None
    check: Callable[[Session], bool]


@dataclass(frozen=True)
class System:
    """A runnable multi-agent system (see the module docstring)."""

    key: str
    spec: SystemSpec
    roles: dict[str, Role]
    tools: dict[str, Callable[[Session, dict[str, Any]], str]]
    sample: Callable[[random.Random], dict[str, Any]]
    script: Callable[[Session], None]
    outcome: Callable[[Session], tuple[bool, str]]
    task: Callable[[dict[str, Any]], str]
    faults: dict[str, Fault]
    hard_negatives: dict[str, HardNegative] = field(default_factory=dict)
    conflicts: frozenset[frozenset[str]] = frozenset()
    """Fault pairs that cannot both show in one session (never drawn together)."""
    blame_mix: tuple[tuple[str, ...], ...] = ()
    """The fault sets of BLAME's public cases of this system that a generator fault can build, one
    per case (``mix="blame"`` draws one uniformly)."""
    blame_unbuilt: tuple[str, ...] = ()
    """BLAME's cases the mix leaves out, each with the reason."""

    def component_kind(self, component_id: str) -> str:
        return self.spec.component(component_id).kind


def build_spec(name: str, components: Sequence[tuple[str, str, str, str]], links: Sequence[tuple[str, str]],
               roles: dict[str, Role], tools_of: dict[str, list[str]]) -> SystemSpec:
    """A SystemSpec from ``(id, name, kind, description)`` rows, ``links`` and the roles (their
    system prompts go on the agent components, ``tools_of`` their tool names)."""
    prompts: dict[str, str] = {}
    for role in roles.values():
        if role.system_prompt:
            prompts.setdefault(role.component, role.system_prompt)
    return SystemSpec(name=name, links=[Link(source=s, target=t) for s, t in links], components=[
        Component(id=cid, name=display, kind=kind, description=description,  # type: ignore[arg-type]
                  system_prompt=prompts.get(cid), tools=tools_of.get(cid, []))
        for cid, display, kind, description in components])


class Backend(Protocol):
    """Writes a role's turn. ``turn`` returns (the output logged, the clean output for the same
    inputs, or None when the backend cannot know it); ``faults`` are the active faults on the role."""

    mode: str

    def turn(self, role: Role, inputs: dict[str, Any], rng: random.Random,
             faults: Sequence[Fault]) -> tuple[Output, Output | None]: ...


class TemplateBackend:
    """Deterministic per-role generators (no model): the role's template, then each active
    fault's replacement of it."""

    mode = "template"

    def turn(self, role: Role, inputs: dict[str, Any], rng: random.Random,
             faults: Sequence[Fault]) -> tuple[Output, Output | None]:
        clean = role.template(inputs, rng)
        produced = clean
        for fault in faults:
            produced = fault.apply(inputs, produced, rng)
        return produced, clean


class Session:
    """One run of a system on a scenario, with a set of active faults: the steps as logged, the
    hidden state (``state``: latent truth, kept for outcome and checks, never logged), the
    outcome events (``events``), the tool calls that were invalid, and the steps at which each
    fault changed what its component produced (``injections``)."""

    def __init__(self, system: System, scenario: dict[str, Any], seed: int, faults: Sequence[Fault],
                 backend: Backend) -> None:
        self.system = system
        self.scenario = scenario
        self.seed = seed
        self.faults = list(faults)
        self.backend = backend
        self.steps: list[Step] = []
        self.state: dict[str, Any] = {}
        self.events: list[tuple[str, Any]] = []
        self.outputs: list[tuple[str, dict[str, Any], Output]] = []
        self.invalid_tool_calls: list[str] = []
        self.injections: dict[str, list[int]] = {f.id: [] for f in self.faults}
        self._counters: dict[str, int] = {}

    def rng(self, stream: str) -> random.Random:
        """The next generator of the named stream (same seed, same stream, same numbers)."""
        n = self._counters.get(stream, 0)
        self._counters[stream] = n + 1
        return random.Random(f"{self.system.key}:{self.seed}:{stream}:{n}")

    def record(self, agent: str, kind: StepKind, content: str, recipient: str | None = None,
               tool_calls: Sequence[str] = ()) -> int:
        """Append one step; returns its index."""
        self.steps.append(Step(index=len(self.steps), agent=agent, kind=kind, content=content,
                               recipient=recipient, tool_calls=list(tool_calls)))
        return len(self.steps) - 1

    def active(self, target: str) -> list[Fault]:
        return [f for f in self.faults if target == f.target or (isinstance(f.target, tuple) and target in f.target)]

    def act(self, role_name: str, recipient: str | None = None, **inputs: Any) -> Output:
        """An agent's turn: the backend writes it from ``inputs``; it is logged as one step."""
        role = self.system.roles[role_name]
        faults = self.active(role_name)
        produced, clean = self.backend.turn(role, inputs, self.rng(f"role:{role_name}"), faults)
        index = self.record(role.component, "agent", produced["text"], recipient)
        if faults and clean is not None and produced != clean:
            for fault in faults:
                self.injections[fault.id].append(index)
        self.outputs.append((role_name, inputs, produced))
        return produced

    def hook(self, name: str, value: Any, context: Any = None) -> Any:
        """A value a non-agent component produces, after the active faults on hook ``name``. The
        injection is booked at the next step logged."""
        produced = value
        rng = self.rng(f"hook:{name}")
        for fault in self.active(name):
            changed = fault.apply(context, produced, rng)
            if changed != produced:
                self.injections[fault.id].append(len(self.steps))
            produced = changed
        return produced

    def tool(self, caller: str, name: str, args: dict[str, Any]) -> str:
        """A tool call and its result, as two steps (the call is invalid when ``caller`` does not
        hold the tool or the tool refuses its arguments: recorded, result an error line)."""
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        self.record(caller, "tool_call", f"{name}({shown})", tool_calls=[name])
        tools = self.system.spec.component(caller).tools
        try:
            if name not in tools or name not in self.system.tools:
                raise ValueError(f"{caller} has no tool {name}")
            result = self.system.tools[name](self, args)
        except ValueError as error:
            self.invalid_tool_calls.append(f"{name}: {error}")
            result = f"ERROR: {error}"
        self.record(caller, "tool_result", result, recipient=None)
        return result


@dataclass
class Run:
    """A finished session with its outcome."""

    session: Session
    failed: bool
    reason: str


def run_session(system: System, scenario: dict[str, Any], seed: int, faults: Sequence[Fault],
                backend: Backend) -> Run:
    """Run the system's script once (the scenario is copied, never changed)."""
    session = Session(system, copy.deepcopy(scenario), seed, faults, backend)
    system.script(session)
    failed, reason = system.outcome(session)
    return Run(session, failed, reason)


def prepared_scenario(system: System, seed: int, faults: Sequence[Fault],
                      hard_negative: HardNegative | None = None) -> dict[str, Any]:
    """The seed's scenario: the system's sampler's, the same whatever ``faults`` the session will
    run (no fault shapes it, so the steps before an injection say nothing about the fault), shaped
    only by the hard negative's ``prepare`` when it has one."""
    scenario = system.sample(random.Random(f"{system.key}:{seed}:scenario"))
    if hard_negative is not None and hard_negative.prepare is not None:
        hard_negative.prepare(scenario, random.Random(f"{system.key}:{seed}:prepare:{hard_negative.name}"))
    return scenario


def first_step(steps: Sequence[Step], test: Callable[[Step], bool]) -> Step | None:
    """The first step that passes ``test`` (None when none does)."""
    return next((s for s in steps if test(s)), None)


def first_difference(a: Sequence[Step], b: Sequence[Step]) -> int | None:
    """The first index at which two logs differ (None when equal)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def integrity_problems(session: Session) -> list[str]:
    """Invalid tool calls of the session (integrity: every tool call valid)."""
    return list(session.invalid_tool_calls)


def coherence_problems(session: Session) -> list[str]:
    """Turns that miss one of their role's declared outputs or have no text (coherence: every
    turn serves its sub-goal; programmatic in template mode)."""
    problems = []
    for role_name, _inputs, output in session.outputs:
        role = session.system.roles[role_name]
        missing = [name for name in role.outputs if output.get(name) in (None, "")]
        if missing or not str(output.get("text", "")).strip():
            problems.append(f"{role_name}: missing {', '.join(missing) or 'text'}")
    return problems
