"""The one-pass numba scanner behind :func:`npgym.answer.parse_value_fast`.

It reads the UTF-8 bytes of an answer and recognises the two shapes that carry almost every
answer, a list of integers and a list of such lists, converting the digits as it goes. Anything
else (a word, a bare integer, deeper nesting, a syntax error, an integer of more than
:data:`npgym.answer.MAX_DIGITS` digits) makes it give up, and the caller hands the text to the
reference tokenizer, which returns the value or the precise error. So the scanner never decides
a format failure itself: it only has to agree with the reference on what it accepts, which a
differential hypothesis test checks.

Public for the fused kernels of tasks (npgym's and plug-ins'): :func:`scan_flat` and
:func:`scan_rows` start a task's ``check_answer`` kernel, which returns
:data:`npgym.results.NOT_SCANNED` first when they do not read the answer (docs/adding-a-task.md).

Whitespace is the parser's one set (:data:`npgym.answer.WHITESPACE`), recognised in its UTF-8
form. This module imports numba, so :mod:`npgym.answer` loads it on the first parse, not at
``import npgym``.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit

GAVE_UP, FLAT, NESTED = 0, 1, 2
"""Scanner outcomes: not a shape it reads (ask the reference), a list of ints, a list of lists."""

MAX_DIGITS = 18  # npgym.answer.MAX_DIGITS; repeated here so this module imports no npgym code


@njit
def _whitespace_length(data: bytes, position: int) -> int:
    """Length in bytes of the whitespace character at ``position`` (0 when it is not one)."""
    byte = data[position]
    if byte == 32 or 9 <= byte <= 13 or 28 <= byte <= 31:
        return 1
    size = len(data)
    if byte == 0xC2 and position + 1 < size:  # U+0085, U+00A0
        second = data[position + 1]
        return 2 if second == 0x85 or second == 0xA0 else 0
    if position + 2 >= size:
        return 0
    second, third = data[position + 1], data[position + 2]
    if byte == 0xE1:  # U+1680
        return 3 if second == 0x9A and third == 0x80 else 0
    if byte == 0xE2:
        if second == 0x80:  # U+2000..U+200A, U+2028, U+2029, U+202F
            if 0x80 <= third <= 0x8A or third == 0xA8 or third == 0xA9 or third == 0xAF:
                return 3
            return 0
        return 3 if second == 0x81 and third == 0x9F else 0  # U+205F
    if byte == 0xE3:  # U+3000
        return 3 if second == 0x80 and third == 0x80 else 0
    return 0


@njit
def _skip_whitespace(data: bytes, position: int) -> int:
    """The first position at or after ``position`` that is not whitespace."""
    size = len(data)
    while position < size:
        byte = data[position]
        if byte == 32 or 9 <= byte <= 13 or 28 <= byte <= 31:  # ASCII: no call
            position += 1
            continue
        if byte < 0x80:
            return position
        step = _whitespace_length(data, position)
        if step == 0:
            return position
        position += step
    return position


@njit
def _closer(byte: int) -> int:
    """The closing bracket of an opening one, or -1."""
    if byte == 91:  # [
        return 93
    if byte == 40:  # (
        return 41
    return -1


@njit
def scan(data: bytes) -> tuple[int, np.ndarray, np.ndarray]:
    """Read the first value of ``data`` (UTF-8 bytes, or a uint8 array):
    ``(outcome, values, row_offsets)``.

    ``FLAT``: ``values`` are the list's integers. ``NESTED``: row ``r`` of the list of lists is
    ``values[row_offsets[r]:row_offsets[r + 1]]``. ``GAVE_UP``: the caller must use the reference
    tokenizer. A trailing comma is accepted in every list, as the reference does; whatever follows
    the value's closing bracket is ignored.
    """
    size = len(data)
    values = np.empty(size // 2 + 1, np.int64)
    empty = values[:0]
    offsets = empty  # allocated at the first inner list: a flat list needs none
    position = _skip_whitespace(data, 0)
    if position >= size:
        return GAVE_UP, empty, empty
    outer = _closer(data[position])
    if outer < 0:
        return GAVE_UP, empty, empty
    count = 0
    rows = 0
    shape = 0  # 0 unknown (no item yet), FLAT or NESTED
    depth = 1
    inner = -1
    position += 1
    expect_item = True  # after an opener or a comma: an item or (a trailing comma allowed) a closer
    while True:
        # Skip whitespace inline (a call per separator costs more than the rest of the loop);
        # only a non-ASCII byte goes to the helper, which knows the multi-byte separators.
        while position < size:
            byte = data[position]
            if byte == 32 or 9 <= byte <= 13 or 28 <= byte <= 31:
                position += 1
            elif byte >= 0x80:
                step = _whitespace_length(data, position)
                if step == 0:
                    break
                position += step
            else:
                break
        if position >= size:
            return GAVE_UP, empty, empty
        byte = data[position]
        closer = outer if depth == 1 else inner
        if byte == closer:
            position += 1
            if depth == 1:
                return (shape if shape else FLAT), values[:count], offsets[: rows + 1]
            depth = 1
            rows += 1
            offsets[rows] = count
            expect_item = False
            continue
        if not expect_item:
            if byte != 44:  # ,
                return GAVE_UP, empty, empty
            position += 1
            expect_item = True
            continue
        if depth == 1 and (byte == 91 or byte == 40):  # [ or (
            if shape == FLAT:
                return GAVE_UP, empty, empty
            if shape == 0:
                offsets = np.empty(size // 2 + 2, np.int64)
                offsets[0] = 0
            shape = NESTED
            inner = 93 if byte == 91 else 41
            depth = 2
            position += 1
            continue
        negative = byte == 45  # -
        if negative:
            position += 1
        start = position
        number = 0
        while position < size and 48 <= data[position] <= 57:
            number = number * 10 + (data[position] - 48)
            position += 1
            if position - start > MAX_DIGITS:
                return GAVE_UP, empty, empty
        if position == start:
            return GAVE_UP, empty, empty
        if depth == 1:
            if shape == NESTED:
                return GAVE_UP, empty, empty
            shape = FLAT
        values[count] = -number if negative else number
        count += 1
        expect_item = False


@njit
def first_row_not_of_length(offsets: np.ndarray, length: int) -> int:
    """Index of the first row whose length (``offsets[r + 1] - offsets[r]``) is not ``length``,
    or -1."""
    for row in range(offsets.shape[0] - 1):
        if offsets[row + 1] - offsets[row] != length:
            return row
    return -1


@njit
def within(values: np.ndarray, limit: int) -> bool:
    """Whether every value lies strictly between ``-limit`` and ``limit``."""
    for value in values:  # noqa: SIM110 (a loop is what numba compiles)
        if value >= limit or value <= -limit:
            return False
    return True


@njit
def scan_flat(data: bytes) -> tuple[bool, np.ndarray]:
    """``(True, values)`` when ``data`` holds a list of integers, else ``(False, empty)``.

    The start of every fused kernel of a task whose answer is one list: the values are exactly
    the array that ``as_int_array`` would return for the parsed answer (the scanner reads at most
    :data:`MAX_DIGITS` digits, so every value is within ``INT_LIMIT``).
    """
    outcome, values, _ = scan(data)
    return outcome == FLAT, values


@njit
def scan_rows(data: bytes) -> tuple[bool, np.ndarray, np.ndarray]:
    """``(True, values, row_offsets)`` when ``data`` holds a non-empty list of integer lists."""
    outcome, values, offsets = scan(data)
    return outcome == NESTED, values, offsets
