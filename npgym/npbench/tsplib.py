"""Read TSPLIB ``.tsp`` files (and their ``.opt.tour``) as npgym TSP instances.

The distances are TSPLIB's own (G. Reinelt, *TSPLIB 95*, section 2), computed exactly as its
C code does, in IEEE doubles, so the published optima hold:

- ``EUC_2D``: ``nint(sqrt(xd*xd + yd*yd))`` with ``nint(x) = (int)(x + 0.5)``;
- ``CEIL_2D``: ``ceil(sqrt(xd*xd + yd*yd))``;
- ``ATT`` (pseudo-Euclidean): ``r = sqrt((xd*xd + yd*yd) / 10.0)``, ``t = nint(r)``, then
  ``t + 1`` when ``t < r``, else ``t``;
- ``GEO``: each coordinate is ``DDD.MM`` (degrees and minutes), converted with
  ``deg = (int) x`` (truncation, as the TSPLIB FAQ corrects the ``nint`` of the 1995 text; the
  published optima use it), ``min = x - deg``, ``rad = PI * (deg + 5.0 * min / 3.0) / 180.0``
  with ``PI = 3.141592``; then ``(int)(RRR * acos(0.5*((1+q1)*q2 - (1-q1)*q3)) + 1.0)`` with
  ``RRR = 6378.388``, ``q1 = cos(long_i - long_j)``, ``q2 = cos(lat_i - lat_j)``,
  ``q3 = cos(lat_i + lat_j)`` (the acos argument is clamped to [-1, 1]: two equal points
  would otherwise round past 1);
- ``EXPLICIT`` in every ``EDGE_WEIGHT_FORMAT`` of the specification: ``FULL_MATRIX``,
  ``UPPER_ROW``, ``LOWER_ROW``, ``UPPER_DIAG_ROW``, ``LOWER_DIAG_ROW``, ``UPPER_COL``,
  ``LOWER_COL``, ``UPPER_DIAG_COL``, ``LOWER_DIAG_COL`` (integers; the diagonal, which a tour
  never uses, is read and ignored; a ``FULL_MATRIX`` must be symmetric).

Node ``i`` of the file is city ``i - 1``. ``DIMENSION`` is checked against the TSP task's caps
(3 to :data:`~npgym.tasks.tsp.instance.MAX_CITIES` cities) on its own line, before anything
is allocated for it; a section is read into arrays of exactly the size the header declares.
Only ``TYPE: TSP`` is read (npgym's TSP is symmetric: no ATSP, HCP, CVRP or fixed edges).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from npgym.npbench.instance_files import (
    ImportedInstance,
    InstanceFileError,
    check_row_size,
    parse_integer,
    parse_real,
    read_text_lines,
    write_imported,
)
from npgym.results import Reference
from npgym.tasks.tsp.instance import MAX_CITIES, MAX_DISTANCE, TSPInstance

PI = 3.141592
"""TSPLIB's value of pi for GEO (not ``math.pi``: the published optima use this one)."""
RRR = 6378.388
"""TSPLIB's earth radius in km for GEO."""

COORDINATE_TYPES = ("EUC_2D", "CEIL_2D", "GEO", "ATT")
"""EDGE_WEIGHT_TYPEs computed from NODE_COORD_SECTION."""
MATRIX_FORMATS = (
    "FULL_MATRIX",
    "UPPER_ROW",
    "LOWER_ROW",
    "UPPER_DIAG_ROW",
    "LOWER_DIAG_ROW",
    "UPPER_COL",
    "LOWER_COL",
    "UPPER_DIAG_COL",
    "LOWER_DIAG_COL",
)
"""EDGE_WEIGHT_FORMATs of an EXPLICIT instance."""

_KEYWORDS = (
    "NAME",
    "TYPE",
    "COMMENT",
    "DIMENSION",
    "EDGE_WEIGHT_TYPE",
    "EDGE_WEIGHT_FORMAT",
    "NODE_COORD_TYPE",
    "DISPLAY_DATA_TYPE",
)
_LINE = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*(?::(.*))?$")


