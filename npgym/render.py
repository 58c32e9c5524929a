"""Pictures of an instance and an answer, drawn so that a person sees the mistake.

:func:`draw_answer` pictures a completion (the ``rgb_array`` render of the text env and
``npgym show``), :func:`draw` an already parsed, possibly partial, solution (the structured
env's render). Each task's drawing lives in ``npgym/tasks/<name>/render.py``: the tour with its
missing cities ringed, the clashing edge in red, overlapping meetings in red, the uncovered
elements, the knapsack's overweight in red... Mistakes are always red (:data:`MISTAKE`).

matplotlib is imported here, lazily, and used through its Agg canvas only (no pyplot state, no
window), so ``import npgym`` and ``gym.make`` without a ``render_mode`` never load it.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npgym.answer import AnswerFormatError
from npgym.capabilities import capability
from npgym.instance import Instance
from npgym.results import Reference, Score, Verdict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from npgym.graphs import GraphInstance
    from npgym.task import Task

MISTAKE = "#d62728"
GOOD = "#2ca02c"
CHOSEN = "#ff7f0e"
PLAIN = "#1f77b4"
FAINT = "#c7c7c7"
FIGURE_SIZE = (7.2, 5.4)
DPI = 100


def draw(
    task: Task[Any, Any],
    instance: Instance,
    solution: Any,
    *,
    partial: bool = False,
    headline: str | None = None,
) -> np.ndarray:
    """An ``(H, W, 3)`` ``uint8`` picture of ``instance`` and ``solution`` (None: none yet).

    ``solution`` is any value :meth:`Task.to_solution` accepts; ``partial`` marks a solution
    still being built (structured mode), whose unfinished parts are not mistakes.
    ``headline`` replaces the first title line (by default the verifier's verdict).
    """
    shaped, problem = None, ""
    if solution is not None:
        try:
            shaped = task.to_solution(solution)
        except AnswerFormatError as error:
            problem = f"format error: {error}"
    if headline is None:
        if solution is None:
            headline = "no answer yet"
        elif problem:
            headline = problem
        elif partial:
            headline = "partial solution"
        else:
            headline = verdict_line(task, task.check(instance, shaped))
    return _render(task, instance, shaped, partial, headline)


def draw_answer(
    task: Task[Any, Any],
    instance: Instance,
    completion: str | None,
    reference: Reference | None = None,
) -> np.ndarray:
    """A picture of ``completion``'s answer to ``instance`` (None: the instance alone).

    The title is the score: the verifier's reason for an infeasible answer, or the objective and
    its ratio to ``reference`` (computed when not given) for a feasible one.
    """
    if completion is None:
        return draw(task, instance, None)
    if reference is None:
        reference = task.reference(instance)
    score = task.score(instance, completion, reference)
    try:
        solution = task.parse(completion)
    except AnswerFormatError:
        solution = None
    headline = score_line(task, score, proven=reference.proven_optimal)
    return _render(task, instance, solution, False, headline)


def verdict_line(task: Task[Any, Any], verdict: Verdict) -> str:
    """``infeasible: <reason>`` or ``feasible, <objective name> <value>``."""
    if not verdict.feasible:
        return f"infeasible: {verdict.reason}"
    return f"feasible, {task.objective_name} {verdict.objective}"


def score_line(task: Task[Any, Any], score: Score, *, proven: bool = False) -> str:
    """A score in one line: the failure's reason, or the objective and the ratio to the
    reference, named ``optimum`` when ``proven`` (a proven optimal reference), else ``best
    known``."""
    if not score.format_ok:
        return f"format error: {score.reason}"
    if not score.feasible:
        return f"infeasible: {score.reason}"
    if score.objective is None:
        return "feasible: Impossible is correct"
    return (
        f"feasible, {task.objective_name} {score.objective} "
        f"({'optimum' if proven else 'best known'} {score.reference_objective}, "
        f"ratio {score.optimality:.3f})"
    )


def save_png(image: np.ndarray, path: str | Path, *, in_folder: bool = False) -> Path:
    """Write an ``(H, W, 3)`` picture as a PNG by :mod:`npgym.outputs`' rules (a file replaced
    whole, a device or FIFO written in place, a folder or a link to a file refused; with
    ``in_folder``, a file npgym names inside an output folder: only absent or a regular file)."""
    from matplotlib.image import imsave

    from npgym.outputs import open_binary_output

    target = Path(path)
    with open_binary_output(target, in_folder=in_folder) as handle:
        imsave(handle, image, format="png")
    return target


def _render(
    task: Task[Any, Any], instance: Instance, shaped: Any, partial: bool, headline: str
) -> np.ndarray:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGURE_SIZE, dpi=DPI)
    canvas = FigureCanvasAgg(figure)
    capability(task, "drawer")(figure, instance, shaped, partial)
    where = ", ".join(
        part
        for part in (
            f"tier {instance.tier}" if instance.tier else "",
            f"seed {instance.seed}" if instance.seed is not None else "",
        )
        if part
    )
    color = MISTAKE if headline.startswith(("infeasible", "format")) else "black"
    figure.suptitle(f"{task.name}" + (f" ({where})" if where else ""), fontsize=11, y=0.995)
    lines = textwrap.wrap(headline, 100, max_lines=2, placeholder=" ...")
    figure.text(0.5, 0.955, "\n".join(lines), ha="center", va="top", fontsize=9, color=color)
    figure.subplots_adjust(top=0.84)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


# --- helpers the task drawings share ----------------------------------------------------------


def circle_layout(n: int) -> np.ndarray:
    """``(n, 2)`` points on the unit circle, vertex 0 at the top, clockwise."""
    angles = math.pi / 2 - 2 * math.pi * np.arange(n) / max(n, 1)
    return np.column_stack([np.cos(angles), np.sin(angles)])


def plain_axes(figure: Figure) -> Axes:
    """One axes without ticks or frame, equal aspect (for graphs and maps)."""
    axes = figure.add_subplot(1, 1, 1)
    axes.set_aspect("equal")
    axes.axis("off")
    return axes


def graph_axes(figure: Figure, instance: GraphInstance) -> tuple[Axes, np.ndarray]:
    """The base of a graph picture: plain axes, the vertices on a circle and every edge faint
    beneath what the answer marks. Returns the axes and the vertex points."""
    axes = plain_axes(figure)
    points = circle_layout(instance.n)
    segments(axes, points, instance.edges, FAINT, 0.8)
    return axes, points


def two_panels(figure: Figure, heights: tuple[float, float], space: float) -> tuple[Axes, Axes]:
    """Two axes one above the other, their heights in the ratio ``heights``, ``space`` apart
    (the instance above, a summary of the answer below)."""
    grid = figure.add_gridspec(2, 1, height_ratios=heights, hspace=space)
    return figure.add_subplot(grid[0]), figure.add_subplot(grid[1])


def segments(
    axes: Axes,
    points: np.ndarray,
    pairs: Any,
    color: str,
    width: float = 1.0,
    style: str = "solid",
    z: int = 1,
) -> None:
    """Draw a line between ``points[u]`` and ``points[v]`` for every ``(u, v)`` in ``pairs``."""
    from matplotlib.collections import LineCollection

    lines = [(points[u], points[v]) for u, v in pairs]
    if lines:
        axes.add_collection(
            LineCollection(lines, colors=color, linewidths=width, linestyles=style, zorder=z)
        )


def vertices(
    axes: Axes,
    points: np.ndarray,
    face: Any,
    edge: Any = "black",
    size: float = 180,
    labels: bool = True,
    width: Any = 1.0,
) -> None:
    """Vertex discs with their numbers (small font when there are many)."""
    axes.scatter(
        points[:, 0], points[:, 1], s=size, c=face, edgecolors=edge, linewidths=width, zorder=3
    )
    if labels:
        font = 7 if len(points) <= 30 else 5
        for index, (x, y) in enumerate(points):
            axes.text(x, y, str(index), ha="center", va="center", fontsize=font, zorder=4)


def tally_faces(n: int, counts: Mapping[int, int], once: str, rest: str = "white") -> list[str]:
    """Fill colours of ``n`` vertices by how often an answer names each (``counts``): ``once``
    for a vertex named once, red for one named again, ``rest`` for one not named."""
    face = [rest] * n
    for vertex, count in counts.items():
        face[vertex] = MISTAKE if count > 1 else once
    return face


def stack_against(axes: Axes, amounts: list[int], limit: int, name: str) -> int:
    """The chosen ``amounts`` stacked in one bar against ``limit`` (a black line labelled
    ``name``): what fits blue, what passes it red. Returns the total."""
    total = 0
    for amount in amounts:
        fits = min(amount, max(limit - total, 0))
        if fits:
            axes.barh(0, fits, left=total, color=PLAIN, edgecolor="white")
        if amount > fits:
            axes.barh(0, amount - fits, left=total + fits, color=MISTAKE, edgecolor="white")
        total += amount
    axes.axvline(limit, color="black", linewidth=2)
    axes.text(limit, 0.45, f" {name}", fontsize=7, va="bottom")
    axes.set_xlim(0, max(total, limit) * 1.05 + 1)
    axes.set_yticks([])
    axes.tick_params(labelsize=7)
    return total


def legend(axes: Axes, entries: list[tuple[str, str, str]]) -> None:
    """A legend of ``(label, colour, kind)`` with kind ``line``, ``dashed`` or ``dot``."""
    from matplotlib.lines import Line2D

    handles = []
    for _label, color, kind in entries:
        if kind == "dot":
            handles.append(
                Line2D([], [], marker="o", linestyle="", markerfacecolor=color, color="black")
            )
        else:
            handles.append(Line2D([], [], color=color, linestyle="--" if kind == "dashed" else "-"))
    axes.legend(
        handles,
        [label for label, _, _ in entries],
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(len(entries), 4),
        fontsize=7,
        frameon=False,
    )


def valid_ids(values: Any, count: int) -> list[int]:
    """The entries of an answer's id list that name a real item (out-of-range ids dropped)."""
    return [int(v) for v in np.asarray(values, dtype=np.int64).ravel() if 0 <= v < count]


# --- npgym show ---------------------------------------------------------------------------------
