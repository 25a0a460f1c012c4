"""Ctrl-C and SIGTERM at the edges of a command (docs/faults.md): while its modules load, and what
an interrupted campaign says it was stopped by. None starts a server."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, cli_env

# A module of the command's imports that takes its time, as every import does on a loaded host:
# it says when it starts, then waits, so the signal lands inside the imports every time.
SLOW_IMPORT = "import sys, time\nprint('importing', flush=True)\ntime.sleep(60)\n"

ENTRY_POINTS = {"python -m dbdrift": ["-m", "dbdrift"],
                "the installed script": [str(ROOT / "packaging" / "dbdrift.data" / "scripts" / "dbdrift")]}


@pytest.mark.fault("kill")
@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=["module", "script"])
def test_ctrl_c_while_the_modules_load_exits_130_without_a_traceback(tmp_path: Path, entry: str):
    (tmp_path / "psutil").mkdir()
    (tmp_path / "psutil" / "__init__.py").write_text(SLOW_IMPORT)  # imported on the way to every verb
    env = cli_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc = subprocess.Popen([sys.executable, *ENTRY_POINTS[entry], "catalog"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline() == "importing\n"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr == ""
