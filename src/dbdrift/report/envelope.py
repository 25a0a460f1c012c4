"""What every machine-readable report carries, whatever its workload, so that files of many
campaigns and workloads pool: the JSON's envelope (`meta`, then the workload, campaign, base,
thresholds and notes, before the workload's own fields) and the CSV's campaign columns closing
every line. Pure; the values come from results/meta.report_meta."""
from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import IO, Any

from dbdrift.model import JsonObject

CAMPAIGN_COLUMNS = ("workload", "campaign", "campaign_id", "campaign_date", "host", "dbdrift_version",
                    "format_version")
"""The CSV columns every line of every workload's CSV ends with, the report's context: a line
stands alone once lines of many campaigns are pooled."""


def campaign_values(workload: str, campaign: str, meta: JsonObject) -> list[object]:
    """The CAMPAIGN_COLUMNS of a report (empty where `meta` lacks the fact)."""
    stored = meta.get("campaign", {})
    return [workload, campaign, stored.get("id", ""), stored.get("created_at", ""),
            meta.get("host", {}).get("hostname", ""), meta.get("dbdrift_version", ""), meta.get("format_version", "")]


def envelope(workload: str, campaign: str, meta: JsonObject, base: str, min_effect: float, noisy: float,
             notes: Iterable[str]) -> dict[str, Any]:
    """The fields every workload's JSON opens with, named alike: `meta` (dbdrift and format version,
    date, host, campaign settings, targets), `workload`, `campaign`, `base`, `min_effect`,
    `noisy_half_width` and `notes`."""
    return {"meta": meta, "workload": workload, "campaign": campaign, "base": base, "min_effect": min_effect,
            "noisy_half_width": noisy, "notes": list(notes)}


TWIN_COLUMNS = ("aa_twin", "aa_twin_cells", "aa_twin_false_verdicts", "aa_twin_rate")
"""The campaign columns of a campaign with an A/A twin (results/twins.py), after CAMPAIGN_COLUMNS: the
twin's name, its cells with a verdict, how many of them were false (a regression or an improvement)
and their share. A campaign without a twin has none of them."""


def twin_values(meta: JsonObject) -> list[object]:
    """The TWIN_COLUMNS of a report whose `meta` has the twin's rate; none without."""
    twin = meta.get("aa_twin")
    if not twin:
        return []
    return [twin["twin"], twin["cells"], twin["false_verdicts"], "" if twin["rate"] is None else twin["rate"]]


class CampaignCsv:
    """A CSV writer whose header and every line end with the campaign columns (and the twin's,
    when the campaign has one)."""

    def __init__(self, out: IO[str], workload: str, campaign: str, meta: JsonObject) -> None:
        self._writer = csv.writer(out, lineterminator="\n")
        self._twin = twin_values(meta)
        self._values = campaign_values(workload, campaign, meta) + self._twin

    def header(self, columns: Iterable[str]) -> None:
        self._writer.writerow([*columns, *CAMPAIGN_COLUMNS, *(TWIN_COLUMNS if self._twin else ())])

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([*row, *self._values])
