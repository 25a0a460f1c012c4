"""The one user-facing error type. `cli.main` catches it once and prints `error:` + `hint:`.

Anything that is not a UserError is a bug in dbdrift and is allowed to show a traceback. Beside
it, what a KeyboardInterrupt stands for: Ctrl-C, or a SIGTERM that took Ctrl-C's path.
"""
from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix: bad input, missing binary, port in use, server crash.

    `message` names what failed and on which object; `hint` says which flag, file or
    command changes it. `exit_code` is 1, or 2 for input refused before measuring (InputError).
    """

    def __init__(self, message: str, hint: str = "", exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


class InputError(UserError):
    """Input refused before anything is measured: a command-line value, a campaign file or key,
    a test, target, campaign, engine or version that does not exist. Exit status 2, so a script
    tells a typo from a measurement that failed (1)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message, hint, exit_code=2)


class ServerError(UserError):
    """A server failed to initialize, start, or died while a run was in progress."""

    log_tail: str | None = None  # the end of the server's log, stored with the failed run


class DriverError(UserError):
    """The load driver reported a fatal error or exited without a summary."""


_stopped_by = ["Ctrl-C"]  # what the KeyboardInterrupt in flight stands for (interrupted_by)


def stopped_by(signal_name: str) -> None:
    """Record that a KeyboardInterrupt about to be raised stands for `signal_name` ("SIGTERM":
    server/base.py sigterm_as_ctrl_c), so what is stored and said names it, not Ctrl-C."""
    _stopped_by[0] = signal_name


def interrupted_by() -> str:
    """What stopped the process: "Ctrl-C" unless a signal was recorded with stopped_by."""
    return _stopped_by[0]


def interrupted_error() -> str:
    """The error stored with a run, step or repeat an interruption cut short."""
    cause = interrupted_by()
    return "interrupted by the user (Ctrl-C)" if cause == "Ctrl-C" else f"interrupted by {cause}"
