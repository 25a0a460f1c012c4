"""`python -m dbdrift` is the `dbdrift` command (the installed script calls load_main too).

Ctrl-C while the command line's modules load (about 0.6 s; nothing has started yet) ends the
process quietly with 130, as Ctrl-C does later, instead of a traceback from inside an import."""
from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType


def load_main() -> Callable[[], int]:
    """Import the command line and return its main. A SIGINT while importing exits at once: a
    handler, not `except KeyboardInterrupt`, so that no library's own except clause can swallow
    it. An ignored SIGINT (a background job of a script) stays ignored."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        from dbdrift.cli.main import main
        return main
    signal.signal(signal.SIGINT, _exit_interrupted)
    try:
        from dbdrift.cli.main import main
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return main


def _exit_interrupted(_signum: int, _frame: FrameType | None) -> None:
    os._exit(130)  # nothing to store or stop yet, and nothing written that needs flushing


if __name__ == "__main__":
    sys.exit(load_main()())
