"""Run a phase's independent calls concurrently, without extra transcript spans.

``inspect_ai.util.collect`` wraps every task in a span named ``task-<i>``. Our solvers already
open a span named after what each task is (a persona, an evaluator, a prefix), so that wrapper
only doubled the span events, which Inspect writes to its realtime buffer one by one (about 0.15
ms of harness work per call that every concurrent call of a round waits behind).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import anyio

T = TypeVar("T")


async def gather(*tasks: Awaitable[T]) -> list[T]:
    """Await ``tasks`` concurrently; their results in argument order. An exception in one task
    cancels the others and propagates (the first one, not an exception group)."""
    results: list[T | None] = [None] * len(tasks)

    async def run(index: int, task: Awaitable[T]) -> None:
        results[index] = await task

    try:
        async with anyio.create_task_group() as group:
            for index, task in enumerate(tasks):
                group.start_soon(run, index, task)
    except BaseExceptionGroup as group_error:
        error = group_error.exceptions[0]
        raise error from error.__cause__  # keeps its own cause, drops the group as context
    return results  # type: ignore[return-value]
