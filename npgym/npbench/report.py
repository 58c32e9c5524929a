"""Writing an evaluation report to a folder: the numbers (``report.json``), the tables and the
gallery (``report.md``) and the picture (``report.png``). Apart from :mod:`npgym.npbench.evaluate`,
which computes the report, so that the plots can read the evaluation without a circle."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from npgym.npbench.evaluate import Completions, Report, markdown
from npgym.npbench.plots import PlotStyle, plot_report, write_gallery
from npgym.outputs import check_output_folder, open_output


def write_report(
    report: Report,
    folder: str | Path,
    rows: Sequence[Mapping[str, Any]] | None = None,
    completions: Completions | None = None,
    style: PlotStyle = "bars",
) -> list[Path]:
    """Write ``report.json``, ``report.md`` and ``report.png`` (:func:`plot_report` in
    ``style``) into ``folder``; given the ``rows`` and ``completions`` too, ``report.md`` ends
    with a gallery of each task's worst and best answer (PNGs in ``folder/gallery/``). The
    gallery only draws: the numbers never depend on it."""
    out = check_output_folder(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "report.md", out / "report.png"]
    with open_output(paths[0], in_folder=True) as handle:
        handle.write(json.dumps(report, indent=1, sort_keys=True) + "\n")
    text = markdown(report)
    if rows is not None and completions is not None:
        text += "\n" + write_gallery(rows, completions, out)
    with open_output(paths[1], in_folder=True) as handle:
        handle.write(text)
    plot_report(report, paths[2], style)
    return paths
