"""The HTML report: one self-contained page to look at a session's inconsistency, not only to read its figures.

Why a page beside the terminal summary and the JSON report: the question after "the gap is 24 pp" is *which*
repetitions disagreed, *how* (the answers) and *whether the route moved under them* (the calls). The page answers
that with a tasks x repetitions grid whose cells open the repetition's route and calls, and with a side-by-side of
one passing and one failing repetition of every inconsistent task, up to the first call where they part.

Constraints, each for a reason:

- **One file, nothing fetched.** CSS and JS are inline; no font, image, script or style is loaded from anywhere, so
  the page works opened from disk (``file://``), as a CI artifact, and offline, and leaks nothing when opened. They
  are kept as package files, ``page.css`` and ``page.js`` beside this module (read once, with
  :mod:`importlib.resources`, as inspect_ai ships its log viewer's), so they are edited, linted and reviewed as CSS
  and JavaScript, not as Python strings; the page inlines them.
- **Read in greyscale.** Every state is a symbol as well as a colour: ✓ ✗ ! – ○ · for outcomes, letters A, B, C...
  for answer classes, so colour-blind readers and printouts lose nothing.
- **Small at scale.** The grid is one light ``<td>`` per repetition; per-repetition data (answers, notes, calls) is
  embedded once as JSON, with repeated strings interned, and the details panel is built from it on demand. 500
  tasks x 10 repetitions stay a few MB and load in well under a second (``scripts/html_scale.py`` measures it).
- **Hostile text is inert.** Every string goes through :func:`html.escape`; the JSON block escapes ``<``, ``>`` and
  ``&`` as ``\\u003c`` etc., so an answer holding ``</script>`` cannot close the block; the script only ever sets
  ``textContent``.
- **A pure function of the summary.** No clock, no randomness, no environment: the same report renders the same
  bytes, in the session (``--consistency-html``) and in ``pytest-consistency show REPORT --format html``.

Answer classes here group identical normalised answers (the default equivalence); a session that used a
``pytest_consistency_answers_equivalent`` hook says so on the page, since its grouping may be coarser.

The modules, one concern each: :mod:`.data` (symbols, answer classes, the embedded JSON, the rows a table and its
chart share), :mod:`.sections` (verdict, figures, gates, route, comparison, notes, the gap by cause, the grid),
:mod:`.charts` (the pictures, inline SVG: pass rates and their intervals, the gap by cause, baseline and current),
:mod:`.diagnosis` (inconsistent tasks: their cause and its differing texts, repetitions side by side; trajectory
trees); this one assembles the page.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from pytest_consistency.model.result import SessionSummary
from pytest_consistency.report.cost import html_section as cost_section
from pytest_consistency.report.encodable import ESCAPE_NOTE, needs_escape, visible
from pytest_consistency.report.html.charts import charts_section
from pytest_consistency.report.html.data import answer_classes, e, embedded_json, page_data
from pytest_consistency.report.html.diagnosis import diagnoses_section, trajectories_section
from pytest_consistency.report.html.sections import (
    causes_section,
    comparison_section,
    figures_section,
    gates_section,
    grid_section,
    notes_section,
    resample_section,
    route_section,
    verdict_section,
)
from pytest_consistency.report.judge import html_section as judge_html
from pytest_consistency.report.terminal import pp
from pytest_consistency.report.user import html_section as user_html


@cache
def asset(name: str) -> str:
    """A file shipped beside this module (``page.css``, ``page.js``), as the page inlines it."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def render(summary: SessionSummary) -> str:
    """The page of ``summary``: a pure function, the same bytes for the same report."""
    classes = [answer_classes(task) for task in summary.tasks]
    title = f"pytest-consistency: {'passed' if summary.passed else 'failed'}, gap {pp(summary.consistency_gap_pp)}"
    body = [
        "<header><h1>pytest-consistency report</h1>",
        verdict_section(summary),
        figures_section(summary),
        "</header><main>",
        '<div class="top">',
        gates_section(summary),
        route_section(summary),
        "</div>",
        charts_section(summary),
        comparison_section(summary.comparison) if summary.comparison is not None else "",
        notes_section(summary),
        causes_section(summary),
        cost_section(summary),
        resample_section(summary),
        judge_html(summary.judge),
        user_html(summary.simulated_user),
        grid_section(summary, classes),
        trajectories_section(summary),
        diagnoses_section(summary, classes),
        "</main>",
    ]
    data, escaped = embedded_json(page_data(summary, classes))
    if escaped or any(needs_escape(part) for part in body):
        body.insert(4, f'<p class="dim">{e(ESCAPE_NOTE)}</p>')
    return visible(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'\">"
        f"<title>{e(title)}</title><style>\n{asset('page.css')}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + f'\n<script type="application/json" id="pc-data">{data}</script>'
        + f"\n<script>\n{asset('page.js')}</script>\n</body></html>\n"
    )


class HtmlFormat:
    """The whole session as one self-contained HTML page."""

    name = "html"
    suffix = ".html"

    def render(self, summary: SessionSummary) -> str:
        return render(summary)


FORMAT = HtmlFormat()