class _Lines:
    """The lines of a file, read forward, with ``FILE:LINE`` for errors."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.lines = read_text_lines(path)
        self.position = 0
        self.number = 0

    def next(self) -> str | None:
        """The next line's text (its number in :attr:`number`), None at the end of the file."""
        if self.position >= len(self.lines):
            return None
        self.number, text = self.lines[self.position]
        self.position += 1
        return text

    def where(self, number: int | None = None) -> str:
        """``FILE:LINE`` of line ``number`` (default: the line last read)."""
        return f"{self.path}:{self.number if number is None else number}"


def _section_numbers(
    lines: _Lines,
    section: str,
    count: int,
    parse: Callable[[str, str, str], float],
    dtype: type,
    first: str = "",
) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``count`` numbers of ``section`` (spread over lines in any way) and the line of
    each; ``first`` is what followed the section's keyword on its own line."""
    values: np.ndarray = np.empty(count, dtype)
    numbers = np.empty(count, np.int64)
    filled = 0
    text: str | None = first
    number = lines.number
    while True:
        assert text is not None
        for token in text.split():
            if filled == count:
                raise InstanceFileError(
                    f"{lines.where(number)}: {section} holds more than the {count:,} numbers "
                    f"that DIMENSION and the format give it ({token[:40]!r})"
                )
            if token[0].isalpha() and token.isupper():  # the next keyword, or EOF
                raise InstanceFileError(
                    f"{lines.where(number)}: {section} ends after {filled:,} of its {count:,} "
                    "numbers"
                )
            values[filled] = parse(token, lines.where(number), f"an entry of {section}")
            numbers[filled] = number
            filled += 1
        if filled == count:
            return values, numbers
        text = lines.next()
        number = lines.number
        if text is None:
            raise InstanceFileError(
                f"{lines.where()}: the file ends inside {section}, after {filled:,} of its "
                f"{count:,} numbers"
            )


def _header_value(lines: _Lines, keyword: str, value: str | None) -> str:
    if value is None or not value.strip():
        raise InstanceFileError(f"{lines.where()}: {keyword} needs a value ('{keyword}: ...')")
    return value.strip()


def _dimension(lines: _Lines, value: str, limit: int) -> int:
    """DIMENSION, within 3..``limit``: checked before any array is made for it."""
    n = parse_integer(value, lines.where(), "DIMENSION")
    if not 3 <= n <= limit:
        raise InstanceFileError(
            f"{lines.where()}: DIMENSION {value[:40]} is outside what npgym's TSP holds "
            f"(3 to {limit:,} cities)"
        )
    return n


def _city_ids(lines: _Lines, ids: np.ndarray, numbers: np.ndarray, n: int) -> np.ndarray:
    """Cities (0-based) of the node ids of a section: each of 1..n exactly once."""
    seen = np.zeros(n + 1, np.bool_)
    for node, number in zip(ids.tolist(), numbers.tolist(), strict=True):
        if not 1 <= node <= n:
            raise InstanceFileError(f"{lines.where(number)}: node {node} is not in 1..{n}")
        if seen[node]:
            raise InstanceFileError(f"{lines.where(number)}: node {node} is listed twice")
        seen[node] = True
    return ids - 1


def _read_coordinates(lines: _Lines, n: int, first: str) -> tuple[np.ndarray, np.ndarray]:
    """NODE_COORD_SECTION: the (n, 2) points by city, and the line of each city."""
    values, numbers = _section_numbers(
        lines, "NODE_COORD_SECTION", 3 * n, parse_real, np.float64, first
    )
    triples = values.reshape(n, 3)
    lines_of = numbers.reshape(n, 3)[:, 0]
    ids = triples[:, 0]
    for node, number in zip(ids.tolist(), lines_of.tolist(), strict=True):
        if node != int(node):
            raise InstanceFileError(f"{lines.where(number)}: node id {node} is not an integer")
    cities = _city_ids(lines, ids.astype(np.int64), lines_of, n)
    points = np.empty((n, 2), np.float64)
    points[cities] = triples[:, 1:]
    line_of_city = np.empty(n, np.int64)
    line_of_city[cities] = lines_of
    return points, line_of_city


