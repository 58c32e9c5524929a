"""TSPLIB import: TSPLIB's distance functions and matrix layouts, checked against the published
optima of classic instances (written here by hand from the published coordinates and matrices),
``.opt.tour`` files, malformed and hostile files, and the CLI round trip to ``npgym eval``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from npgym.cli import main
from npgym.npbench import tsplib
from npgym.npbench.instance_files import (
    MAX_INSTANCE_FILE_BYTES,
    ImportedInstance,
    InstanceFileError,
)
from npgym.registry import get_task
from npgym.tasks.tsp.instance import MAX_CITIES, MAX_DISTANCE, TSPInstance

TSP = get_task("TSP")

# --- published instances (TSPLIB 95), with their published optima ------------------------------

BURMA14 = """\
NAME: burma14
TYPE: TSP
COMMENT: 14-Staedte in Burma (Zaw Win)
DIMENSION: 14
EDGE_WEIGHT_TYPE: GEO
EDGE_WEIGHT_FORMAT: FUNCTION
DISPLAY_DATA_TYPE: COORD_DISPLAY
NODE_COORD_SECTION
   1  16.47       96.10
   2  16.47       94.44
   3  20.09       92.54
   4  22.39       93.37
   5  25.23       97.24
   6  22.00       96.05
   7  20.47       97.02
   8  17.20       96.29
   9  16.30       97.38
  10  14.05       98.12
  11  16.53       97.38
  12  21.52       95.59
  13  19.41       97.13
  14  20.09       94.55
EOF
"""

ULYSSES16 = """\
NAME: ulysses16.tsp
TYPE: TSP
COMMENT: Odyssey of Ulysses (Groetschel/Padberg)
DIMENSION: 16
EDGE_WEIGHT_TYPE: GEO
DISPLAY_DATA_TYPE: COORD_DISPLAY
NODE_COORD_SECTION
 1 38.24 20.42
 2 39.57 26.15
 3 40.56 25.32
 4 36.26 23.12
 5 33.48 10.54
 6 37.56 12.19
 7 38.42 13.11
 8 37.52 20.44
 9 41.23 9.10
 10 41.17 13.05
 11 36.08 -5.21
 12 38.47 15.13
 13 38.15 15.35
 14 37.51 15.17
 15 35.49 14.32
 16 39.36 19.56
