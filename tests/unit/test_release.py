"""Which conversations are released, and when: the policy alone, without trio."""

from __future__ import annotations

import math

import pytest

from protocol.history.release import ReleasePolicy, Use


def policy_with(limit: int, idle: float, *uses: tuple[str, float, Use]) -> ReleasePolicy:
    policy = ReleasePolicy(limit, idle)
    for conversation, at, state in uses:
        policy.used(conversation, at, state)
    return policy


def test_beyond_the_limit_the_least_recently_used_go_first() -> None:
    policy = policy_with(2, 100, ("a", 1, Use.IDLE), ("b", 2, Use.IDLE), ("c", 3, Use.IDLE), ("d", 4, Use.IDLE))
    assert policy.due(5) == ["a", "b"]
    assert len(policy) == 2 and "c" in policy and "d" in policy
    assert policy.due(5) == []


def test_a_conversation_used_again_moves_to_the_back() -> None:
    policy = policy_with(2, 100, ("a", 1, Use.IDLE), ("b", 2, Use.IDLE))
    policy.used("a", 3, Use.STREAMING)
    policy.used("a", 4, Use.IDLE)
    policy.used("c", 5, Use.IDLE)
    assert policy.due(6) == ["b"]


def test_a_streaming_conversation_is_never_released_even_over_the_limit() -> None:
    policy = policy_with(1, 10, ("a", 0, Use.STREAMING), ("b", 1, Use.STREAMING), ("c", 2, Use.IDLE))
    assert policy.due(1000) == ["c"]
    assert policy.due(1000) == []  # two streaming, limit one: nothing else to give
    assert len(policy) == 2


def test_one_waiting_on_vscode_goes_only_under_pressure_and_after_every_idle_one() -> None:
    policy = policy_with(2, 10, ("w", 0, Use.WAITING), ("a", 1, Use.IDLE), ("b", 2, Use.IDLE))
    assert policy.due(1000) == ["a", "b"]  # idle too long; the waiting one is not
    policy.used("c", 1001, Use.IDLE)
    policy.used("d", 1002, Use.STREAMING)
    assert policy.due(1003) == ["c"]  # over the limit: an idle one goes first, however recent
    policy.used("e", 1004, Use.STREAMING)
    assert policy.due(1005) == ["w"]  # over the limit with no idle one left: the waiting one goes


def test_idle_time_releases_whatever_has_been_idle_that_long() -> None:
    policy = policy_with(100, 30, ("a", 0, Use.IDLE), ("b", 10, Use.IDLE), ("c", 20, Use.IDLE))
    assert policy.deadline() == 30
    assert policy.due(29.9) == []
    assert policy.due(40) == ["a", "b"]
    assert policy.deadline() == 50


def test_a_deadline_that_has_passed_always_releases_something() -> None:
    # The deadline and the release test are the same sum, so a woken History never spins.
    for last, idle in [(0.1, 0.2), (1e9 + 0.1, 1800.0), (3.3, 0.0), (2.675, 0.005)]:
        policy = policy_with(10, idle, ("a", last, Use.IDLE))
        assert policy.due(policy.deadline()) == ["a"]


def test_the_deadline_ignores_conversations_idle_time_does_not_release() -> None:
    policy = policy_with(10, 5, ("s", 0, Use.STREAMING), ("w", 1, Use.WAITING))
    assert policy.deadline() == math.inf
    policy.used("i", 2, Use.IDLE)
    assert policy.deadline() == 7
    policy.forget("i")
    assert policy.deadline() == math.inf and len(policy) == 2


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        ReleasePolicy(0, 1)
