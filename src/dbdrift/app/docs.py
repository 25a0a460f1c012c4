"""The documentation: the Markdown files of the docs/ folder (and the README), from wherever this
install has them: beside the source tree it runs from (`./dev setup`, an editable install), or
under the prefix's share/doc/dbdrift, where a wheel installs them (packaging/dbdrift.data/data/
share/doc/ links each file). Text only; never a browser or the network."""
from __future__ import annotations

import sys
from pathlib import Path

from dbdrift.errors import UserError

# topic -> (file, what it answers); the file names are those of the source tree's docs/ folder
TOPICS = {
    "readme": ("README.md", "what dbdrift answers, the common tasks and their expected times"),
    "guide": ("guide.md", "every task step by step, calibration and CI included"),
    "campaign": ("campaign.md", "every campaign-file key with type, default and meaning"),
    "methodology": ("methodology.md", "what runs, in which order, and where dbdrift differs from the original scripts"),
    "noise": ("noise.md", "how intervals and verdicts are made, and why"),
    "hardware": ("hardware.md", "hardware per operation, instructions per event, flamegraphs, host checks"),
    "posts": ("posts.md", "the command that makes each table and chart of the posts, and `report --format post`"),
    "history": ("history.md", "history across campaigns, change points, bisect, nightly runs"),
    "cluster": ("cluster.md", "a campaign over many hosts with Dask"),
    "faults": ("faults.md", "what happens when a server dies, on Ctrl-C, on bad input"),
    "protocol": ("protocol.md", "the contract between dbdrift and its load driver"),
    "contributing": ("contributing.md", "the layers, adding a workload or a build source, how the tests are organised"),
}

def docs_dir() -> Path | None:
    """The folder holding the guide: beside the source tree, or under share/doc."""
    package = Path(__file__).resolve().parents[1]
    for folder in (package.parents[1] / "docs", Path(sys.prefix) / "share" / "doc" / "dbdrift"):
        if (folder / "guide.md").is_file():
            return folder
    return None


def path_of(topic: str, folder: Path) -> Path:
    name = TOPICS[topic][0]
    return folder.parent / name if topic == "readme" and not (folder / name).is_file() else folder / name


def read(topic: str) -> str:
    """The topic's text, or a UserError naming what is missing and where it is kept."""
    if topic not in TOPICS:
        raise UserError(f"no documentation topic {topic!r}", f"choose one of {', '.join(TOPICS)}", exit_code=2)
    folder = docs_dir()
    if folder is None:
        raise UserError(f"the documentation is not installed with this copy of dbdrift ({sys.prefix})",
                        f"docs/{TOPICS[topic][0]} in dbdrift's source has it: "
                        "`pip download --no-binary :all: --no-deps dbdrift`, or run from a checkout (`./dev setup`)")
    path = path_of(topic, folder)
    if not path.is_file():
        raise UserError(f"{path} is missing from this install", "reinstall dbdrift, or read it in the source tree")
    return path.read_text()
