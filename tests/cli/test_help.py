"""Every `--help` (dbdrift's and each verb's) ends with examples and the exit status, and each
example command in it is one argparse accepts, so the help cannot drift from the options."""
from __future__ import annotations

import argparse
import re
import shlex

import pytest

from dbdrift.cli import main as cli_main


def helps() -> dict[str, str]:
    """`dbdrift --help` and each verb's, by the command that prints it."""
    parser = cli_main.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"dbdrift": parser.format_help(), **{f"dbdrift {verb}": p.format_help() for verb, p in sub.choices.items()}}


def example_commands(text: str) -> list[str]:
    """The `dbdrift ...` lines of a help's examples section: a trailing `\\` joins the next
    line, two spaces or more start the description, and a pipe or redirection ends the command."""
    section = text.split("\nexamples:\n", 1)[1]
    commands, held = [], ""
    for line in section.splitlines():
        if not line.strip() or (not line.startswith(" ") and not held):
            if not held and commands and not line.startswith(" "):
                break
            continue
        text_line = held + line.strip()
        if text_line.endswith("\\"):
            held = text_line[:-1].rstrip() + " "
            continue
        held = ""
        if text_line.startswith("dbdrift "):
            commands.append(re.split(r"\s{2,}", text_line)[0])
    return commands


def argv_of(command: str) -> list[str]:
    words = shlex.split(command, comments=True)[1:]
    for stop in (">", ">>", "|"):
        if stop in words:
            words = words[:words.index(stop)]
    return words


@pytest.mark.fault("cli")
def test_every_help_ends_with_examples_and_the_exit_status():
    lacking = [f"`{command} --help` lacks " + " and ".join(part for part in ("examples", "exit status")
                                                           if f"\n{part}:" not in text)
               for command, text in helps().items() if "\nexamples:\n" not in text or "\nexit status:" not in text]
    assert lacking == []
    for command, text in helps().items():
        assert text.index("\nexamples:\n") < text.index("\nexit status:"), command


@pytest.mark.fault("cli")
def test_every_example_in_every_help_is_accepted_by_the_parser(capsys):
    refused = []
    for command, text in helps().items():
        examples = example_commands(text)
        if not examples:
            refused.append(f"`{command} --help` shows no `dbdrift ...` example")
        for example in examples:
            try:
                cli_main.build_parser().parse_args(argv_of(example))
            except SystemExit:
                refused.append(f"`{command} --help` shows `{example}`: {capsys.readouterr().err.splitlines()[-1]}")
    assert refused == []


def test_the_example_reader_joins_continued_lines_and_drops_descriptions():
    text = ("usage: x\n\nexamples:\n  dbdrift report --format html -o r.html     a page\n"
            "  dbdrift bisect --source ~/pg --good A --bad B --test point-query \\\n"
            "      --build 'make install'\n  dbdrift report | less\n\nexit status: 0\n")
    assert example_commands(text) == ["dbdrift report --format html -o r.html",
                                      "dbdrift bisect --source ~/pg --good A --bad B --test point-query --build 'make install'",
                                      "dbdrift report | less"]
