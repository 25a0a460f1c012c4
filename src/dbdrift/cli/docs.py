"""`dbdrift docs [TOPIC]`: the documentation, where a `--help` or an error hint points (app/docs.py
finds the files: beside the source tree or under share/doc/dbdrift). Prints text only.
"""
from __future__ import annotations

import argparse
import sys

from dbdrift.app.docs import TOPICS, docs_dir, read

EXAMPLES = """\
examples:
  dbdrift docs                 the topics, and where this install keeps them
  dbdrift docs guide           every task step by step
  dbdrift docs campaign | less every campaign-file key

exit status: 0 printed, 2 a topic that does not exist
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("topic", nargs="?", metavar="TOPIC", help=f"one of {', '.join(TOPICS)} (default: list them)")


def main(args: argparse.Namespace) -> int:
    if args.topic is not None:
        sys.stdout.write(read(args.topic))
        return 0
    for topic, (_, what) in TOPICS.items():
        sys.stdout.write(f"{topic:<12} {what}\n")
    folder = docs_dir()
    where = str(folder) if folder else ("not installed with this copy: they are the docs/ folder of "
                                        "dbdrift's source (`pip download --no-binary :all: --no-deps dbdrift`)")
    sys.stdout.write(f"\n`dbdrift docs TOPIC` prints one; the files: {where}\n")
    return 0
