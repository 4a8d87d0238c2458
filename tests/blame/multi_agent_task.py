"""A small multi-agent Inspect task for the Inspect-log importer's tests: a supervisor (``react``)
hands off to a researcher and a coder (``handoff()``), each with a tool of its own, on scripted
``mockllm`` models (usage set, so that mockllm never loads a tokenizer). Run it as a user would:

    inspect eval tests/blame/multi_agent_task.py --model mockllm/model [-T answer=Paris]

Every model decides from the conversation it is given (no state shared between samples): the
supervisor hands off to the researcher, then to the coder, then submits ``answer``; the researcher
calls ``search`` (whose result names the wrong city) then submits; the coder calls ``word_count``
then submits. The target is Paris: with the default answer (Lyon) every sample fails.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.agent import handoff, react
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.tool import tool

QUESTIONS = {"q1": "What is the capital of France?", "q2": "Which city is France's capital?"}


@tool
def search():
    async def execute(query: str) -> str:
        """Search the web.

        Args:
            query: what to look for
        """
        return "Lyon is the capital of France (a page from 1793)."

    return execute


@tool
def word_count():
    async def execute(text: str) -> str:
        """Count the words of a text.

        Args:
            text: the text
        """
        return str(len(text.split()))

    return execute


def _called(messages: list[ChatMessage], function: str) -> bool:
    return any(m.role == "tool" and m.function == function for m in messages)


def _out(tool_name: str, arguments: dict, content: str) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", tool_name, arguments, content=content)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def _supervisor(answer: str):
    def generate(messages, tools, tool_choice, config) -> ModelOutput:
        if not _called(messages, "transfer_to_researcher"):
            return _out("transfer_to_researcher", {}, "The researcher should look this up.")
        if not _called(messages, "transfer_to_coder"):
            return _out("transfer_to_coder", {}, "The coder should check the answer's length.")
        return _out("submit", {"answer": answer}, f"Final answer: {answer}")

    return generate


def _researcher(messages, tools, tool_choice, config) -> ModelOutput:
    if not _called(messages, "search"):
        return _out("search", {"query": "capital of France"}, "Searching.")
    return _out("submit", {"answer": "Lyon"}, "The search says Lyon.")


def _coder(messages, tools, tool_choice, config) -> ModelOutput:
    if not _called(messages, "word_count"):
        return _out("word_count", {"text": "Lyon"}, "Counting.")
    return _out("submit", {"answer": "one word"}, "The answer is one word.")


@task
def multi_agent(answer: str = "Lyon") -> Task:
    """Two samples, one scorer (``match`` against Paris)."""
    researcher = react(name="researcher", description="Looks facts up on the web.", tools=[search()],
                       model=get_model("mockllm/model", custom_outputs=_researcher))
    coder = react(name="coder", description="Writes and runs small programs.", tools=[word_count()],
                  model=get_model("mockllm/model", custom_outputs=_coder))
    supervisor = react(name="supervisor", description="Plans and delegates.", tools=[handoff(researcher), handoff(coder)],
                       model=get_model("mockllm/model", custom_outputs=_supervisor(answer)))
    return Task(dataset=[Sample(id=i, input=q, target="Paris") for i, q in QUESTIONS.items()], solver=supervisor,
                scorer=match())
