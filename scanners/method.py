"""Every method of the suite as an Inspect Scout scanner, ``blame_bench/<method>``.

One factory (:func:`method_scanner`) makes the scanner of each name in ``solvers.SOLVERS``
(:data:`SCANNERS`). A scanner reads one transcript of an Inspect sample (its messages and its
``model``, ``tool`` and ``span_begin`` events) and:

1. converts it to a trajectory (``scanners.transcript``: the Inspect-log importer's steps and
   failure rule; a run that did not fail gets the value None and no attribution);
2. runs the method's own solver on a task state built for it, exactly as the trajectories task
   would run it on that trajectory imported (``blame.state``: the trajectory in the metadata,
   framed as failed, or neutrally under ``all_samples``); the solver asks ``get_model(role=...)``
   itself, which in a scan is the scan model (``--model``) unless the role is bound
   (``--model-role judge=...``; POIROT's personas: ``persona``);
3. returns the attribution as a Result: ``value`` ``{"agent", "step", "faulty", "valid",
   "errors"}``, ``answer`` ``"<agent> at step <i>"``, ``explanation`` the method's reason,
   ``references`` the message (else the tool event) the attributed step came from
   (``Step.source_id``), ``metadata`` the full ``Attribution`` and the cited step's text.

An attribution the method could not make (a malformed model answer, a transcript with nothing to
attribute, a scorer the transcript lacks) is ``valid: false`` with the reasons in ``errors`` and
no agent, step or reference: never a substitute answer. A model that fails for good raises, so
that Scout records a scan error (and ``scout scan resume`` retries it), as Inspect records a sample
error in an eval.

Scanner arguments (``-S key=value``): ``scorer`` and ``failures`` (comma-separated values, default
``I,N,0,false``) as ``blame data import inspect``'s ``--scorer`` and ``--failure``;
``all_samples`` attributes every scored run, framed neutrally; any other argument is the solver's
own (``docs/options.md``), refused when the solver has no such option.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import ModelName
from inspect_ai.solver import TaskState
from inspect_scout import Reference, Result, Scanner, Transcript, scanner

from blame.arguments import as_bool
from blame.inspect_log import DEFAULT_FAILURES
from blame.schema import Attribution, Trajectory
from blame.state import (
    FRAMING_KEY,
    KNOWN_FAILURE,
    TRAJECTORY_KEY,
    UNKNOWN_OUTCOME,
    stored_attribution,
    trajectory_metadata,
)
from scanners.names import scanner_name
from scanners.transcript import transcript_trajectory
from solvers import SOLVERS

EVENTS = ["model", "tool", "span_begin"]
"""The events the importer reads (model outputs, tool calls, agent spans)."""
CITED_CHARS = 500
"""The cited step's text is kept in the result's metadata up to this many characters."""


def method_scanner(method: str) -> Callable[..., Scanner[Transcript]]:
    """The scanner factory of ``method`` (a name of ``solvers.SOLVERS``), registered as
    ``blame_bench/<method>``."""
    build_solver = SOLVERS[method]

    def factory(scorer: str | None = None, failures: str | list[str] = ",".join(DEFAULT_FAILURES),
                all_samples: bool = False, **options: Any) -> Scanner[Transcript]:
        values = failures.split(",") if isinstance(failures, str) else [str(f) for f in failures]
        keep_all = as_bool("all_samples", all_samples)
        solve = build_solver(**options)
        framing = UNKNOWN_OUTCOME if keep_all else KNOWN_FAILURE

        async def scan(transcript: Transcript) -> Result:
            converted = transcript_trajectory(transcript, scorer, values, keep_all)
            if converted.problem is not None:
                return attribution_result(None, Attribution(method=method).invalid(converted.problem), set())
            if converted.trajectory is None:
                return Result(value=None, explanation=f"not attributed: not a failed run (outcome {converted.outcome})")
            # the solver asks get_model() for its models itself: the state's model is never read
            state = TaskState(model=ModelName("none/none"), sample_id=converted.trajectory.id,
                              epoch=transcript.task_repeat or 1, input=converted.trajectory.task, messages=[],
                              metadata={TRAJECTORY_KEY: trajectory_metadata(converted.trajectory), FRAMING_KEY: framing})
            state = await solve(state, _no_generate)
            attribution = stored_attribution(state.store) or Attribution(method=method).invalid("the method left no "
                                                                                                "attribution")
            return attribution_result(converted.trajectory, attribution, {m.id for m in transcript.messages if m.id})

        return scan

    factory.__name__ = factory.__qualname__ = method
    factory.__doc__ = f"The method {method} as a scanner (module docstring of scanners.method)."
    return scanner(name=scanner_name(method), messages="all", events=EVENTS)(factory)


async def _no_generate(state: TaskState, **kwargs: Any) -> TaskState:
    raise RuntimeError("a method calls its models itself (get_model), never the task's generate()")


def attribution_result(trajectory: Trajectory | None, attribution: Attribution, message_ids: set[str]) -> Result:
    """The Result of one attribution (module docstring); an invalid one names nothing."""
    if not attribution.valid or trajectory is None:
        return Result(value={"agent": None, "step": None, "faulty": [], "valid": False, "errors": attribution.errors},
                      explanation="invalid: " + "; ".join(attribution.errors),
                      metadata={"attribution": attribution.model_dump(mode="json")})
    step = attribution.step
    cited = trajectory.steps[step] if step is not None and 0 <= step < len(trajectory.steps) else None
    references = [Reference(type="message" if cited.source_id in message_ids else "event", id=cited.source_id,
                            cite=f"[step {step}]")] if cited is not None and cited.source_id else []
    named = attribution.agent or ", ".join(attribution.faulty)
    answer = "no fault" if not named else f"{named} at step {step}" if step is not None else named
    return Result(
        value={"agent": attribution.agent, "step": step, "faulty": attribution.faulty, "valid": True, "errors": []},
        answer=answer,
        explanation=(f"{named} at [step {step}]: " if cited is not None else f"{answer}: ") + attribution.reason,
        references=references,
        metadata={"attribution": attribution.model_dump(mode="json"), "trajectory": trajectory.id,
                  "cited": cited.content[:CITED_CHARS] if cited is not None else "",
                  "cited_id": (cited.source_id or "") if cited is not None else ""},
    )


SCANNERS: dict[str, Callable[..., Scanner[Transcript]]] = {name: method_scanner(name) for name in SOLVERS}
"""Every method's scanner factory by its ``SOLVERS`` name (registered as ``blame_bench/<name>``).
Built here, in the module whose file Scout records, so that loading the file registers them all."""
