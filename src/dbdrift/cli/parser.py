"""The argument parser every verb is built on: argparse's, with "did you mean" for a misspelt
verb, option or choice, and an unknown option refused with the usage of the verb it was given to
(argparse alone names it under `dbdrift`'s usage, without a suggestion)."""
from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable, Sequence
from typing import Any


def close_to(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate `word` most likely misspells (difflib's ratio of at least 0.6), or None."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose errors suggest the closest verb, option or choice; its
    sub-parsers (the verbs, `config`'s actions) are of this class too (add_subparsers keeps it)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        choices = [str(c) for c in action.choices]
        near = close_to(str(value), choices)
        guess = f"; did you mean {near!r}?" if near else ""
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{guess} (choose from "
                                             f"{', '.join(map(repr, choices))})")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner = self.innermost(parsed)
            owner.error(unrecognized(extras, owner))
        return parsed

    def innermost(self, parsed: argparse.Namespace) -> Parser:
        """The parser of the verb (or `config` action) the arguments chose: the one whose options
        an unknown word was meant for."""
        parser: Parser = self
        while True:
            sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            chosen = getattr(parsed, sub.dest, None) if sub is not None else None
            if sub is None or chosen not in sub.choices:
                return parser
            parser = sub.choices[chosen]


def unrecognized(extras: list[str], parser: argparse.ArgumentParser) -> str:
    """argparse's `unrecognized arguments` with, for each unknown option, the closest option of
    `parser` (a value given with `=` left out of the comparison)."""
    options = [s for a in parser._actions for s in a.option_strings if len(s) > 2]
    guesses = []
    for word in extras:
        if not word.startswith("-") or word == "-" or _is_number(word):
            continue
        flag = word.split("=", 1)[0]
        near = close_to(flag, options)
        if near:
            guesses.append(f"{flag}: did you mean {near}?")
    listed = "; ".join(guesses) if guesses else f"`{parser.prog} --help` lists the options"
    return f"unrecognized arguments: {' '.join(extras)} ({listed})"


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True
