"""Tests for solvers/online_auditor.py: schedule, prompt layout, verdict parsing, the decision rule,
scripted walks (sequential == parallel, call counts, bounded concurrency, no label peeking, vector
data) and in-process evals on the real tasks with the offline model.

Scripted answers come from ``mockllm/model`` with a callable ``custom_outputs`` that reads which
trajectory (the task text) and which prefix (the final question) a prompt is about, so both
walks get the same answer for the same prefix whatever order they ask in. Every output carries
usage (without it mockllm downloads a tokenizer).
"""

from __future__ import annotations

import json
import re
from collections import Counter

import anyio
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import providers.offline_model  # noqa: F401  (registers offline/...)
from blame.render import END_OF_LOG, RenderBudget, join_blocks, render_prefix_blocks, render_steps
from providers.schema_sampler import sample_from_schema
from blame.schema import (
    Attribution,
    Component,
    FaultLabel,
    PrefixVerdict,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.state import stored_attribution
from scorers.auditing import auditing
from solvers.online_auditor import (
    QUESTION,
    STORE_KEY,
    SYSTEM_PROMPT,
    audit_header,
    audit_messages,
    decide,
    online_auditor,
    parse_verdict,
    prefix_schedule,
    verdict_schema,
)
from tasks._common import trajectory_to_sample
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

SYSTEM = SystemSpec(
    name="toy",
    components=[
        Component(id="Planner", name="Planner", kind="agent"),
        Component(id="Coder", name="Coder", kind="agent"),
        Component(id="terminal", name="terminal", kind="software"),
    ],
)
SPEAKERS = ["Planner", "Coder", "terminal"]


def traj(task: str, n: int = 6, label: FaultLabel | None = None, kind: str = "step", content: str = "msg") -> Trajectory:
    steps = [Step(index=i, agent=SPEAKERS[i % 3], kind="agent", content=f"{content} {i}") for i in range(n)]
    return Trajectory(id=task, source="toy", label_kind=kind, task=task, system=SYSTEM, steps=steps, label=label)  # type: ignore[arg-type]


UNSAFE = FaultLabel(faulty=["Coder"], agent="Coder", step=2)


def out(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output


def cont() -> str:
    return json.dumps({"reason": "fine so far", "verdict": "continue", "step": None, "agent": None})


def alarm_text(step: int, agent: str = "Coder") -> str:
    return json.dumps({"reason": "wrong formula", "verdict": "alarm", "step": step, "agent": agent})


class Script:
    """custom_outputs: answers by (task text, prefix end); counts calls and checks the prompt."""

    def __init__(self, answers: dict[str, dict[int, str]], delay: float = 0.0) -> None:
        self.answers = answers
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self.prompts: dict[str, list[str]] = {}
        self.in_flight = 0
        self.peak = 0

    async def __call__(self, input, tools, tool_choice, config) -> ModelOutput:
        assert input[-1].role == "user", "every prompt must end with a user turn"
        assert input[0].role == "system" and input[0].text == SYSTEM_PROMPT
        text = input[-1].text
        task = re.search(r"Task given to the system:\n(.*)", text)[1]
        k = int(re.search(r"This is the log up to step (\d+)\.", text)[1])
        self.calls[task] += 1
        self.prompts.setdefault(task, []).append(text)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
            return out(self.answers.get(task, {}).get(k, cont()))
        finally:
            self.in_flight -= 1


def run(trajectories: list[Trajectory], script, tmp_path, scorer=None, **solver_args):
    dataset = MemoryDataset([trajectory_to_sample(t) for t in trajectories])
    [log] = eval(
        Task(dataset=dataset, solver=online_auditor(**solver_args), scorer=scorer or auditing()),
        model=get_model("mockllm/model", custom_outputs=script),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    return log, {s.id: stored_attribution(s.store) for s in log.samples}


def prediction(a: Attribution) -> tuple:
    return (a.valid, a.step, a.agent, a.alarm_step, a.faulty, a.errors, a.reason)


# --- pure functions ------------------------------------------------------------------------------


def test_prefix_schedule():
    """Prefixes end every `stride` steps and always at the last step: ceil(n / stride) of them."""
    assert prefix_schedule(10) == list(range(10))
    assert prefix_schedule(10, 3) == [2, 5, 8, 9]
    assert prefix_schedule(10, 5) == [4, 9]
    assert prefix_schedule(10, 20) == [9]
    assert prefix_schedule(1, 4) == [0]
    assert prefix_schedule(0, 2) == []
    for n in range(1, 15):
        for s in range(1, 6):
            assert len(prefix_schedule(n, s)) == -(-n // s)
    with pytest.raises(ValueError):
        prefix_schedule(5, 0)


def test_solver_arguments_checked_when_built():
    for bad in ({"strategy": "random"}, {"stride": 0}, {"stride": 1.5}, {"max_concurrency": 0}):
        with pytest.raises(ValueError):
            online_auditor(**bad)


def test_prefix_blocks_are_shared_prefixes():
    """The log up to step k is a string prefix of the log up to any later step, and equals
    blame.render's rendering of steps 0..k when nothing needs cutting."""
    t = traj("t", n=8)
    blocks, truncated = render_prefix_blocks(t, RenderBudget())
    assert truncated == []
    for k in range(8):
        assert join_blocks(blocks[: k + 1]) == render_steps(t.steps[: k + 1]).text
        if k < 7:
            assert "\n\n".join(blocks[: k + 2]).startswith("\n\n".join(blocks[: k + 1]))


def test_prefix_blocks_one_cut_for_the_whole_trajectory():
    """Over the total budget, one lower per-step limit applies to every step of every prefix:
    the whole log fits, every long step is cut the same way, prefixes stay shared."""
    t = traj("t", n=6, content="x" * 500)
    budget = RenderBudget(max_step_chars=400, max_total_chars=1200)
    blocks, truncated = render_prefix_blocks(t, budget)
    assert truncated == list(range(6))
    assert len(join_blocks(blocks)) <= 1200

    def at(limit: int) -> list[str]:
        return [render_steps([s], RenderBudget(limit, 10**9)).text.removesuffix(f"\n\n{END_OF_LOG}") for s in t.steps]

    [limit] = [m for m in range(401) if at(m) == blocks]  # one per-step limit for every step
    assert len(join_blocks(at(limit + 1))) > 1200  # and the largest that fits


def test_prompt_layout_shares_the_growing_log():
    """System prompt fixed for every trajectory; each call ends with a user turn; the user text of
    prefix k, minus its short final question, is a string prefix of prefix k+1's user text."""
    t = traj("t", n=5)
    blocks, _ = render_prefix_blocks(t, RenderBudget())
    header = audit_header(t, RenderBudget())
    texts = []
    for k in range(5):
        messages = audit_messages(header, join_blocks(blocks[: k + 1]), k)
        assert [m.role for m in messages] == ["system", "user"]
        assert messages[0].text == SYSTEM_PROMPT
        assert messages[-1].text.endswith(QUESTION.format(k=k))
        texts.append(messages[-1].text)
    for k in range(4):
        shared = texts[k][: -len(f"\n\n{END_OF_LOG}\n\n" + QUESTION.format(k=k))]
        assert texts[k + 1].startswith(shared)
        assert shared.endswith(f"msg {k}")  # the shared part runs to the end of the shorter log


def test_verdict_schema_has_exactly_two_shapes():
    """Two anyOf branches (Inspect drops oneOf and const): "continue" with null step and agent, or
    "alarm" with an agent (enum of the candidates) and an integer step; with ``k`` the step is an
    enum 0..k, without it unbounded (one schema for every prefix)."""
    t = traj("t")
    go_on, alarm = verdict_schema(t, 2)["anyOf"]
    assert go_on["properties"]["verdict"] == {"type": "string", "enum": ["continue"]}
    assert go_on["properties"]["step"] == go_on["properties"]["agent"] == {"type": "null"}
    assert alarm["properties"]["verdict"] == {"type": "string", "enum": ["alarm"]}
    assert alarm["properties"]["agent"] == {"type": "string", "enum": ["Planner", "Coder"]}
    assert alarm["properties"]["step"] == {"type": "integer", "enum": [0, 1, 2]}
    assert all(b["required"] == ["reason", "verdict", "step", "agent"] for b in (go_on, alarm))
    assert verdict_schema(t)["anyOf"][1]["properties"]["step"] == {"type": "integer"}
    vector = traj("v", kind="vector", label=FaultLabel(faulty=["terminal"]))
    assert verdict_schema(vector)["anyOf"][1]["properties"]["agent"]["enum"] == ["Planner", "Coder", "terminal"]


def test_sampled_verdicts_are_never_an_alarm_without_a_step():
    """Drawn from the schema (what constrained decoding allows), 200 verdicts on the prefix k = 3
    are all valid: no alarm without a step or agent, none naming a step after k."""
    t = traj("t")
    for seed in range(200):
        text = json.dumps(sample_from_schema(verdict_schema(t, 3), policy="random", seed=seed))
        assert parse_verdict(text, t, 3).valid, text


@pytest.mark.parametrize(
    "text, expected",
    [
        (cont(), PrefixVerdict(prefix_end=3, alarm=False, reason="fine so far")),
        (alarm_text(2), PrefixVerdict(prefix_end=3, alarm=True, step=2, agent="Coder", reason="wrong formula")),
        (alarm_text(3, "coder"), PrefixVerdict(prefix_end=3, alarm=True, step=3, agent="Coder", reason="wrong formula")),
        ('{"verdict": "ALARM", "step": "step 1", "agent": "Planner"}', PrefixVerdict(prefix_end=3, alarm=True, step=1, agent="Planner")),
        ("Verdict: alarm\nStep: 0\nAgent: Planner\nReason: bad plan", PrefixVerdict(prefix_end=3, alarm=True, step=0, agent="Planner", reason="bad plan")),
        ("verdict: continue", PrefixVerdict(prefix_end=3, alarm=False)),
        # continue ignores any step/agent it carries
        ('{"verdict": "continue", "step": 9, "agent": "Nobody"}', PrefixVerdict(prefix_end=3, alarm=False)),
    ],
)
def test_parse_verdict_valid(text, expected):
    assert parse_verdict(text, traj("t"), 3) == expected


@pytest.mark.parametrize(
    "text, alarm, error",
    [
        ("I think it is fine", False, "no JSON object with 'verdict' and no 'verdict:' line"),
        ("", False, "no JSON object"),
        ('{"verdict": "maybe"}', False, "neither 'continue' nor 'alarm'"),
        ('{"reason": "x"}', False, "no JSON object with 'verdict'"),  # an object without a verdict is no answer
        (alarm_text(4), True, "after the prefix end 3"),  # a step the auditor has not seen
        (alarm_text(40), True, "after the prefix end 3"),
        (alarm_text(-1), True, "outside the log"),
        ('{"verdict": "alarm", "step": null, "agent": "Coder"}', True, "alarm without a step"),
        (alarm_text(1, "terminal"), True, "unknown agent"),  # not an agent on step-labelled data
        (alarm_text(1, "Reviewer"), True, "unknown agent"),
    ],
)
def test_parse_verdict_invalid_is_never_continue(text, alarm, error):
    """An unusable reply is an invalid verdict with its reason: never read as Continue."""
    verdict = parse_verdict(text, traj("t"), 3)
    assert not verdict.valid and verdict.alarm is alarm
    assert any(error in e for e in verdict.errors), verdict.errors


def test_decide_earliest_valid_alarm_and_the_invalid_before_it():
    v = [
        PrefixVerdict(prefix_end=4, alarm=True, step=4, agent="Coder"),
        PrefixVerdict(prefix_end=0, alarm=False),
        PrefixVerdict(prefix_end=2, alarm=False, valid=False, errors=["x"]),
        PrefixVerdict(prefix_end=3, alarm=True, step=1, agent="Planner"),
        PrefixVerdict(prefix_end=5, alarm=False, valid=False, errors=["y"]),
    ]
    alarm, invalid = decide(v)
    assert alarm is v[3] and [i.prefix_end for i in invalid] == [2]
    alarm, invalid = decide([x for x in v if x.prefix_end != 3 and x.prefix_end != 4])
    assert alarm is None and [i.prefix_end for i in invalid] == [2, 5]
    assert decide([]) == (None, [])


# --- scripted walks --------------------------------------------------------------------------------

# Six-step trajectories (prefixes 0..5 at stride 1), by task text:
#   early   alarm at prefix 3 naming step 2, another alarm at 5 -> step 2, Coder, alarm_step 3
#   quiet   always continue                                     -> no alarm, valid
#   garbled garbage at prefix 1, alarm at 4 naming step 4       -> invalid, alarm recorded at 4
#   future  prefix 2 alarms at step 5 (unseen: invalid), prefix 3 alarms at step 3 -> invalid
#   first   alarm at prefix 0 naming step 0, garbage at 2      -> valid (the garbage comes later)
ANSWERS = {
    "early": {3: alarm_text(2), 5: alarm_text(5, "Planner")},
    "quiet": {},
    "garbled": {1: "<<not json>>", 4: alarm_text(4, "Planner")},
    "future": {2: alarm_text(5), 3: alarm_text(3)},
    "first": {0: alarm_text(0, "Planner"), 2: "???"},
}
SEQUENTIAL_CALLS = {"early": 4, "quiet": 6, "garbled": 5, "future": 4, "first": 1}
EXPECTED = {
    "early": (True, 2, "Coder", 3, ["Coder"], []),
    "quiet": (True, None, None, None, [], []),
    "garbled": (False, 4, "Planner", 4, ["Planner"], ["verdict on the prefix ending at step 1 is unusable"]),
    "future": (False, 3, "Coder", 3, ["Coder"], ["verdict on the prefix ending at step 2 is unusable"]),
    "first": (True, 0, "Planner", 0, ["Planner"], []),
}


def trajectories() -> list[Trajectory]:
    return [traj(name, label=UNSAFE if name != "quiet" else None) for name in ANSWERS]


def test_sequential_and_parallel_give_identical_predictions(tmp_path):
    """Same answers, same predictions; sequential stops at the first valid alarm (fewest calls),
    parallel audits every prefix; invalid verdicts before the alarm invalidate the prediction,
    invalid ones after it (seen only by parallel) do not."""
    seq_script, par_script = Script(ANSWERS), Script(ANSWERS)
    seq_log, seq = run(trajectories(), seq_script, tmp_path / "s", strategy="sequential")
    par_log, par = run(trajectories(), par_script, tmp_path / "p", strategy="parallel")
    for name, (valid, step, agent, alarm_step, faulty, errors) in EXPECTED.items():
        a = seq[name]
        assert (a.valid, a.step, a.agent, a.alarm_step, a.faulty) == (valid, step, agent, alarm_step, faulty), name
        assert len(a.errors) == len(errors) and all(e in got for e, got in zip(errors, a.errors)), a.errors
        assert prediction(seq[name]) == prediction(par[name]), name
        assert seq_script.calls[name] == seq[name].calls == SEQUENTIAL_CALLS[name]
        assert par_script.calls[name] == par[name].calls == 6
        assert [v.prefix_end for v in par[name].verdicts] == list(range(6))
        assert [v.prefix_end for v in seq[name].verdicts] == list(range(SEQUENTIAL_CALLS[name]))
        usage = seq[name].usage["audit"]
        assert (usage.calls, usage.input_tokens, usage.output_tokens) == (seq[name].calls, 100 * seq[name].calls, 10 * seq[name].calls)
    assert seq_log.results.scores[0].metrics["exact_f1"].value == par_log.results.scores[0].metrics["exact_f1"].value
    store = {s.id: s.store[STORE_KEY] for s in seq_log.samples}
    assert store["early"]["schedule"] == list(range(6)) and store["early"]["audited"] == [0, 1, 2, 3]
    assert store["early"]["strategy"] == "sequential" and len(store["early"]["prefix_usage"]) == 4
    # the sample's output is the Attribution; its messages the decisive call's
    [sample] = [s for s in seq_log.samples if s.id == "early"]
    assert Attribution.model_validate_json(sample.output.completion) == seq["early"]
    assert sample.messages[-2].text.endswith(QUESTION.format(k=3))


def test_stride_walk(tmp_path):
    """stride=2 audits prefixes 1, 3, 5: "early" alarms at 3 (naming step 2) after 2 sequential
    calls; parallel makes 3; "first" alarms only where audited: its step-0 alarm at prefix 0 is
    never asked, prefix 1 continues, 3 continues, 5 continues -> no alarm."""
    seq_script, par_script = Script(ANSWERS), Script(ANSWERS)
    _, seq = run(trajectories(), seq_script, tmp_path / "s", strategy="sequential", stride=2)
    _, par = run(trajectories(), par_script, tmp_path / "p", strategy="parallel", stride=2)
    assert (seq["early"].step, seq["early"].alarm_step, seq_script.calls["early"]) == (2, 3, 2)
    assert (seq["first"].step, seq["first"].valid, seq_script.calls["first"]) == (None, True, 3)
    for name in ANSWERS:
        assert prediction(seq[name]) == prediction(par[name])
        assert par_script.calls[name] == 3
        assert [v.prefix_end for v in par[name].verdicts] == [1, 3, 5]


def test_sequential_with_a_list_of_outputs_makes_exactly_the_calls_needed(tmp_path):
    """A plain list of outputs: the walk consumes exactly 3 (continue, garbage, alarm) and stops;
    a fourth call would hit an output we put there to be detected."""
    outputs = [out(cont()), out("garbage"), out(alarm_text(1)), out("SHOULD NOT BE USED")]
    dataset = MemoryDataset([trajectory_to_sample(traj("one", label=UNSAFE))])
    [log] = eval(
        Task(dataset=dataset, solver=online_auditor(), scorer=auditing()),
        model=get_model("mockllm/model", custom_outputs=outputs), display="none", log_dir=str(tmp_path),
    )
    a = stored_attribution(log.samples[0].store)
    assert a.calls == 3 and (a.step, a.alarm_step, a.valid) == (1, 2, False)
    assert [(v.prefix_end, v.alarm, v.valid) for v in a.verdicts] == [(0, False, True), (1, False, False), (2, True, True)]


def test_parallel_walk_is_bounded_per_sample(tmp_path):
    """At most max_concurrency calls of a sample are in flight at once."""
    script = Script({}, delay=0.05)
    _, got = run([traj("wide", n=8)], script, tmp_path, strategy="parallel", max_concurrency=2)
    assert script.calls["wide"] == 8 and got["wide"].calls == 8
    assert script.peak == 2


def test_every_trajectory_is_walked_the_same_whatever_its_label(tmp_path):
    """No label peeking: the same log labelled unsafe or safe, both of unknown outcome (as in a
    task holding both), gets byte-identical prompts, the same number of calls and the same
    prediction."""
    answers = {"same": {4: alarm_text(1)}}
    s1, s2 = Script(answers), Script(answers)
    unknown = traj("same", label=UNSAFE).model_copy(update={"outcome": "unknown"})
    _, unsafe = run([unknown], s1, tmp_path / "u")
    _, safe = run([traj("same").model_copy(update={"outcome": "succeeded"})], s2, tmp_path / "s")
    assert s1.prompts == s2.prompts and s1.calls == s2.calls
    assert prediction(unsafe["same"]) == prediction(safe["same"])


def test_vector_data_the_alarm_names_any_component(tmp_path):
    """On vector-labelled data the alarm may name a non-agent component, which becomes the
    predicted faulty set; the vector scorer then scores it."""
    from scorers.vector import vector

    t = traj("vec", kind="vector", label=FaultLabel(faulty=["terminal"]))
    sample = trajectory_to_sample(t)
    dataset = MemoryDataset([sample])
    [log] = eval(
        Task(dataset=dataset, solver=online_auditor(), scorer=vector()),
        model=get_model("mockllm/model", custom_outputs=Script({"vec": {2: alarm_text(2, "terminal")}})),
        display="none", log_dir=str(tmp_path),
    )
    a = stored_attribution(log.samples[0].store)
    assert (a.faulty, a.agent, a.step, a.valid) == (["terminal"], "terminal", 2, True)
    assert log.samples[0].scores["vector"].value["exact"] == 1.0


def test_context_overflow_is_an_invalid_verdict(tmp_path):
    """A reply cut by the context window is invalid, and the walk goes on."""

    def overflow(input, tools, tool_choice, config):
        k = int(re.search(r"up to step (\d+)\.", input[-1].text)[1])
        output = out("" if k == 0 else cont())
        if k == 0:
            output.choices[0].stop_reason = "model_length"
        return output

    dataset = MemoryDataset([trajectory_to_sample(traj("long", n=3))])
    [log] = eval(
        Task(dataset=dataset, solver=online_auditor(), scorer=auditing()),
        model=get_model("mockllm/model", custom_outputs=overflow), display="none", log_dir=str(tmp_path),
    )
    a = stored_attribution(log.samples[0].store)
    assert a.calls == 3 and not a.valid and "context window" in a.errors[0]


# --- the real tasks, offline model ------------------------------------------------------------------

TASKS = {
    "who_and_when_ag": lambda: who_and_when(subset="algorithm_generated", solver="online_auditor"),
    "who_and_when_hc": lambda: who_and_when(subset="hand_crafted", solver="online_auditor"),
    "who_and_when_safe_controls": lambda: who_and_when(subset="hand_crafted", safe_controls=True, solver="online_auditor"),
    "blame_cortex": lambda: blame_cortex(solver="online_auditor"),
    "blame_trading": lambda: blame_trading(solver="online_auditor"),
}


@pytest.mark.parametrize("policy", ["random", "mixed"])
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_real_tasks_offline_both_walks_agree(task_name, policy, tmp_path):
    """On every task, with a deterministic offline model, both walks succeed on every sample and
    give identical predictions; parallel never makes fewer calls."""
    results = {}
    for strategy in ("sequential", "parallel"):
        [log] = eval(
            TASKS[task_name](), solver=online_auditor(strategy=strategy), model=f"offline/{policy}",
            limit=2, display="none", log_dir=str(tmp_path / strategy),
        )
        assert log.status == "success", log.error
        assert len(log.samples) == 2 and all(s.error is None for s in log.samples)
        results[strategy] = {s.id: stored_attribution(s.store) for s in log.samples}
        for s in log.samples:
            a = results[strategy][s.id]
            assert a.method == "online_auditor" and a.calls == len(s.store[STORE_KEY]["audited"])
            assert a.valid or a.errors
            assert sum(1 for e in s.events if e.event == "model") == a.calls
    for sample_id, seq in results["sequential"].items():
        par = results["parallel"][sample_id]
        assert prediction(seq) == prediction(par)
        assert par.calls >= seq.calls


def test_random_offline_model_mostly_gives_valid_attributions(tmp_path):
    """With the two-shape schema and the step bounded by the prefix, at most 20% of samples end
    invalid under offline/random (the target): here 40 samples of who_and_when with safe
    controls (logs and controls). The schema admits no invalid verdict and the random policy
    sends no malformed text, so the share is 0 (0 of all 348 samples, BENCHMARK.md)."""
    [log] = eval(who_and_when(subset="hand_crafted", safe_controls=True), solver=online_auditor(),
                 model="offline/random", limit=40, display="none", log_dir=str(tmp_path))
    attributions = [stored_attribution(s.store) for s in log.samples]
    invalid = sum(not a.valid for a in attributions)
    assert len(attributions) == 40 and invalid <= 0.2 * 40, [a.errors for a in attributions if not a.valid]
