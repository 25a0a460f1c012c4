"""A bisect's outcome (app/bisect.py's BisectOutcome, read by attribute since report/ sits below
app/) as text and as a JSON object; no I/O."""
from __future__ import annotations

from dbdrift.quantities import format_duration, format_percent
from dbdrift.report.numbers import fmt_abs

UNIT = {"instructions": "instructions per event", "qps": "QPS"}


def render_text(outcome) -> str:
    """Each probed candidate with its value and verdict, the answer, the functions that moved and
    where the measurements are kept."""
    request, search, noun = outcome.request, outcome.search, outcome.noun
    lines = [f"bisect {request.engine} {request.test}: {UNIT[request.metric]}, "
             f"threshold {format_percent(request.threshold)}, "
             f"{len(search.labels)} {noun}s from {search.labels[0]} to {search.labels[-1]}"]
    probes = sorted(search.probes, key=lambda p: p.index)
    for p in probes:
        extra = _commit_note(outcome, p.label)
        if p.value is None:
            state = f"not measured: {outcome.errors.get(p.label, 'failed')}"
            lines.append(f"  {p.label:<10} {'-':>12}  {state}")
            continue
        state = "good (the good end)" if p.index == 0 else ("bad" if p.bad else "good")
        if p.index == len(search.labels) - 1:
            state += " (the bad end)" if p.bad else " (the bad end, but within the threshold)"
        lines.append(f"  {p.label:<10} {fmt_abs(p.value, thousands=True):>12}  {p.moved:+7.2%}  {state}{extra}")
    if len(search.labels) > len(probes):
        lines.append(f"  ({len(search.labels) - len(probes)} {noun}s not measured: the search did not need them)")
    lines.append(answer(outcome))
    if outcome.commits and search.first_bad is not None:
        commit = outcome.commits[search.labels[search.first_bad]]
        lines.append(f"  {commit.sha} {commit.committed_at} {commit.subject}")
    if outcome.moved:
        lo, hi = search.labels[search.last_good], search.labels[search.first_bad]
        lines.append(f"functions that moved from {lo} to {hi} (self instructions per event):")
        lines += [f"  {delta:+10.1f}  {name}  ({before:.1f} -> {after:.1f})"
                  for name, delta, before, after in outcome.moved]
    if outcome.builds:
        built = [b for b in outcome.builds.values() if not b.cached]
        lines.append(f"builds: {len(built)} built in {sum(b.seconds for b in built):.0f}s, "
                     f"{len(outcome.builds) - len(built)} from the build cache; total {outcome.total_s:.0f}s")
    elif outcome.total_s:
        lines.append(f"total {outcome.total_s:.0f}s")
    lines.append(f"every measurement is in {request.store}: `dbdrift history --store {request.store} --metric "
                 f"{request.metric} --tests {request.test}` shows them")
    return "\n".join(lines) + "\n"


def _commit_note(outcome, label: str) -> str:
    commit = outcome.commits.get(label)
    if commit is None:
        return ""
    build = outcome.builds.get(label)
    took = f", build {build.seconds:.0f}s{' (cached)' if build.cached else ''}" if build and build.prefix else ""
    return f"  {commit.subject[:50]}{took}"


def answer(outcome) -> str:
    """The answer in one line: the first bad candidate, no move, or why there is none."""
    search, noun = outcome.search, outcome.noun
    labels = search.labels
    if search.verdict == "good-failed":
        return f"no answer: the good end {labels[0]} could not be measured"
    if search.verdict == "bad-failed":
        return f"no answer: the bad end {labels[-1]} could not be measured"
    if search.verdict == "no-move":
        bad = search.probe(len(labels) - 1)
        return (f"no {noun} moved past {format_percent(outcome.request.threshold)}: {labels[-1]} is "
                f"{bad.moved:+.2%} from {labels[0]} (lower --threshold, or choose other ends)")
    first, last = search.probe(search.first_bad), search.probe(search.last_good)
    step = first.value / last.value - 1
    text = (f"first bad {noun}: {labels[search.first_bad]} ({first.moved:+.2%} from {labels[0]}; "
            f"{labels[search.last_good]} -> {labels[search.first_bad]}: {step:+.2%})")
    if search.skipped_between:
        text += (f"; or one of {', '.join(labels[i] for i in search.skipped_between)}, which could not be measured")
    return text


def as_dict(outcome) -> dict:
    """The outcome as one JSON object (`dbdrift bisect --format json`)."""
    request, search, builds = outcome.request, outcome.search, outcome.builds
    commits = [{"commit": c.sha, "short": c.short, "committed_at": c.committed_at, "subject": c.subject,
                **({"build_s": builds[c.short].seconds, "build_cached": builds[c.short].cached,
                    "build_log": str(builds[c.short].log)} if c.short in builds else {})}
               for c in outcome.commits.values()]
    return {"engine": request.engine, "test": request.test, "metric": request.metric, "threshold": request.threshold,
            "candidates": search.labels, "verdict": search.verdict, "total_s": outcome.total_s,
            **({"source": str(request.source), "commits": commits} if commits else {}),
            "first_bad": search.labels[search.first_bad] if search.first_bad is not None else None,
            "last_good": search.labels[search.last_good] if search.last_good is not None else None,
            "skipped_between": [search.labels[i] for i in search.skipped_between],
            "answer": answer(outcome),
            "probes": [{"version": p.label, "value": p.value, "moved": p.moved, "bad": p.bad,
                        "campaign_id": outcome.campaigns.get(p.label), "error": outcome.errors.get(p.label)}
                       for p in sorted(search.probes, key=lambda p: p.index)],
            "functions": [{"function": n, "delta": d, "before": b, "after": a} for n, d, b, a in outcome.moved]}


def check_lines(checked) -> list[str]:
    """The plan `bisect --check` prints (app/bisect.py's BisectCheck), the last line saying
    nothing was measured."""
    request, chosen = checked.request, checked.chosen
    labels = chosen.labels
    lines = [f"bisect {request.engine} {request.test}: {UNIT[request.metric]}, threshold "
             f"{format_percent(request.threshold)}; {chosen.what}: {', '.join(labels[:8])}"
             + (f" ... {labels[-1]}" if len(labels) > 8 else "")]
    lines += [f"  note: {note}" for note in chosen.notes]
    lines += [f"  {label}: {where}" for label, where in checked.ends]
    if checked.stored:
        lines.append(f"  in the store already (read, not measured again): {', '.join(checked.stored)}")
    lines.append(f"  store: {request.store}")
    left = max(checked.measurements - len(checked.stored), 0)
    lines.append(f"  expected time: a binary search measures at most {checked.measurements} of {len(labels)}, "
                 f"about {format_duration(checked.measurement_s)} each" + (" plus its build" if chosen.commits else "")
                 + f": at most about {format_duration(left * checked.measurement_s)}"
                 + (f" ({len(checked.stored)} stored)" if checked.stored else ""))
    lines += [f"  warning: {line}" for line in checked.warnings]
    lines += [f"  not checked: {line}" for line in checked.unchecked]
    lines.append("ok: nothing was started (drop --check to run it)")
    return lines
