"""POIROT Phase I, ``hazard_space="constructed"``: an LLM space constructor builds the hazard
dimensions from the system's structural description, and the result is mapped onto the dataset.

The constructor (role ``constructor``, default the evaluated model) sees the system's name, each
agent (id, name, its system prompt or else its description, cut to ``max_prompt_chars``; its
tools) and the link graph, whose edges name the non-agent components by id. It does not see the
dataset's component list. It answers ``{"dimensions": [{"id", "kind", "description"}]}``.

Mapping: each dimension's ``id`` is resolved to a dataset component with the shared rules of
``solvers._output.resolve_component`` (exact id, display name, then NFKC/case-folded and
letter-and-digit matches; a name that spells nothing, or matches two components, resolves to none). The space is unusable, and the attribution invalid, when the answer has
no dimension list, a dimension resolves to no component, two dimensions resolve to the same
component, or an agent has no dimension. Otherwise the space is the dataset's SystemSpec
restricted to the mapped components (dataset order, so scores line up with labels; links among
them kept) with the constructor's descriptions. One call, no correction turn.
"""

from __future__ import annotations

from typing import Any, get_args

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, Model

from blame.render import RenderBudget, cut_middle, fence, inline, inline_list
from blame.schema import Attribution, ComponentKind, SystemSpec
from solvers._calls import generate_answer, response_schema
from solvers._output import extract_json_object, output_problem, resolve_component

CONSTRUCTOR = """\
You design the hazard space for a failure analysis of an LLM-based multi-agent system: the list \
of components whose failure could explain a faulty session of it. The system:

{description}

Rules:
- every agent gets exactly one dimension of its own, with the agent's exact id;
- add a dimension for another component (software, hardware, a human, a channel) only if its \
failure could matter in this system, using its id as written in the links;
- do not split a component into several dimensions (an agent's tools belong to the agent's \
dimension) and add no catch-all dimension;
- describe each dimension by what its failure would look like in a log and what normal \
behaviour is.

Answer with a JSON object only:
{{"dimensions": [{{"id": "<component id>", "kind": "agent|software|hardware|human", "description": "<failure signature; normal behaviour>"}}]}}"""


def structural_description(system: SystemSpec, budget: RenderBudget) -> str:
    """What the constructor sees: agents (roles, tools) and the link graph, not the component list."""
    lines = [f"System: {inline(system.name)}", "Agents:"]
    for agent in system.agents:
        role = fence(cut_middle(agent.system_prompt or agent.description or "(no role recorded)", budget.max_prompt_chars))
        tools = f"\n  tools: {inline_list(agent.tools)}" if agent.tools else ""
        lines.append(f"- {inline(agent.id)} ({inline(agent.name)}):\n  {role}{tools}")
    lines.append("Links (who talks to or reads whom):")
    lines += [f"- {inline(link.source)} -> {inline(link.target)}" for link in system.links] or ["(none recorded)"]
    return "\n".join(lines)


def space_schema() -> dict[str, Any]:
    """JSON schema of the constructor's answer (ids are free text: they must be mapped)."""
    dimension = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "kind": {"type": "string", "enum": list(get_args(ComponentKind))},
            "description": {"type": "string"},
        },
        "required": ["id", "kind", "description"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"dimensions": {"type": "array", "items": dimension}},
        "required": ["dimensions"],
        "additionalProperties": False,
    }


def map_space(text: str, system: SystemSpec) -> tuple[SystemSpec | None, list[str]]:
    """(space, problems): the constructed space mapped onto ``system`` (module docstring)."""
    data = extract_json_object(text, "dimensions")
    raw = data.get("dimensions") if data is not None else None
    if not isinstance(raw, list) or not raw:
        return None, [f"no 'dimensions' list in the constructor's answer: {text[:200]!r}"]
    descriptions: dict[str, str] = {}
    problems: list[str] = []
    for item in raw:
        name = item.get("id") if isinstance(item, dict) else item
        component = resolve_component(name, system)
        if component is None:
            problems.append(f"constructed dimension {name!r} maps to no component of {system.name}")
        elif component in descriptions:
            problems.append(f"two constructed dimensions map to component {component!r}")
        else:
            descriptions[component] = str(item.get("description") or "") if isinstance(item, dict) else ""
    problems += [f"agent {a.id!r} has no dimension of its own" for a in system.agents if a.id not in descriptions]
    if problems:
        return None, problems
    components = [
        c.model_copy(update={"description": descriptions[c.id]}) for c in system.components if c.id in descriptions
    ]
    links = [link for link in system.links if link.source in descriptions and link.target in descriptions]
    return SystemSpec(name=system.name, components=components, links=links), []


async def construct_space(
    system: SystemSpec, model: Model, attribution: Attribution, budget: RenderBudget, structured: bool
) -> SystemSpec | None:
    """The constructed, mapped hazard space; None (``attribution`` marked invalid) if unusable."""
    prompt = CONSTRUCTOR.format(description=structural_description(system, budget))
    schema = response_schema("hazard_space", space_schema()) if structured else None
    output = await generate_answer(model, [ChatMessageUser(content=prompt)], attribution, "hazard_space", schema)
    problem = output_problem(output)
    space, problems = (None, [problem]) if problem else map_space(output.completion, system)
    transcript().info({"constructed_space": space.ids if space else None, "problems": problems}, source="poirot")
    for problem in problems:
        attribution.invalid(f"hazard space: {problem}")
    return space
