"""Picture of a SetCover answer: the membership matrix (subsets by elements), the chosen
subsets' rows orange, and a bottom row of the universe: covered elements green, uncovered red.
An ``Impossible`` answer is written on the picture."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import CHOSEN, GOOD, MISTAKE, two_panels, valid_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.set_cover.instance import SetCoverInstance


def draw(
    figure: Figure, instance: SetCoverInstance, picked: np.ndarray | str | None, partial: bool
) -> None:
    from matplotlib.colors import ListedColormap, to_rgb

    matrix_axes, universe_axes = two_panels(figure, (len(instance.subsets), 2), 0.3)
    membership = instance.membership
    impossible = isinstance(picked, str)
    ids = [] if picked is None or impossible else valid_ids(picked, len(instance.subsets))
    counts = Counter(ids)
    image = np.ones((*membership.shape, 3))
    image[membership] = to_rgb("#7f7f7f")
    for subset, count in counts.items():
        image[subset, membership[subset]] = to_rgb(MISTAKE if count > 1 else CHOSEN)
    matrix_axes.imshow(image, aspect="auto", interpolation="nearest")
    matrix_axes.set_ylabel("subset", fontsize=8)
    matrix_axes.set_yticks(range(len(instance.subsets)))
    matrix_axes.tick_params(labelsize=6)
    matrix_axes.set_xticks([])
    covered = (
        membership[list(counts)].any(axis=0) if counts else np.zeros(membership.shape[1], bool)
    )
    coverable = membership.any(axis=0)
    state = np.where(covered, 1, 0)[None, :]
    universe_axes.imshow(
        state,
        aspect="auto",
        cmap=ListedColormap(["white" if partial else MISTAKE, GOOD]),
        vmin=0,
        vmax=1,
    )
    universe_axes.set_yticks([])
    universe_axes.set_xticks(range(instance.universe_size))
    universe_axes.tick_params(labelsize=6)
    universe_axes.set_xlabel("element (green: covered, red: not covered)", fontsize=8)
    uncovered = np.flatnonzero(~covered).tolist()
    if impossible:
        text = "answer: Impossible; " + (
            "correct, no subset holds element(s) " + str(np.flatnonzero(~coverable).tolist())
            if not coverable.all()
            else "wrong, the subsets do cover the universe"
        )
        color = GOOD if not coverable.all() else MISTAKE
    else:
        text = f"{len(counts)} subsets chosen (orange rows)"
        if uncovered and not partial:
            text += f"; uncovered: {uncovered[:12]}{'...' if len(uncovered) > 12 else ''}"
        color = (
            MISTAKE
            if (uncovered and not partial) or any(c > 1 for c in counts.values())
            else "black"
        )
    matrix_axes.set_title(text, fontsize=8, color=color)
