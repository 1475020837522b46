"""The resample result as text: terminal lines, a Markdown table, an HTML section (one small table each).

Why one module: the three views show the same table (decision, samples, passed) from the same typed result; the
format modules only place it. Labels come from the recorded decisions, which the report's redaction has already
passed over; the HTML view escapes them as every other value of the page.
"""

from __future__ import annotations

import html

from pytest_consistency.model.resample import ResampleSummary


def headline(r: ResampleSummary) -> str:
    counted = sum(row.samples for row in r.rows)
    verdict = "reproduces the inconsistency" if r.reproduces else "does not reproduce an inconsistency"
    return (
        f"resample {r.task}@{r.step} from repetition {r.source}: {r.clause()}; {r.passed}/{counted} passed, which "
        f"{verdict}"
    )


def source_line(r: ResampleSummary) -> str:
    live = f"{r.live} sampled live" if r.live else "all replayed offline"
    spent = f" (estimated {r.estimated_calls} call(s), {r.estimated_tokens} token(s))" if r.live else ""
    replayed = f"steps 1..{r.step - 1} replayed" if r.step > 1 else "no step replayed (step 1: a fresh run)"
    return f"{replayed} from repetition {r.source} of {r.steps} steps; {live}{spent}; {r.cassettes}"


def terminal_lines(r: ResampleSummary) -> list[tuple[str, str]]:
    """(text, style) lines; the style names are the terminal's (``plain``, ``warn``, ``bad``)."""
    width = max([len("decision at step " + str(r.step))] + [len(row.label) for row in r.rows])
    lines = [(headline(r), "warn" if r.reproduces else "plain"), (f"  {source_line(r)}", "plain")]
    lines.append((f"  {'decision at step ' + str(r.step):<{width}}  samples  passed", "plain"))
    for row in r.rows:
        lines.append((f"  {row.label:<{width}}  {row.samples:>7}  {row.passed:>6}", "plain"))
    lines.extend((f"  {error}", "bad") for error in r.errors)
    if r.cause:
        lines.append((f"  {r.cause}", "plain"))
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def markdown_lines(r: ResampleSummary) -> list[str]:
    lines = [f"### Resampling step {r.step}", "", _cell(headline(r)), "", _cell(source_line(r)), ""]
    if r.cause:
        lines += [_cell(r.cause), ""]
    lines += [f"| decision at step {r.step} | samples | passed |", "|---|---:|---:|"]
    lines += [f"| `{_cell(row.label)}` | {row.samples} | {row.passed} |" for row in r.rows]
    lines += [""] + [f"- {_cell(error)}" for error in r.errors] + ([""] if r.errors else [])
    return lines


def html_section(r: ResampleSummary) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(row.label)}</code></td><td class=num>{row.samples}</td><td class=num>{row.passed}</td></tr>"
        for row in r.rows
    )
    errors = "".join(f"<li class=bad>{e(error)}</li>" for error in r.errors)
    cause = f"<p>{e(r.cause)}</p>" if r.cause else ""
    return (
        f'<section id="resample"><h2>Resampling step {r.step}</h2><p>{e(headline(r))}</p>'
        f'<p class="dim">{e(source_line(r))}</p>{cause}'
        f'<table class="plain"><thead><tr><th>decision at step {r.step}</th><th>samples</th><th>passed</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>" + (f"<ul>{errors}</ul>" if errors else "") + "</section>"
    )