def nint(values: np.ndarray) -> np.ndarray:
    """TSPLIB's ``nint(x) = (int)(x + 0.5)`` of non-negative doubles (floor, as C truncates)."""
    return np.floor(values + 0.5)


def _planar_squares(points: np.ndarray) -> np.ndarray:
    """``xd*xd + yd*yd`` for every pair, in doubles as the C code computes it."""
    xd = points[:, 0, None] - points[None, :, 0]
    yd = points[:, 1, None] - points[None, :, 1]
    return xd * xd + yd * yd


def geo_radians(coordinate: float) -> float:
    """A GEO coordinate ``DDD.MM`` in radians, TSPLIB's way (``deg`` truncated, PI 3.141592)."""
    degrees = int(coordinate)  # C's (int): towards zero
    minutes = coordinate - degrees
    return PI * (degrees + 5.0 * minutes / 3.0) / 180.0


def geo_distances(points: np.ndarray) -> np.ndarray:
    """TSPLIB's GEO distances (km, rounded its way), one pair at a time with the C library's
    ``cos`` and ``acos`` (``math``), as vectorised versions may differ in the last bit."""
    n = len(points)
    latitude = [geo_radians(x) for x in points[:, 0].tolist()]
    longitude = [geo_radians(y) for y in points[:, 1].tolist()]
    matrix = np.zeros((n, n), np.float64)
    cos, acos = math.cos, math.acos
    for i in range(n):
        row = matrix[i]
        lat_i, long_i = latitude[i], longitude[i]
        for j in range(i + 1, n):
            q1 = cos(long_i - longitude[j])
            q2 = cos(lat_i - latitude[j])
            q3 = cos(lat_i + latitude[j])
            argument = min(1.0, max(-1.0, 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)))
            row[j] = math.floor(RRR * acos(argument) + 1.0)
    return matrix + matrix.T


def coordinate_distances(points: np.ndarray, edge_weight_type: str) -> np.ndarray:
    """The (n, n) float matrix of TSPLIB distances of ``points`` (whole numbers, or inf/nan
    where the coordinates overflow a double; the caller checks the range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if edge_weight_type == "GEO":
            return geo_distances(points)
        squares = _planar_squares(points)
        if edge_weight_type == "EUC_2D":
            distances = nint(np.sqrt(squares))
        elif edge_weight_type == "CEIL_2D":
            distances = np.ceil(np.sqrt(squares))
        elif edge_weight_type == "ATT":
            r = np.sqrt(squares / 10.0)
            t = nint(r)
            distances = np.where(t < r, t + 1.0, t)
        else:
            raise ValueError(f"not a coordinate EDGE_WEIGHT_TYPE: {edge_weight_type}")
    np.fill_diagonal(distances, 0.0)
    return distances


def _pair_positions(n: int, edge_weight_format: str) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of each entry of an EXPLICIT section, in the order the file lists them."""
    if edge_weight_format == "FULL_MATRIX":
        rows, columns = np.indices((n, n))
        return rows.ravel(), columns.ravel()
    diagonal = 0 if "DIAG" in edge_weight_format else 1
    if edge_weight_format.startswith("UPPER"):
        rows, columns = np.triu_indices(n, diagonal)
    else:
        rows, columns = np.tril_indices(n, -diagonal)
    if edge_weight_format.endswith("_COL"):
        # Column by column: the transpose's rows (a column-wise upper triangle lists the same
        # pairs as a row-wise lower one, in the same order, each as (row, column) swapped).
        if edge_weight_format.startswith("UPPER"):
            columns, rows = np.tril_indices(n, -diagonal)
        else:
            columns, rows = np.triu_indices(n, diagonal)
    return rows, columns


