"""solvers._gather.gather: concurrent, ordered results, plain exceptions."""

import anyio
import pytest

from solvers._gather import gather


async def _after(delay: float, value: int, log: list[int]) -> int:
    await anyio.sleep(delay)
    log.append(value)
    return value


def test_results_keep_argument_order_while_running_concurrently() -> None:
    finished: list[int] = []

    async def main() -> tuple[list[int], float]:
        start = anyio.current_time()
        results = await gather(_after(0.06, 1, finished), _after(0.01, 2, finished), _after(0.03, 3, finished))
        return results, anyio.current_time() - start

    results, elapsed = anyio.run(main)
    assert results == [1, 2, 3]
    assert finished == [2, 3, 1]  # they ran at the same time, so the shortest ended first
    assert elapsed < 0.1  # concurrent (0.06 s), not one after another (0.10 s)


def test_no_tasks_gives_an_empty_list() -> None:
    assert anyio.run(gather) == []


def test_an_error_propagates_bare_with_its_own_cause() -> None:
    async def fails() -> int:
        try:
            raise KeyError("inner")
        except KeyError as cause:
            raise ValueError("outer") from cause

    async def main() -> None:
        await gather(_after(0.01, 1, []), fails())

    with pytest.raises(ValueError, match="outer") as caught:
        anyio.run(main)
    assert isinstance(caught.value.__cause__, KeyError)
