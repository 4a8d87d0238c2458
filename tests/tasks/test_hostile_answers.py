"""One hostile model answer among many samples: the run finishes and every sample is scored.

Under Inspect's defaults (fail on the first sample error), an answer that crashed or stalled the
parser used to lose the whole run. A scripted model (Inspect's ``mockllm``) answers the judge of
``all_at_once`` on Who&When; each hostile answer goes to one sample of a run of many.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval
from inspect_ai.model import ModelAPI, ModelOutput, get_model, modelapi
from inspect_ai.model._providers.mockllm import MockLLM

from blame.schema import Attribution
from tasks.who_and_when import who_and_when

N_SAMPLES = 8
GOOD = '{"reason": "it miscounted", "agent": "Orchestrator", "step": 1}'
UNICODE = '{"agent": "Orchestrator", "step": 1, "reason": "bad \\ud800 escape \\u0000 here"}'
INVALID = {
    "integer beyond Python's digit limit": '{"agent": "Orchestrator", "step": "' + "9" * 5000 + '"}',
    "1 MB without JSON": "{[" * 250_000 + "agent:",
}


class _Scripted(MockLLM):
    """Inspect's mockllm without its tokenizer download (this machine is offline)."""

    async def count_text_tokens(self, text: str) -> int:
        return len(text) // 4


@modelapi(name="hostile_script")
def _hostile_script() -> type[ModelAPI]:
    return _Scripted


def test_hostile_answers_among_many_samples(tmp_path: Path) -> None:
    """Every sample of the run is scored and the log is written (its text valid UTF-8): each
    unusable answer is an invalid attribution with a reason, the answer with invalid Unicode
    escapes is read with the characters replaced and the replacement noted, and the other
    samples are read normally."""
    answers = [*INVALID.values(), UNICODE] + [GOOD] * (N_SAMPLES - len(INVALID) - 1)
    model = get_model("hostile_script/model", custom_outputs=[ModelOutput.from_content("script", a) for a in answers])
    [log] = eval(
        who_and_when(subset="hand_crafted"), model=model, limit=N_SAMPLES,
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == N_SAMPLES
    assert all(sample.scores for sample in log.samples)
    attributions = [Attribution.model_validate_json(sample.output.completion) for sample in log.samples]
    invalid = [a for a in attributions if not a.valid]
    assert len(invalid) == len(INVALID) and all(a.errors for a in invalid)
    assert any("more than 18 digits" in e for a in invalid for e in a.errors)
    assert any("cut to its last" in note for a in invalid for note in a.answer_notes)
    valid = [a for a in attributions if a.valid]
    assert all(a.agent == "Orchestrator" and a.step == 1 for a in valid)
    [replaced] = [a for a in valid if a.answer_notes]
    assert replaced.reason == "bad \ufffd escape \ufffd here" and "replaced" in replaced.answer_notes[0]