def _read_matrix(lines: _Lines, n: int, edge_weight_format: str, first: str) -> np.ndarray:
    """EDGE_WEIGHT_SECTION in ``edge_weight_format``: the symmetric int64 matrix."""
    rows, columns = _pair_positions(n, edge_weight_format)
    values, numbers = _section_numbers(
        lines, "EDGE_WEIGHT_SECTION", len(rows), parse_integer, np.int64, first
    )
    outside = np.flatnonzero((values < 0) | (values > MAX_DISTANCE))
    if len(outside):
        at = outside[0]
        raise InstanceFileError(
            f"{lines.where(int(numbers[at]))}: weight {values[at]} is outside npgym's TSP "
            f"distances (0..{MAX_DISTANCE:,})"
        )
    matrix = np.zeros((n, n), np.int64)
    matrix[rows, columns] = values
    if edge_weight_format == "FULL_MATRIX":
        lines_of = numbers.reshape(n, n)
        asymmetric = np.argwhere(np.triu(matrix != matrix.T, 1))
        if len(asymmetric):
            i, j = (int(k) for k in asymmetric[0])
            raise InstanceFileError(
                f"{lines.where(int(lines_of[j, i]))}: FULL_MATRIX is not symmetric: node "
                f"{i + 1} to {j + 1} is {matrix[i, j]}, node {j + 1} to {i + 1} is "
                f"{matrix[j, i]} (TYPE: TSP is symmetric; npgym reads no ATSP)"
            )
    else:
        matrix = matrix + matrix.T
    np.fill_diagonal(matrix, 0)
    return matrix


