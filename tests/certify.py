"""What the per-task certificate tests share: a reference checked against its certificate, and
any JSON value (for hostile certificates)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

import npgym
from npgym import certificates

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=20,
)
"""Any JSON value, nested a little: what a hostile file may put where a number or list goes."""

TIERS_AND_DIFFICULTIES = [(tier, None) for tier in ("easy", "medium", "hard", "benchmark")] + [
    (None, difficulty) for difficulty in (0.0, 0.5, 1.0, 1.5, 2.0)
]
"""``(tier, difficulty)`` pairs a task's references are proven on: every tier, and the
difficulty knob from 0 to 2.0."""


def integral(value: object) -> Any:
    """An objective or bound, which must be an integer (or ``None``)."""
    assert value is None or type(value) is int, value
    return value


def check_reference(
    task_name: str, instance: Any, exact: bool = True, time_limit: float | None = None
) -> certificates.Checked:
    """The reference of ``instance`` (exact or not, within ``time_limit``: the default budget
    when ``None``), its claims checked against its certificate by
    :func:`npgym.certificates.check_claim`."""
    reference = npgym.get_task(task_name).reference(instance, exact=exact, time_limit=time_limit)
    assert reference.certificate is not None
    return certificates.check_claim(
        task_name,
        json.loads(instance.to_json()),
        objective=integral(reference.objective),
        solution=reference.solution,
        proven_optimal=reference.proven_optimal,
        bound=integral(reference.bound),
        certificate=reference.certificate,
    )
