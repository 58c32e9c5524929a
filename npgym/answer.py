"""Answer extraction: find the model's final answer in hostile text and tokenise it safely.

The rules (docs/contract.md, "Answers"): take the text after the *last* ``Answer:`` marker, or
the content of a final ``\\boxed{...}`` when that comes later; ignore surrounding whitespace,
markdown emphasis and code fences; parse the first value there with a small tokenizer (no
``eval``, no ``json``/``ast``, no regex that can backtrack catastrophically) and a hard cap on the
answer's length. Anything else is a format failure, raised as :class:`AnswerFormatError`, never
another exception.

Only the last :data:`MAX_SCAN_CHARS` characters (1 MiB) of a completion are searched for the
marker: scoring time is bounded by that window, not by the length of the completion, so a 10 MB
completion costs no more than a 1 MB one. A marker further back than that is not seen (the
completion is a format failure unless a later marker exists).

Two parsers read the value after the marker and give the same verdict on every input. The fast
one (:func:`parse_value_fast`, used by ``Task.score``) scans the UTF-8 bytes once in a numba
kernel and returns lists of integers as int64 arrays; whenever the text is not a list of integers
or a list of such lists, or is malformed, it hands the text to the reference tokenizer
(:func:`parse_value_reference`), which returns the value or the precise error. A differential
test holds the two to the same verdict.

Whitespace has one meaning in every step: the characters that Python's ``\\s`` and
``str.isspace()`` accept (ASCII blanks, the separators of categories Zs, Zl and Zp, and the control
characters ``\\x1c``-``\\x1f`` and ``\\x85``). Integers are converted from runs of ASCII digits
alone, never from text that still holds a separator, because ``int()`` strips a different set of
characters than ``\\s`` matches; any other character (a Unicode digit, say) is a format failure.

A parsed value is an ``int``, a word (``str``, e.g. ``Impossible``) or a list of values. The
helpers at the end turn values (or solutions a user passes in) into the numpy arrays the
verifiers take.
"""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from itertools import pairwise
from types import ModuleType
from typing import Any, TypeAlias, cast

import numpy as np

MAX_ANSWER_CHARS = 64 * 1024
"""Default cap on the answer text after the marker; a longer value is a format failure."""
MAX_SCAN_CHARS = 1024 * 1024
"""Only this many characters at the end of a completion are searched for the answer marker."""
MAX_DEPTH = 6
"""Deepest list nesting accepted in an answer."""
MAX_DIGITS = 18
"""Longest integer literal accepted: anything longer cannot be a valid index or value."""
INT_LIMIT = 10**MAX_DIGITS
"""Exclusive bound on the magnitude of integers in solutions (fits int64 with room to add)."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of JSON arrays and objects npgym decodes from text it does not trust: an
answer (an Invert instance), a row of a file, an endpoint's reply. Legitimate ones nest at most
6 deep. Checked by a scan of the brackets before decoding (:func:`check_json_depth`), so a
verdict never depends on how deep in the stack the decoder runs (``sys.getrecursionlimit()``),
and no decoder recurses deeper than this."""

Value: TypeAlias = int | str | list["Value"]


class AnswerFormatError(ValueError):
    """The completion holds no answer of the expected shape (a format failure, not a crash)."""


WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Every character the parser treats as whitespace: exactly those ``\\s`` and ``isspace()`` match
(a test recomputes the set from the Unicode database)."""

_MARKER_GAP = f"[*_{re.escape(WHITESPACE)}]{{0,4}}:"
_MARKER = re.compile(f"answer{_MARKER_GAP}", re.IGNORECASE | re.ASCII)
_MARKER_TAIL = re.compile(_MARKER_GAP)
_MARKER_SPAN = len("answer") + 4 + 1
"""Longest marker: the word, four characters of emphasis or whitespace, the colon."""
_BEFORE_COLON = frozenset("rR*_" + WHITESPACE)
"""The characters that can precede a marker's colon: the last letter of "answer" or a gap's."""
_FIRST_CHUNK = 512
_COLON_PROBES = 16
"""How many colons, from the end, :func:`answer_key` examines one by one."""
_PLAIN_MARKER = "Answer:"
_PLAIN_WORD_TEXT = _PLAIN_MARKER[:-1]
_PLAIN_WORD = len(_PLAIN_WORD_TEXT)
_BOXED = "\\boxed{"
_USUAL_START = (" [", " (")
_LEADING_NOISE = WHITESPACE + "*_`$>#"
_FENCE_TAG = re.compile(r"[A-Za-z0-9_+-]{0,20}[^\S\n]*\n")
_TOKEN = re.compile(r"\s*(?:(-?[0-9]+)|([A-Za-z]+)|(\S))")
_OPENERS = ("[", "(")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WORD = re.compile(r"[A-Za-z]+")
_CLOSER = {"[": "]", "(": ")"}


def extract_answer(text: str, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """Return the answer text: after the last ``Answer:`` marker or inside a later ``\\boxed{}``.

    The result is at most ``max_chars`` characters long (text beyond that cannot belong to a
    valid answer) and starts at the answer itself, past markdown emphasis and code fences.
    Only the last :data:`MAX_SCAN_CHARS` characters are searched. The usual cases (a plain
    ``Answer:`` at the last colon, no marker at all) cost a few one-character searches, never
    a lower-cased pass over the reasoning.
    """
    if not isinstance(text, str):
        raise AnswerFormatError("completion is not text")
    if len(text) > MAX_SCAN_CHARS:
        text = text[-MAX_SCAN_CHARS:]
    plain = text.rfind(_PLAIN_MARKER)
    if plain >= 0:
        # The usual case: "Answer:" with nothing after it that could end a later marker or
        # start a \boxed{}. Only "n" and "N" lower-case to "n" (no other character of Unicode
        # does), and a \boxed{} needs a backslash: one-character searches settle the usual tail.
        tail = text[plain + len(_PLAIN_MARKER) :]
        no_word = ("n" not in tail and "N" not in tail) or "answer" not in tail.lower()
        if no_word and "\\" not in tail:
            if tail.startswith(_USUAL_START):  # "Answer: [...": _skip_noise's result, unsliced
                return tail[1 : max_chars + 64]
            return _skip_noise(tail[: max_chars + 64])
    key = answer_key(text)  # the general case: the end that decides the answer
    if key is None:
        raise AnswerFormatError("no 'Answer:' marker found")
    if key[0] == "{":  # no marker, a box
        return _boxed_content(key, 1, max_chars)
    if "\\" in key:  # a marker: a \boxed{ after it is the answer
        boxed = key.rfind(_BOXED)
        if boxed >= 0:
            return _boxed_content(key, boxed + len(_BOXED), max_chars)
    return _skip_noise(key[1 : max_chars + 65])


def answer_key(text: str) -> str | None:
    """The end of ``text`` (bounded: at most :data:`MAX_SCAN_CHARS` characters long) that alone
    decides :func:`extract_answer`'s result: from the last marker's colon, or else from the
    last ``\\boxed{``'s brace, to the end (so a marker's key never equals a box's). None when
    ``text`` has neither (extraction then fails alike for every such text). A cheap key for a
    group whose completions share answers, and where extraction starts.

    Every marker ends in a colon, so the last colons are visited from the end; one whose
    previous character cannot end a marker (an "r" or a gap character) is passed over at once,
    and only the :data:`_MARKER_SPAN` characters that end at the others are read. The usual
    cases (a plain ``Answer:`` at the last colon, no marker) cost a few one-character
    searches, never a lower-cased pass over the reasoning. Past :data:`_COLON_PROBES` colons,
    the text before the last one visited is searched by :func:`_last_marker_before`.
    """
    colon = text.rfind(":")
    probes = _COLON_PROBES
    while colon > 0:  # a colon at 0 ends no marker
        if text[colon - 1] in _BEFORE_COLON:
            if text[colon - _PLAIN_WORD : colon] == _PLAIN_WORD_TEXT:
                return text[colon:]  # a plain "Answer:", the usual last marker
            start = max(0, colon + 1 - _MARKER_SPAN)
            found = _last_marker_in(text[start : colon + 1])
            if found >= 0:
                return text[start + found - 1 :]
        probes -= 1
        if not probes:
            found = _last_marker_before(text, colon)
            if found >= 0:
                return text[found - 1 :]
            break
        colon = text.rfind(":", 0, colon)
    if "\\" in text:  # a \boxed{ needs a backslash: one memchr settles most texts
        boxed = text.rfind(_BOXED)
        if boxed >= 0:
            return text[boxed + len(_BOXED) - 1 :]
    return None


MAX_SCAN_BYTES = 4 * MAX_SCAN_CHARS + 16
"""Most bytes of a ``bytes`` completion that are decoded: its end, enough for the last
:data:`MAX_SCAN_CHARS` characters (a UTF-8 character takes at most 4 bytes), plus room for the
few characters that the cut may garble."""
_CUT_CHARS = 3
"""Characters dropped from the start of a cut decoding: a cut inside a multi-byte sequence turns
at most its 3 continuation bytes into replacement characters, and UTF-8 resynchronises after."""


def decode_completion(data: bytes) -> str:
    """UTF-8 text of a ``bytes`` completion (invalid bytes become U+FFFD), in bounded time.

    Only the last :data:`MAX_SCAN_BYTES` bytes are decoded. Their decoding differs from the
    whole text's in at most its first :data:`_CUT_CHARS` characters, which are dropped, so the
    last :data:`MAX_SCAN_CHARS` characters, all that :func:`extract_answer` reads, are those of
    ``data.decode("utf-8", errors="replace")``.
    """
    if len(data) <= MAX_SCAN_BYTES:
        return data.decode("utf-8", errors="replace")
    return data[-MAX_SCAN_BYTES:].decode("utf-8", errors="replace")[_CUT_CHARS:]


def _last_marker_before(text: str, end: int) -> int:
    """Index just past the last marker that ends by ``end``, or -1.

    ``text[:end]`` is searched from the end in growing chunks, so a marker near ``end`` costs a
    few hundred lower-cased characters instead of all of them. Each chunk reaches
    :data:`_MARKER_SPAN` characters into the next one, so a marker across the seam is seen whole
    (past ``end`` there is no marker to see: the caller looked there).
    """
    size = _FIRST_CHUNK
    while end > 0:
        start = max(0, end - size)
        found = _last_marker_in(text[start : end + _MARKER_SPAN])
        if found >= 0:
            return start + found
        end = start
        size *= 4
    return -1


def _last_marker_in(chunk: str) -> int:
    """Index just past the last marker in ``chunk``, or -1."""
    lowered = chunk.lower()
    if len(lowered) != len(chunk):
        # A few characters lower-case to two; positions would shift, so take the slow path.
        marker_end = -1
        for match in _MARKER.finditer(chunk):
            marker_end = match.end()
        return marker_end
    position = len(lowered)
    while True:
        position = lowered.rfind("answer", 0, position)
        if position < 0:
            return -1
        tail = _MARKER_TAIL.match(lowered, position + len("answer"))
        if tail is not None:
            return tail.end()


def _boxed_content(text: str, start: int, max_chars: int) -> str:
    """Return the text inside the braces opened just before ``start``."""
    depth = 1
    stop = min(len(text), start + max_chars)
    for position in range(start, stop):
        char = text[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return _skip_noise(text[start:position])
    raise AnswerFormatError(f"\\boxed{{}} is unterminated or longer than {max_chars} characters")


def _skip_noise(segment: str) -> str:
    """Drop leading whitespace, emphasis, quote marks, math delimiters and code-fence tags."""
    while True:
        stripped = segment.lstrip(_LEADING_NOISE)
        skipped = len(segment) - len(stripped)
        if skipped >= 3 and segment[skipped - 3 : skipped] == "```":
            tag = _FENCE_TAG.match(stripped)  # it ends in a newline, so it always moves on
            if tag is not None:
                segment = stripped[tag.end() :]
                continue
        return stripped


def parse_value(segment: str, max_chars: int = MAX_ANSWER_CHARS) -> Value:
    """Parse the first value in ``segment``: a bracketed list, an integer or a word.

    Lists use ``[]`` or ``()`` with comma separators (a trailing comma is fine) and nest at most
    :data:`MAX_DEPTH` deep. Whatever follows the value (a period, prose, a closing fence) is
    ignored. A value that does not close within ``max_chars`` characters is rejected.
    """
    return to_python(parse_value_fast(segment, max_chars))


def parse_value_fast(
    segment: str, max_chars: int = MAX_ANSWER_CHARS
) -> Value | np.ndarray | IntRows:
    """:func:`parse_value`, but a list of integers comes back as an int64 array and a list of such
    lists as :class:`IntRows`, as the numba scanner made them (no Python ints on the way).

    Values of any other shape, and every malformed answer, go to :func:`parse_value_reference`,
    so the verdict and the error message are the reference's.
    """
    window = segment[:max_chars]
    first = window[:1]
    if first in _LETTERS:  # a word (the reference's first token): "Impossible", or prose
        return _WORD.match(window).group()  # type: ignore[union-attr]
    if first in _OPENERS or (first and first in WHITESPACE):
        scanner = _scan()
        outcome, values, offsets = scanner.scan(window.encode("utf-8", "surrogatepass"))
        if outcome == scanner.FLAT:
            return values
        if outcome == scanner.NESTED:
            return IntRows(values, offsets)
    return parse_value_reference(window, max_chars)


def parse_value_reference(segment: str, max_chars: int = MAX_ANSWER_CHARS) -> Value:
    """The reference parser: a small recursive-descent tokenizer over the text, one token at a
    time. Slower than the scanner, it defines the verdict and the error message of every input."""
    tokens = _Tokens(segment[:max_chars])
    return _parse(tokens, 0, max_chars)


class IntRows:
    """A list of integer lists as one flat int64 array: row ``r`` is
    ``values[offsets[r]:offsets[r + 1]]``. What :func:`parse_value_fast` returns for ``[[..], ..]``.
    """

    __slots__ = ("offsets", "values")

    def __init__(self, values: np.ndarray, offsets: np.ndarray) -> None:
        self.values = values
        self.offsets = offsets

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def first_row_not_of_length(self, length: int) -> int:
        """Index of the first row that does not hold exactly ``length`` integers, or -1."""
        return _scan().first_row_not_of_length(self.offsets, length)

    def row_length(self, index: int) -> int:
        """How many integers row ``index`` holds."""
        return int(self.offsets[index + 1] - self.offsets[index])

    def row(self, index: int) -> np.ndarray:
        """Row ``index`` as an int64 array (a view)."""
        return self.values[self.offsets[index] : self.offsets[index + 1]]

    def tolist(self) -> list[list[int]]:
        """The rows as Python lists of ints, as :func:`parse_value` returns them."""
        flat = self.values.tolist()
        bounds = self.offsets.tolist()
        return [flat[start:stop] for start, stop in pairwise(bounds)]


def to_python(value: Value | np.ndarray | IntRows) -> Value:
    """A value from :func:`parse_value_fast` in :func:`parse_value`'s plain Python form."""
    if isinstance(value, (np.ndarray, IntRows)):
        return cast(Value, value.tolist())
    return value


@cache
def _scan() -> ModuleType:
    """The numba scanner module, imported on first use so that ``import npgym`` stays light."""
    return importlib.import_module("npgym.scan")


def parse_answer(text: str, max_chars: int = MAX_ANSWER_CHARS) -> Value:
    """Extract the final answer from a completion and parse it into a value."""
    return parse_value(extract_answer(text, max_chars), max_chars)


class _Tokens:
    """A lazy token stream with one token of lookahead; the end of input is ``None``.

    Each token is matched at the current position only (``re.match``, never a search), so the
    scan is linear even for long runs of whitespace.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._peeked: re.Match[str] | None = None
        self._has_peeked = False

    def next(self) -> re.Match[str] | None:
        if self._has_peeked:
            self._has_peeked = False
            return self._peeked
        token = _TOKEN.match(self._text, self._position)
        if token is not None:
            self._position = token.end()
        return token

    def peek(self) -> re.Match[str] | None:
        if not self._has_peeked:
            self._peeked = self.next()
            self._has_peeked = True
        return self._peeked


def _describe(token: re.Match[str] | None) -> str:
    """Name a token for an error message without echoing arbitrary text."""
    if token is None:
        return "end of answer"
    text = token.group(token.lastindex or 0)
    return ascii(text[:12]) if len(text) <= 12 else ascii(text[:12] + "...")


def _parse(tokens: _Tokens, depth: int, max_chars: int) -> Value:
    token = tokens.next()
    if token is None:
        raise AnswerFormatError(f"answer is empty, unterminated or longer than {max_chars} chars")
    number, word, symbol = token.groups()
    if number is not None:
        return _to_int(number)
    if word is not None:
        return word
    if symbol in ('"', "'"):
        inner, closing = tokens.next(), tokens.next()
        if inner is None or inner.group(2) is None or closing is None or closing[3] != symbol:
            raise AnswerFormatError("expected a single word inside quotes")
        return inner.group(2)
    if symbol in _CLOSER:
        if depth >= MAX_DEPTH:
            raise AnswerFormatError(f"lists nested more than {MAX_DEPTH} deep")
        return _parse_list(tokens, _CLOSER[symbol], depth + 1, max_chars)
    raise AnswerFormatError(f"unexpected {_describe(token)} where a value should start")


def _parse_list(tokens: _Tokens, closer: str, depth: int, max_chars: int) -> list[Value]:
    items: list[Value] = []
    ahead = tokens.peek()
    if ahead is not None and ahead.group(3) == closer:
        tokens.next()
        return items
    while True:
        items.append(_parse(tokens, depth, max_chars))
        token = tokens.next()
        symbol = token.group(3) if token is not None else None
        if symbol == closer:
            return items
        if symbol != ",":
            raise AnswerFormatError(f"expected ',' or '{closer}' but found {_describe(token)}")
        ahead = tokens.peek()
        if ahead is not None and ahead.group(3) == closer:
            tokens.next()
            return items


def _to_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise AnswerFormatError(f"integer with more than {MAX_DIGITS} digits")
    return int(digits)


# --- JSON nesting ------------------------------------------------------------------------------


class JSONDepthError(ValueError):
    """JSON text nested deeper than the bound (:data:`MAX_JSON_DEPTH`); never decoded."""


_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("["), ord("{")]] = 1
_BRACKET_STEP[[ord("]"), ord("}")]] = -1
_QUOTE = ord('"')
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))
_DEPTH_CHUNK = 1 << 20
"""Bytes of text :func:`check_json_depth` scans per vectorised step (bounds its memory)."""
_SMALL_SCAN = 512
"""Up to this many quotes and brackets, :func:`check_json_depth` walks them in Python (numpy's
overhead would dominate: an Invert answer holds a few dozen)."""


def check_json_depth(
    text: str, max_depth: int = MAX_JSON_DEPTH, *, first_value: bool = False
) -> None:
    """Raise :class:`JSONDepthError` unless the brackets of ``text`` outside its strings nest at
    most ``max_depth`` deep; text with at most ``max_depth`` brackets is not scanned.

    Linear in the text and independent of the stack: escaped backslashes and then escaped
    quotes are deleted, then every byte but quotes and brackets (``bytes.translate``, at C
    speed), so that the parity of the quotes before a bracket says whether a string holds it;
    numpy sums the depth over the brackets outside strings, :data:`_DEPTH_CHUNK` bytes at a
    time. Exact for valid JSON; in invalid JSON, brackets after the first error may count (a
    refusal either way). With ``first_value`` (``text`` starts with its opening bracket), only
    the first value counts, up to the bracket that closes it: what ``JSONDecoder.raw_decode``
    reads.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    data = data.translate(None, _NOT_STRUCTURE)  # C-speed: only quotes and brackets are left
    if len(data) <= _SMALL_SCAN:
        if _too_deep(data, max_depth, first_value):
            raise JSONDepthError(f"JSON nested more than {max_depth} deep")
        return
    quotes, depth = 0, 0
    for start in range(0, len(data), _DEPTH_CHUNK):
        codes = np.frombuffer(data, np.uint8, min(_DEPTH_CHUNK, len(data) - start), start)
        quoted = np.flatnonzero(codes == _QUOTE)
        steps = _BRACKET_STEP[codes]
        at = np.flatnonzero(steps)  # brackets; after an odd number of quotes, in a string
        outside = at[(np.searchsorted(quoted, at) + quotes) % 2 == 0]
        depths = np.cumsum(steps[outside], dtype=np.int64) + depth
        closed = np.flatnonzero(depths <= 0) if first_value else outside[:0]
        if closed.size:
            depths = depths[: closed[0]]
        if depths.size and int(depths.max()) > max_depth:
            raise JSONDepthError(f"JSON nested more than {max_depth} deep")
        if closed.size:
            return
        quotes += quoted.size
        depth = int(depths[-1]) if depths.size else depth


def _too_deep(structure: bytes, max_depth: int, first_value: bool) -> bool:
    """:func:`check_json_depth`'s verdict on its quotes and brackets, one at a time."""
    depth, quoted = 0, False
    for byte in structure:
        if byte == _QUOTE:
            quoted = not quoted
        elif quoted:
            continue
        elif byte in b"[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
            if first_value and depth <= 0:
                return False
    return False


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
"""An escape of a UTF-16 surrogate: only a pair of them (high, then low) is a character."""


def loads_json(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` of untrusted text, refused (:class:`JSONDepthError`) when it nests deeper
    than ``max_depth``; ``bytes`` must be UTF-8 (a leading byte-order mark is skipped).

    A string that decodes to a lone surrogate (``"\\ud800"``) is refused too: it is no Unicode
    text, and could not be written back as UTF-8. Every failure is a ``ValueError``: bad JSON,
    bad UTF-8, a lone surrogate, an integer of more digits than Python converts (4300).
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8-sig")
    check_json_depth(text, max_depth)
    value = json.loads(text)
    if _SURROGATE_ESCAPE.search(text) is not None:  # rare: then check the decoded strings
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                "a string holds a lone surrogate (an escape in \\ud800-\\udfff)"
            ) from None
    return value


# --- solution shapes -------------------------------------------------------------------------


def as_list(value: Any, what: str) -> list[Any]:
    """Return ``value`` as a list, or raise a format error naming ``what`` was expected."""
    if isinstance(value, (np.ndarray, IntRows)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    raise AnswerFormatError(f"expected a list for the {what}, got {_kind(value)}")


def as_int_array(value: Any, what: str) -> np.ndarray:
    """Return ``value`` as a 1-D int64 array of integers, or raise a format error.

    Accepts a list or tuple of ints (numpy integers too) or an integer numpy array; rejects bools,
    floats, strings, nested lists and integers of :data:`INT_LIMIT` or more in magnitude.
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        if value.dtype == np.int64:  # what the parser makes: one pass, no temporaries
            if not _scan().within(value, INT_LIMIT):
                raise AnswerFormatError(f"integer out of range in the {what}")
            return value
        if value.dtype.kind in "iu":
            if value.size and int(np.abs(value).max()) >= INT_LIMIT:
                raise AnswerFormatError(f"integer out of range in the {what}")
            return value.astype(np.int64)
    items = as_list(value, what)
    if not all(type(item) is int for item in items):  # parsed answers hold plain ints
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
                raise AnswerFormatError(f"expected integers in the {what}, got {_kind(item)}")
    try:
        array = np.array(items, dtype=np.int64)
    except OverflowError as error:
        raise AnswerFormatError(f"integer out of range in the {what}") from error
    if array.size and (array.max() >= INT_LIMIT or array.min() <= -INT_LIMIT):
        raise AnswerFormatError(f"integer out of range in the {what}")
    return array


def _kind(value: Any) -> str:
    """A short, safe description of a value's type for error messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a word"
    if isinstance(value, (list, tuple, np.ndarray, IntRows)):
        return "a list"
    if isinstance(value, (int, np.integer)):
        return "an integer"
    if isinstance(value, (float, np.floating)):
        return "a number with a fraction"
    if value is None:
        return "nothing"
    return "a " + type(value).__name__


def render_value(value: Any) -> str:
    """Write a solution back as answer text that :func:`parse_value` reads (lists, ints, words)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_value(item) for item in value) + "]"
    if isinstance(value, (bool, float)) or not isinstance(value, (int, str, np.integer)):
        raise TypeError(f"cannot render {type(value).__name__} as an answer")
    return str(int(value)) if not isinstance(value, str) else value