class TSPLIBFile:
    """A parsed ``.tsp`` file: its header, the distance matrix and (EUC_2D with integer
    coordinates) the points."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.header: dict[str, str] = {}
        self.matrix: np.ndarray | None = None
        self.points: np.ndarray | None = None
        self._read(_Lines(path))

    @property
    def name(self) -> str:
        """NAME, or the file's name up to its first dot."""
        name = self.header.get("NAME", "").split()
        return name[0].removesuffix(".tsp") if name else self.path.name.split(".")[0]

    def _keyword(self, lines: _Lines, keyword: str, value: str | None) -> None:
        if keyword not in _KEYWORDS:
            raise InstanceFileError(f"{lines.where()}: unknown keyword {keyword[:40]}")
        if keyword == "COMMENT":
            return
        if keyword in self.header:
            raise InstanceFileError(f"{lines.where()}: {keyword} is given twice")
        text = _header_value(lines, keyword, value)
        if keyword == "TYPE" and text != "TSP":
            raise InstanceFileError(
                f"{lines.where()}: TYPE {text[:40]} is not supported: npgym reads TYPE: TSP "
                "(symmetric) only"
            )
        if keyword == "DIMENSION":
            _dimension(lines, text, MAX_CITIES)
        if keyword == "EDGE_WEIGHT_TYPE" and text not in (*COORDINATE_TYPES, "EXPLICIT"):
            raise InstanceFileError(
                f"{lines.where()}: EDGE_WEIGHT_TYPE {text[:40]} is not supported (npgym reads "
                f"{', '.join(COORDINATE_TYPES)} and EXPLICIT)"
            )
        if keyword == "EDGE_WEIGHT_FORMAT" and text not in (*MATRIX_FORMATS, "FUNCTION"):
            raise InstanceFileError(
                f"{lines.where()}: EDGE_WEIGHT_FORMAT {text[:40]} is not one of "
                f"{', '.join(MATRIX_FORMATS)}"
            )
        if keyword == "NODE_COORD_TYPE" and text not in ("TWOD_COORDS", "NO_COORDS"):
            raise InstanceFileError(
                f"{lines.where()}: NODE_COORD_TYPE {text[:40]} is not supported (TWOD_COORDS)"
            )
        self.header[keyword] = text

    def _needs(self, lines: _Lines, section: str, *keywords: str) -> None:
        for keyword in keywords:
            if keyword not in self.header:
                raise InstanceFileError(
                    f"{lines.where()}: {section} comes before {keyword} (the header must say "
                    "it first)"
                )

    def _read(self, lines: _Lines) -> None:
        weights: np.ndarray | None = None
        for keyword, rest in _keyword_lines(lines):
            if keyword == "EOF":
                break
            if not keyword.endswith("_SECTION"):
                self._keyword(lines, keyword, rest)
                continue
            first = rest or ""
            self._needs(lines, keyword, "TYPE", "DIMENSION", "EDGE_WEIGHT_TYPE")
            n = int(self.header["DIMENSION"])
            kind = self.header["EDGE_WEIGHT_TYPE"]
            if keyword == "NODE_COORD_SECTION" and kind in COORDINATE_TYPES:
                if self.points is not None:
                    raise InstanceFileError(f"{lines.where()}: NODE_COORD_SECTION is given twice")
                points, line_of_city = _read_coordinates(lines, n, first)
                self.points = points
                self._line_of_city = line_of_city
            elif keyword == "EDGE_WEIGHT_SECTION" and kind == "EXPLICIT":
                self._needs(lines, keyword, "EDGE_WEIGHT_FORMAT")
                if self.header["EDGE_WEIGHT_FORMAT"] not in MATRIX_FORMATS:
                    raise InstanceFileError(
                        f"{lines.where()}: EXPLICIT weights need an EDGE_WEIGHT_FORMAT of "
                        f"{', '.join(MATRIX_FORMATS)}"
                    )
                if weights is not None:
                    raise InstanceFileError(f"{lines.where()}: EDGE_WEIGHT_SECTION is given twice")
                weights = _read_matrix(lines, n, self.header["EDGE_WEIGHT_FORMAT"], first)
            elif keyword in ("DISPLAY_DATA_SECTION", "NODE_COORD_SECTION"):
                _section_numbers(lines, keyword, 3 * n, parse_real, np.float64, first)  # shown only
            else:
                raise InstanceFileError(
                    f"{lines.where()}: {keyword[:40]} is not supported with EDGE_WEIGHT_TYPE "
                    f"{kind} (npgym reads NODE_COORD_SECTION or EDGE_WEIGHT_SECTION)"
                )
        self._finish(lines, weights)

    def _finish(self, lines: _Lines, weights: np.ndarray | None) -> None:
        for keyword in ("TYPE", "DIMENSION", "EDGE_WEIGHT_TYPE"):
            if keyword not in self.header:
                raise InstanceFileError(f"{self.path}: no {keyword} line")
        kind = self.header["EDGE_WEIGHT_TYPE"]
        if kind == "EXPLICIT":
            if weights is None:
                raise InstanceFileError(f"{self.path}: EXPLICIT but no EDGE_WEIGHT_SECTION")
            self.matrix = weights
            self.points = None
            return
        if self.points is None:
            raise InstanceFileError(f"{self.path}: {kind} but no NODE_COORD_SECTION")
        distances = coordinate_distances(self.points, kind)
        bad = ~(distances <= MAX_DISTANCE)  # also nan
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            line = int(max(self._line_of_city[i], self._line_of_city[j]))
            raise InstanceFileError(
                f"{lines.where(line)}: the {kind} distance of nodes {i + 1} and {j + 1} is "
                f"{distances[i, j]}, more than npgym's TSP holds ({MAX_DISTANCE:,})"
            )
        self.matrix = distances.astype(np.int64)
        integral = np.all(self.points == np.round(self.points)) and np.all(
            np.abs(self.points) <= MAX_DISTANCE
        )
        if kind != "EUC_2D" or not integral:
            self.points = None  # the prompt calls coordinates Euclidean, rounded

    def instance(self) -> TSPInstance:
        """The npgym TSP instance (its source names the file and the distance function)."""
        assert self.matrix is not None
        source = {
            "source": "tsplib",
            "file": self.path.name,
            "name": self.name,
            "edge_weight_type": self.header["EDGE_WEIGHT_TYPE"],
        }
        if "EDGE_WEIGHT_FORMAT" in self.header and source["edge_weight_type"] == "EXPLICIT":
            source["edge_weight_format"] = self.header["EDGE_WEIGHT_FORMAT"]
        points = None
        if self.points is not None:
            points = tuple((int(x), int(y)) for x, y in self.points.tolist())
        try:
            return TSPInstance(
                distances=tuple(map(tuple, self.matrix.tolist())),
                coordinates=points,
                source=source,
            )
        except ValidationError as error:  # the checks above make this unexpected
            raise InstanceFileError(f"{self.path}: not a valid TSP instance ({error})") from None


