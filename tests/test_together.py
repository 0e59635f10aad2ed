"""envcheck._proc.together: the probes' calls run at once, their results in order."""

from __future__ import annotations

import threading
from typing import List

import pytest

from envcheck._proc.together import together


def test_the_calls_run_at_the_same_time_and_answer_in_order() -> None:
    meet = threading.Barrier(3, timeout=30)  # passes only when all three wait at once

    def call(n: int) -> int:
        meet.wait()
        return n * 10

    assert together([lambda n=n: call(n) for n in range(3)]) == [0, 10, 20]
    assert together([]) == []


def test_the_first_failure_in_order_is_raised_after_every_call_ended() -> None:
    ended: List[str] = []
    release = threading.Event()

    def slow() -> str:
        release.wait(30)
        ended.append("slow")
        return "slow"

    def first() -> str:
        raise KeyError("first")

    def second() -> str:
        release.set()
        raise ValueError("second")

    with pytest.raises(KeyError):
        together([first, slow, second])
    assert ended == ["slow"]