EOF
"""

ULYSSES16_TOUR = """\
NAME : ulysses16.opt.tour
TYPE : TOUR
DIMENSION : 16
TOUR_SECTION
1 14 13 12 7 6 15 5 11 9 10 16 3 2 4 8
-1
EOF
"""

GR17_LOWER_DIAG_ROW = [
    *(0,), *(633, 0), *(257, 390, 0), *(91, 661, 228, 0), *(412, 227, 169, 383, 0),
    *(150, 488, 112, 120, 267, 0), *(80, 572, 196, 77, 351, 63, 0),
    *(134, 530, 154, 105, 309, 34, 29, 0), *(259, 555, 372, 175, 338, 264, 232, 249, 0),
    *(505, 289, 262, 476, 196, 360, 444, 402, 495, 0),
    *(353, 282, 110, 324, 61, 208, 292, 250, 352, 154, 0),
    *(324, 638, 437, 240, 421, 329, 297, 314, 95, 578, 435, 0),
    *(70, 567, 191, 27, 346, 83, 47, 68, 189, 439, 287, 254, 0),
    *(211, 466, 74, 182, 243, 105, 150, 108, 326, 336, 184, 391, 145, 0),
    *(268, 420, 53, 239, 199, 123, 207, 165, 383, 240, 140, 448, 202, 57, 0),
    *(246, 745, 472, 237, 528, 364, 332, 349, 202, 685, 542, 157, 289, 426, 483, 0),
    *(121, 518, 142, 84, 297, 35, 29, 36, 236, 390, 238, 301, 55, 96, 153, 336, 0),
]  # fmt: skip

FRI26_LOWER_DIAG_ROW = """
0 83 0 93 40 0 129 53 42 0 133 62 42 11 0 139 64 49 11 9 0 151 91 59 46 35 39 0 169 116 81 72 61 65
26 0 135 93 54 65 55 63 34 37 0 114 84 44 70 62 71 52 59 22 0 110 95 58 88 82 90 71 75 39 20 0 98 98
64 100 95 103 88 92 56 36 18 0 99 89 54 89 84 92 77 83 47 26 11 11 0 95 68 31 66 62 71 63 76 40 20
27 34 23 0 81 67 36 76 74 82 78 91 55 34 32 31 24 15 0 152 127 86 102 93 100 66 54 37 43 42 56 53
62 73 0 159 156 117 142 133 141 110 98 78 74 61 63 68 87 92 44 0 181 175 135 156 146 153 119 103
91 91 80 85 89 106 112 54 22 0 172 152 112 127 117 124 88 70 62 68 64 75 74 87 96 26 34 33 0 185
165 125 139 128 135 98 78 74 82 77 87 87 100 109 39 38 29 13 0 147 160 124 155 148 156 130 122 96
86 68 62 71 93 93 68 30 46 63 68 0 157 180 147 180 173 181 156 148 122 111 92 83 93 116 113 94 53
64 87 90 26 0 185 223 193 228 222 230 206 198 172 160 140 129 140 163 158 144 102 107 135 136 77 50
0 220 268 241 278 272 280 257 250 223 210 190 178 189 212 205 196 154 157 186 186 128 102 51 0 127
179 157 197 194 202 188 188 155 136 116 100 111 132 122 139 109 125 141 148 80 65 64 93 0 181 197
161 190 182 190 160 148 128 121 103 99 107 130 130 95 51 51 81 79 37 27 58 107 90 0
"""

BAYG29_UPPER_ROW = """
97 205 139 86 60 220 65 111 115 227 95 82 225 168 103 266 205 149 120 58 257 152 52 180 136 82 34
145 129 103 71 105 258 154 112 65 204 150 87 176 137 142 204 148 148 49 41 211 226 116 197 89 153
124 74 219 125 175 386 269 134 184 313 201 215 267 248 271 274 236 272 160 151 300 350 239 322 78
276 220 60 167 182 180 162 208 39 102 227 60 86 34 96 129 69 58 60 120 119 192 114 110 192 136 173
173 51 296 150 42 131 268 88 131 245 201 175 275 218 202 119 50 281 238 131 244 51 166 95 69 279
114 56 150 278 46 133 266 214 162 302 242 203 146 67 300 205 111 238 98 139 52 120 178 328 206 147
308 172 203 165 121 251 216 122 231 249 209 111 169 72 338 144 237 331 169 151 227 133 104 242 182
84 290 230 146 165 121 270 91 48 158 200 39 64 210 172 309 68 169 286 242 208 315 259 240 160 90
322 260 160 281 57 192 107 90 140 195 51 117 72 104 153 93 88 25 85 152 200 104 139 154 134 149 135
320 146 64 68 143 106 88 81 159 219 63 216 187 88 293 191 258 272 174 311 258 196 347 288 243 192
113 345 222 144 274 124 165 71 153 144 86 57 189 128 71 71 82 176 150 56 114 168 83 115 160 61 165
51 32 105 127 201 36 254 196 136 260 212 258 234 106 110 56 49 91 153 91 197 136 94 225 151 201 205
215 159 64 126 128 190 98 53 78 218 48 127 214 61 155 157 235 47 305 243 186 282 261 300 252 105
100 176 66 253 183 146 231 203 239 204 113 152 127 150 106 52 235 112 179 221 79 163 220 119 164
135 152 153 114 236 201 90 195 90 127 84 91 273 226 148 296 238 291 269 112 130 286 74 155 291 130
178 38 75 180 281 120 205 270 213 145 36 94 217 162
"""

ATT48 = """
6734 1453 2233 10 5530 1424 401 841 3082 1644 7608 4458 7573 3716 7265 1268 6898 1885 1112 2049
5468 2606 5989 2873 4706 2674 4612 2035 6347 2683 6107 669 7611 5184 7462 3590 7732 4723 5900 3561
4483 3369 6101 1110 5199 2182 1633 2809 4307 2322 675 1006 7555 4819 7541 3981 3177 756 7352 4506
7545 2801 3245 3305 6426 3173 4608 1198 23 2216 7248 3779 7762 4595 7392 2244 3484 2829 6271 2135
4985 140 1916 1569 7280 4899 7509 3239 10 2676 6807 2993 5185 3258 3023 1942
"""

BERLIN52 = """
565 575 25 185 345 750 945 685 845 655 880 660 25 230 525 1000 580 1175 650 1130 1605 620 1220 580
1465 200 1530 5 845 680 725 370 145 665 415 635 510 875 560 365 300 465 520 585 480 415 835 625 975
580 1215 245 1320 315 1250 400 660 180 410 250 420 555 575 665 1150 1160 700 580 685 595 685 610 770
610 795 645 720 635 760 650 475 960 95 260 875 920 700 500 555 815 830 485 1170 65 830 610 605 625
595 360 1340 725 1740 245
"""

BERLIN52_TOUR = """
1 49 32 45 19 41 8 9 10 43 33 51 11 52 14 13 47 26 27 28 12 25 4 6 15 5 24 48 38 37 40 39 36 35 34
44 46 16 29 50 20 23 30 2 7 42 21 17 3 18 31 22
"""

EIL51 = """
37 52 49 49 52 64 20 26 40 30 21 47 17 63 31 62 52 33 51 21 42 41 31 32 5 25 12 42 36 16 52 41 27 23
17 33 13 13 57 58 62 42 42 57 16 57 8 52 7 38 27 68 30 48 43 67 58 48 58 27 37 69 38 46 46 10 61 33
62 63 63 69 32 22 45 35 59 15 5 6 10 17 21 10 5 64 30 15 39 10 32 39 25 32 25 55 48 28 56 37 30 40
"""


def coordinate_file(name: str, kind: str, numbers: str, real: bool = False) -> str:
    """A .tsp file of ``kind`` from the published coordinates ``x1 y1 x2 y2 ...``."""
    values = numbers.split()
    points = [(values[k], values[k + 1]) for k in range(0, len(values), 2)]
    body = "\n".join(
        f"{i} {x}.0 {y}.0" if real else f"{i} {x} {y}" for i, (x, y) in enumerate(points, 1)
    )
    return (
        f"NAME: {name}\nTYPE: TSP\nDIMENSION: {len(points)}\nEDGE_WEIGHT_TYPE: {kind}\n"
        f"NODE_COORD_SECTION\n{body}\nEOF\n"
    )


def matrix_file(name: str, n: int, layout: str, numbers: list[int] | str) -> str:
    """An EXPLICIT .tsp file, its numbers written ten to a line."""
    values = numbers.split() if isinstance(numbers, str) else list(map(str, numbers))
    rows = "\n".join(" ".join(values[k : k + 10]) for k in range(0, len(values), 10))
    return (
        f"NAME: {name}\nTYPE: TSP\nDIMENSION: {n}\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
        f"EDGE_WEIGHT_FORMAT: {layout}\nEDGE_WEIGHT_SECTION\n{rows}\nEOF\n"
    )


PUBLISHED = {
    "burma14 (GEO)": (BURMA14, 3323),
    "ulysses16 (GEO)": (ULYSSES16, 6859),
    "gr17 (EXPLICIT LOWER_DIAG_ROW)": (
        matrix_file("gr17", 17, "LOWER_DIAG_ROW", GR17_LOWER_DIAG_ROW),
        2085,
    ),
    "fri26 (EXPLICIT LOWER_DIAG_ROW)": (
        matrix_file("fri26", 26, "LOWER_DIAG_ROW", FRI26_LOWER_DIAG_ROW),
        937,
    ),
    "bayg29 (EXPLICIT UPPER_ROW)": (matrix_file("bayg29", 29, "UPPER_ROW", BAYG29_UPPER_ROW), 1610),
    "att48 (ATT)": (coordinate_file("att48", "ATT", ATT48), 10628),
    "berlin52 (EUC_2D)": (coordinate_file("berlin52", "EUC_2D", BERLIN52, real=True), 7542),
    "eil51 (EUC_2D)": (coordinate_file("eil51", "EUC_2D", EIL51), 426),
}


def tsp_instance(item: ImportedInstance) -> TSPInstance:
    assert isinstance(item.instance, TSPInstance)
    return item.instance


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", PUBLISHED)
def test_the_proven_reference_is_the_published_optimum(name: str, tmp_path: Path) -> None:
    text, optimum = PUBLISHED[name]
    item = tsplib.read_tsplib(write(tmp_path, "instance.tsp", text))
    reference = TSP.reference(item.instance)
    assert reference.proven_optimal and reference.objective == optimum
    assert TSP.verify(item.instance, reference.solution).objective == optimum


def gr17_matrix() -> np.ndarray:
    """gr17 as a full matrix, built here by plain loops from its published LOWER_DIAG_ROW."""
    matrix = np.zeros((17, 17), np.int64)
    values = iter(GR17_LOWER_DIAG_ROW)
    for i in range(17):
        for j in range(i + 1):
            matrix[i, j] = matrix[j, i] = next(values)
    return matrix


def layout_numbers(matrix: np.ndarray, layout: str) -> list[int]:
    """``matrix`` written in a TSPLIB layout, by the specification's words: a row-wise layout
    lists row after row, a column-wise one column after column; UPPER keeps j > i (j >= i with
    DIAG), LOWER j < i."""
    n = len(matrix)
    if layout == "FULL_MATRIX":
        return matrix.ravel().tolist()
    diagonal = "DIAG" in layout

    def kept(i: int, j: int) -> bool:
        if i == j:
            return diagonal
        return j > i if layout.startswith("UPPER") else j < i

    if layout.endswith("ROW"):
        return [int(matrix[i, j]) for i in range(n) for j in range(n) if kept(i, j)]
    return [int(matrix[i, j]) for j in range(n) for i in range(n) if kept(i, j)]


@pytest.mark.parametrize("layout", tsplib.MATRIX_FORMATS)
def test_every_matrix_layout_reads_gr17(layout: str, tmp_path: Path) -> None:
    matrix = gr17_matrix()
    numbers = layout_numbers(matrix, layout)
    item = tsplib.read_tsplib(write(tmp_path, "gr17.tsp", matrix_file("gr17", 17, layout, numbers)))
    assert np.array_equal(tsp_instance(item).matrix, matrix)
    assert item.instance.source == {
        "source": "tsplib",
        "file": "gr17.tsp",
        "name": "gr17",
        "edge_weight_type": "EXPLICIT",
        "edge_weight_format": layout,
    }


@given(
    size=st.integers(3, 9),
    seed=st.integers(0, 2**32 - 1),
    layout=st.sampled_from(tsplib.MATRIX_FORMATS),
)
def test_any_symmetric_matrix_reads_back_from_any_layout(size: int, seed: int, layout: str) -> None:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.integers(0, 1000, (size, size)), 1)
    matrix = upper + upper.T
    with tempfile.TemporaryDirectory() as folder:
        path = write(
            Path(folder), "m.tsp", matrix_file("m", size, layout, layout_numbers(matrix, layout))
        )
        assert np.array_equal(tsp_instance(tsplib.read_tsplib(path)).matrix, matrix)


@pytest.mark.parametrize("layout", ["UPPER_COL", "LOWER_DIAG_COL"])
def test_a_column_layout_is_not_read_as_its_row_twin(layout: str, tmp_path: Path) -> None:
    """A column layout lists its numbers in another order than the row layout of the same
    triangle: gr17's numbers in ``layout`` read as that row layout give another matrix, so
    reading the column layouts as their row twins would fail the test above."""
    matrix = gr17_matrix()
    numbers = layout_numbers(matrix, layout)
    row_twin = layout.replace("_COL", "_ROW")
    item = tsplib.read_tsplib(write(tmp_path, "x.tsp", matrix_file("x", 17, row_twin, numbers)))
    assert not np.array_equal(tsp_instance(item).matrix, matrix)


def test_the_distance_functions_round_as_tsplib_says(tmp_path: Path) -> None:
    # Pairs: (0,0)-(3,4): 5 everywhere Euclidean; (0,0)-(1,1): sqrt 2 = 1.414;
    # (0,0)-(0.5,0.0) rounds half up (nint): 1; ATT (0,0)-(10,0): sqrt(10) = 3.16, nint 3 < 3.16: 4.
    points = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0], [0.5, 0.0], [10.0, 0.0]])
    euc = tsplib.coordinate_distances(points, "EUC_2D")
    ceil = tsplib.coordinate_distances(points, "CEIL_2D")
    att = tsplib.coordinate_distances(points, "ATT")
    assert (euc[0, 1], euc[0, 2], euc[0, 3], euc[0, 4]) == (5, 1, 1, 10)
    assert (ceil[0, 1], ceil[0, 2], ceil[0, 3], ceil[0, 4]) == (5, 2, 1, 10)
    # ATT: (3,4): sqrt(2.5) = 1.58, nint 2 > 1.58: 2; (1,1): sqrt(0.2) = 0.447, nint 0: 1;
    # (0.5,0): sqrt(0.025) = 0.158: 1; (10,0): 4.
    assert (att[0, 1], att[0, 2], att[0, 3], att[0, 4]) == (2, 1, 1, 4)
    # GEO: minutes, not decimals: 0.30 is 30' = half a degree, and the degrees are truncated,
    # so -5.21 is -5 degrees 21'. One degree of latitude is 111.3 km: (int)(d + 1.0) = 112.
    geo = tsplib.coordinate_distances(np.array([[0.0, 0.0], [1.0, 0.0], [0.30, 0.0]]), "GEO")
    assert geo[0, 1] == 112 and geo[0, 2] == 56
    assert tsplib.geo_radians(-5.21) == tsplib.PI * (-5 + 5.0 * (-5.21 + 5) / 3.0) / 180.0


@given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000)), min_size=3))
def test_euc_2d_matches_the_c_formula_pair_by_pair(points: list[tuple[int, int]]) -> None:
    array = np.array(points, np.float64)
    distances = tsplib.coordinate_distances(array, "EUC_2D")
    for i, (xi, yi) in enumerate(points):
        for j, (xj, yj) in enumerate(points):
            expected = 0 if i == j else int(((xi - xj) ** 2 + (yi - yj) ** 2) ** 0.5 + 0.5)
            assert distances[i, j] == expected


# --- .opt.tour ---------------------------------------------------------------------------------


def test_a_published_tour_is_checked_against_the_reference(tmp_path: Path) -> None:
    tsp = write(tmp_path, "ulysses16.tsp", ULYSSES16)
    tour = write(tmp_path, "ulysses16.opt.tour", ULYSSES16_TOUR)
    item = tsplib.read_tsplib(tsp, tour)
    assert item.check is not None
    assert item.check(TSP.reference(item.instance)) == "ulysses16.opt.tour 6859 (agrees)"


def test_berlin52s_published_tour_has_the_published_length(tmp_path: Path) -> None:
    tsp = write(tmp_path, "berlin52.tsp", coordinate_file("berlin52", "EUC_2D", BERLIN52))
    tour = write(
        tmp_path,
        "berlin52.opt.tour",
        f"NAME : berlin52.opt.tour\nTYPE : TOUR\nDIMENSION : 52\nTOUR_SECTION\n{BERLIN52_TOUR}-1\n",
    )
    item = tsplib.read_tsplib(tsp, tour)
    assert item.check is not None
    assert item.check(TSP.reference(item.instance)) == "berlin52.opt.tour 7542 (agrees)"


def test_a_longer_tour_is_reported_and_a_shorter_than_proven_one_refused(tmp_path: Path) -> None:
    item = tsplib.read_tsplib(write(tmp_path, "ulysses16.tsp", ULYSSES16))
    reference = TSP.reference(item.instance)
    longer = tsplib._tour_check(Path("t.tour"), 7000)(reference)
    assert longer == (
        "t.tour 7000 (longer than npgym's reference by 141: that tour is not optimal for these "
        "distances)"
    )
    with pytest.raises(InstanceFileError, match="shorter than npgym's proven optimum 6859"):
        tsplib._tour_check(Path("t.tour"), 6000)(reference)


def test_tours_pair_with_their_instance_given_or_beside(tmp_path: Path) -> None:
    tsp = write(tmp_path, "ulysses16.tsp", ULYSSES16)
    assert tsplib.pair_tours([tsp]) == [(tsp, None)]
    tour = write(tmp_path, "ulysses16.opt.tour", ULYSSES16_TOUR)
    assert tsplib.pair_tours([tsp]) == [(tsp, tour)]
    assert tsplib.pair_tours([tour, tsp]) == [(tsp, tour)]
    with pytest.raises(InstanceFileError, match=r"no \.tsp file of that name"):
        tsplib.pair_tours([tsp, tmp_path / "other.opt.tour"])


BAD_TOURS = {
    "a node twice": ("1 14 13 12 7 6 15 5 11 9 10 16 3 2 4 4\n-1\n", ":5: node 4 is listed twice"),
    "a node out of range": ("1 14 13 12 7 6 15 5 11 9 10 16 3 2 4 17\n-1\n", ":5: node 17 is not"),
    "too short": ("1 14 13\n-1\nEOF\n", ":6: the tour ends after 3 of its 16 nodes"),
    "no -1": ("1 14 13 12 7 6 15 5 11 9 10 16 3 2 4 8\n", "does not end with -1"),
    "two tours": ("1 14 13 12 7 6 15 5 11 9 10 16 3 2 4 8\n-1\n1 2\n", ":7: expected -1"),
}


@pytest.mark.parametrize("case", BAD_TOURS)
def test_a_malformed_tour_names_its_line(case: str, tmp_path: Path) -> None:
    body, message = BAD_TOURS[case]
    tour = write(tmp_path, "t.tour", f"NAME: t\nTYPE: TOUR\nDIMENSION: 16\nTOUR_SECTION\n{body}")
    with pytest.raises(InstanceFileError, match=message.replace(".", r"\.")):
        tsplib.read_tour(tour, 16)


# --- malformed and hostile files --------------------------------------------------------------

HEADER = "NAME: x\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
MALFORMED = {
    "unknown keyword": ("NAME: x\nCOLOUR: red\n", "t.tsp:2: unknown keyword COLOUR"),
    "ATSP": ("TYPE: ATSP\n", "t.tsp:1: TYPE ATSP is not supported"),
    "EUC_3D": ("EDGE_WEIGHT_TYPE: EUC_3D\n", "t.tsp:1: EDGE_WEIGHT_TYPE EUC_3D is not supported"),
    "bad layout": ("EDGE_WEIGHT_FORMAT: DIAG\n", "t.tsp:1: EDGE_WEIGHT_FORMAT DIAG is not one of"),
    "section first": (
        "TYPE: TSP\nNODE_COORD_SECTION\n",
        "t.tsp:2: NODE_COORD_SECTION comes before",
    ),
    "not a number": (HEADER + "1 0 0\n2 1 x\n3 2 2\n", "t.tsp:7: an entry of NODE_COORD_SECTION"),
    "python-only number": (HEADER + "1 0 0\n2 1_0 0\n3 2 2\n", "t.tsp:7: an entry"),
    "nan": (HEADER + "1 0 0\n2 nan 0\n3 2 2\n", "t.tsp:7: an entry"),
    "short section": (HEADER + "1 0 0\n2 1 1\nEOF\n", "t.tsp:8: NODE_COORD_SECTION ends after 6"),
    "cut off": (HEADER + "1 0 0\n2 1 1\n", "the file ends inside NODE_COORD_SECTION"),
    "node twice": (HEADER + "1 0 0\n1 1 1\n3 2 2\n", "t.tsp:7: node 1 is listed twice"),
    "node id": (HEADER + "1 0 0\n2.5 1 1\n3 2 2\n", "t.tsp:7: node id 2.5 is not an integer"),
    "far": (HEADER + "1 0 0\n2 1e300 0\n3 2 2\n", "t.tsp:7: the EUC_2D distance of nodes 1 and 2"),
    "huge coordinate": (HEADER + "1 0 0\n2 1e999 0\n3 2 2\n", "t.tsp:7: an entry .* out of range"),
    "no section": ("TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: GEO\n", "GEO but no NODE_COORD"),
    "junk line": (HEADER.replace("NODE_COORD_SECTION\n", "12 34\n"), "t.tsp:5: expected a keyword"),
    "twice": ("DIMENSION: 3\nDIMENSION: 4\n", "t.tsp:2: DIMENSION is given twice"),
    "fixed edges": (
        "TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n1 2\n-1\n",
        "t.tsp:4: FIXED_EDGES_SECTION is not supported",
    ),
    "negative weight": (
        matrix_file("x", 3, "UPPER_ROW", "1 2\n-3"),
        "t.tsp:7: weight -3 is outside",
    ),
    "fractional weight": (
        matrix_file("x", 3, "UPPER_ROW", "1 2\n3.5"),
        "t.tsp:7: an entry of EDGE_WEIGHT_SECTION must be an integer",
    ),
    "asymmetric": (
        "TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\n"
        "EDGE_WEIGHT_SECTION\n0 1 2\n1 0 3\n2 4 0\n",
        "t.tsp:8: FULL_MATRIX is not symmetric: node 2 to 3 is 3, node 3 to 2 is 4",
    ),
    "explicit function": (
        matrix_file("x", 3, "FUNCTION", "1 2 3"),
        "t.tsp:6: EXPLICIT weights need an EDGE_WEIGHT_FORMAT of FULL_MATRIX",
    ),
    "too many weights": (
        matrix_file("x", 3, "UPPER_ROW", "1 2 3 4"),
        "t.tsp:7: EDGE_WEIGHT_SECTION holds more than the 3 numbers",
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_file_is_one_error_naming_its_line(case: str, tmp_path: Path) -> None:
    text, message = MALFORMED[case]
    with pytest.raises(InstanceFileError, match=message):
        tsplib.read_tsplib(write(tmp_path, "t.tsp", text))


def test_the_cli_says_one_error_line_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsp", MALFORMED["node twice"][0])
    result = CliRunner().invoke(main, ["import", "tsplib", str(path), "-o", str(tmp_path / "d")])
    assert result.exit_code == 1
    assert result.output == f"Error: {path}:7: node 1 is listed twice\n"


@pytest.mark.parametrize(
    ("dimension", "accepted"), [(MAX_CITIES, True), (MAX_CITIES + 1, False), (10**9, False)]
)
def test_dimension_is_bounded_on_its_own_line(
    dimension: int, accepted: bool, tmp_path: Path
) -> None:
    """The cap is checked on the DIMENSION line: 10**9 cities allocate nothing (the section
    is not even there)."""
    path = write(tmp_path, "t.tsp", f"TYPE: TSP\nDIMENSION: {dimension}\n")
    if accepted:
        with pytest.raises(InstanceFileError, match="no EDGE_WEIGHT_TYPE line"):
            tsplib.read_tsplib(path)
    else:
        with pytest.raises(InstanceFileError, match=f"t.tsp:2: DIMENSION {dimension} is outside"):
            tsplib.read_tsplib(path)


@pytest.mark.slow
def test_the_largest_instance_reads(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    points = rng.integers(0, 10_000, (MAX_CITIES, 2))
    body = "\n".join(f"{i} {x} {y}" for i, (x, y) in enumerate(points.tolist(), 1))
    text = (
        f"TYPE: TSP\nDIMENSION: {MAX_CITIES}\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n{body}\n"
    )
    item = tsplib.read_tsplib(write(tmp_path, "big.tsp", text))
    assert (
        tsp_instance(item).n == MAX_CITIES and int(tsp_instance(item).matrix.max()) <= MAX_DISTANCE
    )


@pytest.mark.parametrize(
    ("size", "accepted"), [(MAX_INSTANCE_FILE_BYTES, True), (MAX_INSTANCE_FILE_BYTES + 1, False)]
)
def test_a_file_is_read_only_up_to_the_limit(size: int, accepted: bool, tmp_path: Path) -> None:
    """A comment line padded to ``size`` bytes: at the limit the file is read (and refused for
    what it lacks), one byte more and it is refused unread."""
    head = "TYPE: TSP\nCOMMENT: "
    path = tmp_path / "big.tsp"
    with path.open("w") as handle:
        handle.write(head + "x" * (size - len(head) - 1) + "\n")
    assert path.stat().st_size == size
    message = "no DIMENSION line" if accepted else "larger than 67,108,864 bytes"
    with pytest.raises(InstanceFileError, match=message):
        tsplib.read_tsplib(path)


# --- the command line: import, then eval -------------------------------------------------------


def test_two_files_of_one_name_are_refused_before_any_work(tmp_path: Path) -> None:
    first = write(tmp_path, "a.tsp", ULYSSES16)
    second = write(tmp_path, "b.tsp", ULYSSES16)  # NAME: ulysses16.tsp in both
    result = CliRunner().invoke(
        main, ["import", "tsplib", str(first), str(second), "-o", str(tmp_path / "d")]
    )
    assert result.exit_code == 1
    assert result.output == "Error: two files give the same instance id: tsplib-ulysses16\n"
    assert not (tmp_path / "d").exists()


def test_import_then_eval_the_folder(tmp_path: Path) -> None:
    tsp = write(tmp_path, "ulysses16.tsp", ULYSSES16)
    write(tmp_path, "ulysses16.opt.tour", ULYSSES16_TOUR)
    gr17 = write(
        tmp_path, "gr17.tsp", matrix_file("gr17", 17, "LOWER_DIAG_ROW", GR17_LOWER_DIAG_ROW)
    )
    out = tmp_path / "imported"
    runner = CliRunner()
    result = runner.invoke(main, ["import", "tsplib", str(tsp), str(gr17), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "ulysses16.tsp: TSP, 16 cities (GEO): reference 6859 (proven optimal), " in result.output
    assert "ulysses16.opt.tour 6859 (agrees)" in result.output
    assert "gr17.tsp: TSP, 17 cities (EXPLICIT LOWER_DIAG_ROW): reference 2085" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"] == {"tsplib": ["ulysses16.tsp", "gr17.tsp", "ulysses16.opt.tour"]}
    rows = [json.loads(line) for line in (out / "TSP.jsonl").read_text().splitlines()]
    assert [row["id"] for row in rows] == ["tsplib-ulysses16", "tsplib-gr17"]
    assert [row["reference_objective"] for row in rows] == [6859, 2085]
    evaluated = runner.invoke(
        main, ["eval", str(out), "--agent", "greedy", "-o", str(tmp_path / "r")]
    )
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["overall"]["instances"] == 2 and report["overall"]["success_rate"] == 1.0
    assert "2 references' certificates checked" in evaluated.output