def read_tour(path: str | Path, n: int) -> list[int]:
    """The first tour of a TSPLIB ``.tour`` file as 0-based cities: a permutation of ``n``
    nodes (its DIMENSION, when given, must be ``n``)."""
    lines = _Lines(path)
    dimension: int | None = None
    for keyword, rest in _keyword_lines(lines):
        if keyword == "TYPE" and (kind := _header_value(lines, keyword, rest)) != "TOUR":
            raise InstanceFileError(f"{lines.where()}: TYPE {kind[:40]} is not TOUR")
        if keyword == "DIMENSION":
            dimension = parse_integer(_header_value(lines, keyword, rest), lines.where(), keyword)
            if dimension != n:
                raise InstanceFileError(
                    f"{lines.where()}: DIMENSION {dimension} is not the instance's ({n})"
                )
        if keyword == "TOUR_SECTION":
            return _tour_nodes(lines, n, rest or "")
        if keyword == "EOF":
            break
        if keyword not in ("NAME", "TYPE", "COMMENT", "DIMENSION"):
            raise InstanceFileError(f"{lines.where()}: unknown keyword {keyword[:40]}")
    raise InstanceFileError(f"{path}: no TOUR_SECTION")


def _keyword_lines(lines: _Lines) -> Iterator[tuple[str, str | None]]:
    """The keyword and the rest (``None`` without a colon) of each non-blank line, read as the
    caller asks for them (a section's data lines in between are the caller's to read)."""
    while (text := lines.next()) is not None:
        if not text.strip():
            continue
        match = _LINE.match(text)
        if match is None:
            raise InstanceFileError(
                f"{lines.where()}: expected a keyword, got {text.strip()[:40]!r}"
            )
        yield match.group(1), match.group(2)


def _tour_nodes(lines: _Lines, n: int, first: str) -> list[int]:
    """The ``n`` nodes of a TOUR_SECTION as 0-based cities (a permutation), then its end."""
    nodes = np.empty(n, np.int64)
    numbers = np.empty(n, np.int64)
    filled = 0
    for number, token in _rest_tokens(lines, first):
        if token == "-1" or token[0].isalpha():
            raise InstanceFileError(
                f"{lines.where(number)}: the tour ends after {filled} of its {n} nodes"
            )
        nodes[filled] = parse_integer(token, lines.where(number), "a node of the tour")
        numbers[filled] = number
        filled += 1
        if filled == n:
            cities = _city_ids(lines, nodes, numbers, n)
            _tour_end(lines)
            return cities.tolist()
    raise InstanceFileError(
        f"{lines.where()}: the file ends inside the tour, after {filled} of its {n} nodes"
    )


def _tour_end(lines: _Lines) -> None:
    """After a tour's nodes: its ``-1``, then at most another ``-1`` and ``EOF``."""
    ends = 0
    for number, token in _rest_tokens(lines):
        if token == "EOF":
            return
        if token != "-1" or ends == 2:
            raise InstanceFileError(
                f"{lines.where(number)}: expected -1 after the tour's nodes, got {token[:40]!r} "
                "(npgym reads one tour per file)"
            )
        ends += 1
    if ends == 0:
        raise InstanceFileError(f"{lines.where()}: the tour does not end with -1")


