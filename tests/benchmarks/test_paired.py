"""The paired measurement of launch_overhead.py's shapes block (and hit_instructions --wall):
rounds of one burst of each path back to back, in turns, and the median difference with its
confidence interval."""

from __future__ import annotations

import random

from benchmarks.launch_overhead import difference, paired_times


def test_the_paths_take_turns_within_each_round() -> None:
    order: list[str] = []
    pairs = {"k": (lambda count: order.append(f"a{count}"), lambda count: order.append(f"b{count}"))}
    times = paired_times(pairs, rounds=4, per_burst=7, settle=lambda: order.append("settle"))
    assert order[:5] == ["a20", "b20", "settle", "a7", "settle"]  # the warm-up, then the rounds
    bursts = [entry for entry in order[3:] if entry != "settle"]
    assert bursts == ["a7", "b7", "b7", "a7", "a7", "b7", "b7", "a7"]
    assert order[3:].count("settle") == 8  # after every burst, outside its time
    assert [len(side) for side in times["k"]] == [4, 4]


def test_the_difference_is_taken_round_by_round() -> None:
    """A drift that moves both paths alike (here: 1000 ns more every round) leaves the
    difference alone; the median's 95% interval is that of the order statistics of ranks
    n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n)."""
    extra = list(range(1, 100))  # 99 rounds: the second path costs 1 to 99 ns more
    random.Random(0).shuffle(extra)
    first = [1000.0 * r for r in range(99)]
    second = [a + e for a, e in zip(first, extra)]
    found = difference(first, second)
    assert found["median"] == 50
    assert (found["low"], found["high"]) == (39, 61)  # ranks 39 and 61 of 99 (49.5 -+ 9.75, outward)
    assert (found["q1"], found["q3"]) == (25, 75)
    assert found["rounds"] == 99
    assert found["first"] == 49000 and found["second"] == 49000 + second[49] - first[49]
