"""The self-audit's verdicts and the folder card's validity section, from
:func:`simulators.audit.audit`'s figures (targets: ``simulators.audit``'s constants; definitions:
``docs/generated_audit.md``)."""

from __future__ import annotations

from typing import Any

from simulators.audit import ABOVE_MAJORITY_CAP, CONTROL_FLOOR, PREFIX_MARGIN, SHORTCUT_CAP


def _cell(value: float | None, digits: int = 1, scale: float = 100.0) -> str:
    return "–" if value is None else f"{scale * value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{_cell(value)}%"


def verdicts(figures: dict[str, Any]) -> dict[str, bool | None]:
    """Each target of ``simulators.audit``'s constants: met (True), missed (False), nothing to score (None)."""
    out: dict[str, bool | None] = {}
    for target in ("exact_vector", "step_agent"):
        base = figures[target]["majority"]["accuracy"]
        for name, figure in figures[target].items():
            if name != "majority":
                acc = figure["accuracy"]
                out[f"{target}/{name}"] = None if acc is None else (
                    acc <= SHORTCUT_CAP and acc - base <= ABOVE_MAJORITY_CAP)
    prefix = figures["fault_free_prefix"]
    acc, base, place = (prefix[name]["accuracy"] for name in ("classifier", "majority", "position"))
    out["fault_free_prefix/beyond_position"] = None if acc is None else acc - max(base, place) <= PREFIX_MARGIN
    twin = figures["clean_twin"]
    acc, base = twin["classifier"]["accuracy"], twin["majority"]["accuracy"]
    out["clean_twin"] = None if acc is None else acc - base <= PREFIX_MARGIN
    control_figures = figures["positive_control"]
    if control_figures is not None:
        out["positive_control/exact_vector"] = control_figures["exact_vector"]["accuracy"] >= CONTROL_FLOOR
        step_acc = control_figures["step_agent"]["accuracy"]
        out["positive_control/step_agent"] = None if step_acc is None else step_acc >= CONTROL_FLOOR
    return out


def _verdict_key(target: str, name: str) -> str | None:
    """The :func:`verdicts` key of a figure; None for a baseline (majority, position)."""
    if name in ("majority", "position"):
        return None
    return {"fault_free_prefix": "fault_free_prefix/beyond_position", "clean_twin": "clean_twin"}.get(
        target, f"{target}/{name}")


def validity_section(figures: dict[str, Any]) -> str:
    """The card's Markdown section for :func:`audit`'s figures."""
    met = verdicts(figures)
    whole = figures.get("folder_sessions", figures["sessions"])
    sampled = "" if whole == figures["sessions"] else (f" (a sample of {figures['sessions']:,} of its {whole:,} "
                                                       "sessions, chosen by a seeded hash of the id)")
    mark = {True: "yes", False: "**no**", None: "–"}
    lines = [
        "## Validity (the generator's self-audit)", "",
        f"Shortcuts that never check content against the scenario, trained on one half of the folder{sampled} "
        f"({figures['train']} sessions) and scored on the other ({figures['test']}), split by session with seed "
        f"{figures['seed']}; accuracy in %, beside the majority answer of the train half. Targets: every shortcut "
        f"at most {SHORTCUT_CAP:.0%} and at most {ABOVE_MAJORITY_CAP * 100:.0f} points above the majority; the "
        f"fault-free-prefix classifier at most {PREFIX_MARGIN * 100:.0f} points above the better of the majority and "
        f"the prefix's shape (position); the clean-twin classifier at most {PREFIX_MARGIN * 100:.0f} points above "
        f"the majority; the positive control at least {CONTROL_FLOOR:.0%}. Design effect over problem types and "
        "effective sessions beside each figure. Definitions: BLAME-bench's docs/generated_audit.md.", "",
        "| target | method | sessions | accuracy % | above majority (points) | within target | design effect | "
        "effective sessions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for target, key in (("exact vector", "exact_vector"), ("step+agent", "step_agent"),
                        ("fault id (fault-free prefix)", "fault_free_prefix"), ("fault id (clean twin)", "clean_twin")):
        base = figures[key]["majority"]["accuracy"]
        for name, f in figures[key].items():
            above = None if f["accuracy"] is None or base is None else f["accuracy"] - base
            named = _verdict_key(key, name)
            verdict = "" if named is None else mark[met[named]]
            lines.append(f"| {target} | {name.replace('_', ' ')} | {f['n']} | {_cell(f['accuracy'])} | "
                         f"{'' if name == 'majority' else _cell(above)} | {verdict} | {_cell(f['design_effect'], 2, 1)} | "
                         f"{_cell(f['effective_sessions'], 0, 1)} |")
    prefix = figures["fault_free_prefix"]
    twin = figures["clean_twin"]
    lines += ["", f"Fault-free prefix beyond the injection's position: classifier {_percent(prefix['classifier']['accuracy'])}"
              f", position (the prefix's shape) {_percent(prefix['position']['accuracy'])}, majority "
              f"{_percent(prefix['majority']['accuracy'])}: at most {PREFIX_MARGIN * 100:.0f} points above the better "
              f"of the two ({mark[met['fault_free_prefix/beyond_position']]}). The prefix ends where the fault sits, so "
              "its shape names the faulty role's turn; that place is audited as step+agent above. The scenario's "
              f"preparation: the clean twin's words give {_percent(twin['classifier']['accuracy'])} beside the "
              f"majority's {_percent(twin['majority']['accuracy'])} ({mark[met['clean_twin']]})."]
    control_figures = figures["positive_control"]
    if control_figures is None:
        lines += ["", "Positive control: no text checker for this system."]
    else:
        exact, step = control_figures["exact_vector"], control_figures["step_agent"]
        lines += ["", "Positive control (a checker that reads only the logged text and compares it with the scenario "
                  "facts the log states, written from the fault catalogue; every session, no training): exact vector "
                  f"{_percent(exact['accuracy'])} of {exact['n']} ({mark[met['positive_control/exact_vector']]}), "
                  f"step+agent {_percent(step['accuracy'])} of {step['n']} ({mark[met['positive_control/step_agent']]})."]
    v = figures["variety"]
    shown = ", ".join(f"`{w}`" for w in figures["keywords"][:12])
    more = len(figures["keywords"]) - 12
    lines += [
        "", f"- variety: {v['agent_turns']} agent turns, {v['distinct_agent_turns']} distinct, "
        f"{v['agent_turn_templates']} distinct with numbers masked; {v['word_types']} word types; "
        f"{v['problem_types']} problem types",
        f"- keywords mined from the train half (in faulty turns, never in a clean step): {len(figures['keywords'])}"
        + (f" ({shown}{f', {more} more' if more > 0 else ''})" if shown else ""),
    ]
    return "\n".join(lines)