def _rest_tokens(lines: _Lines, first: str = "") -> Iterator[tuple[int, str]]:
    """``(line number, token)`` from ``first`` (the rest of the current line) to the end."""
    for token in first.split():
        yield lines.number, token
    while (text := lines.next()) is not None:
        for token in text.split():
            yield lines.number, token


def tour_length(matrix: np.ndarray, cities: list[int]) -> int:
    """Length of the closed tour ``cities``."""
    order = np.array(cities, np.int64)
    return int(matrix[order, np.roll(order, -1)].sum())


def _tour_check(path: Path, length: int) -> Callable[[Reference], str]:
    """The summary words comparing a published tour of ``length`` with the reference; a
    proven reference longer than the tour is a contradiction, raised."""

    def check(reference: Reference) -> str:
        objective = reference.objective
        assert isinstance(objective, int)
        if length == objective:
            return f"{path.name} {length} (agrees)"
        if length > objective:
            return (
                f"{path.name} {length} (longer than npgym's reference by {length - objective}: "
                "that tour is not optimal for these distances)"
            )
        if reference.proven_optimal:
            raise InstanceFileError(
                f"{path}: the tour has length {length}, shorter than npgym's proven optimum "
                f"{objective}: a wrong proof, please report it"
            )
        return (
            f"{path.name} {length} (shorter than npgym's unproven reference by "
            f"{objective - length})"
        )

    return check


def read_tsplib(path: str | Path, tour: str | Path | None = None) -> ImportedInstance:
    """A ``.tsp`` file (and optionally its ``.opt.tour``) read into an instance to certify."""
    parsed = TSPLIBFile(path)
    instance = parsed.instance()
    check_row_size(path, instance)
    kind = parsed.header["EDGE_WEIGHT_TYPE"]
    if kind == "EXPLICIT":
        kind = f"EXPLICIT {parsed.header['EDGE_WEIGHT_FORMAT']}"
    description = f"{path}: TSP, {instance.n} cities ({kind})"
    check = None
    if tour is not None:
        assert parsed.matrix is not None
        length = tour_length(parsed.matrix, read_tour(tour, instance.n))
        check = _tour_check(Path(tour), length)
    return ImportedInstance(f"tsplib-{parsed.name}", instance, description, check)


def pair_tours(paths: Iterable[Path]) -> list[tuple[Path, Path | None]]:
    """``(instance file, tour file or None)``: a ``.tour`` file given goes with the ``.tsp``
    of the same name up to the first dot; else ``<name>.opt.tour`` beside the ``.tsp`` when it
    exists. A tour without its instance is refused."""
    paths = list(paths)
    tours = {path.name.split(".")[0]: path for path in paths if path.name.endswith(".tour")}
    instances = [path for path in paths if not path.name.endswith(".tour")]
    if not instances:
        raise InstanceFileError("no .tsp file given (only tours)")
    pairs: list[tuple[Path, Path | None]] = []
    for path in instances:
        stem = path.name.split(".")[0]
        beside = path.with_name(f"{stem}.opt.tour")
        pairs.append((path, tours.pop(stem, beside if beside.is_file() else None)))
    if tours:
        raise InstanceFileError(f"{next(iter(tours.values()))}: no .tsp file of that name given")
    return pairs


def import_tsplib_files(
    paths: Iterable[str | Path],
    out_dir: str | Path,
    time_limit: float | None = None,
    progress: bool = False,
) -> str:
    """Import ``.tsp`` files (and their ``.opt.tour``) into an npgym dataset folder; return one
    summary line per instance. Every file is read and checked before any reference is solved."""
    pairs = pair_tours(Path(path) for path in paths)
    items = [read_tsplib(path, tour) for path, tour in pairs]
    names = [path.name for path, tour in pairs] + [tour.name for _, tour in pairs if tour]
    return write_imported(items, out_dir, {"tsplib": names}, time_limit, progress)
