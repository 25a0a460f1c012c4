"""Flamegraph capture: `perf record -g` on server backends during a run, `perf script`, and the
collapse of its samples into folded stacks. A flamegraph is optional, so perf failures never raise.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Iterable, Mapping

# Fields that carry one call chain per sample; perf 6.1 accepts all of them for cpu-clock.
SCRIPT_FIELDS = "comm,pid,tid,time,event,ip,sym,symoff,dso"
STOP_GRACE_S = 30.0  # after `sleep` ends or SIGINT, perf still writes the file and build ids
SCRIPT_TIMEOUT_S = 600.0

_HEADER = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<pid>-?\d+)(?:/-?\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")


def record_command(pids: list[int], seconds: float, out: Path, event: str = "cpu-clock",
                   freq_hz: int = 333, *, perf: str = "perf") -> list[str]:
    """`perf record` sampling call chains of `pids` for `seconds`, written to `out`."""
    if not pids:
        raise ValueError("record_command: no pid to record")
    if seconds <= 0 or freq_hz <= 0:
        raise ValueError(f"record_command: seconds ({seconds}) and freq_hz ({freq_hz}) must be > 0")
    return [perf, "record", "-e", event, "-F", str(freq_hz), "-g", "-o", str(out),
            "-p", ",".join(str(p) for p in pids), "--", "sleep", f"{seconds:.3f}".rstrip("0").rstrip(".")]


def script_command(perf_data: Path, *, perf: str = "perf") -> list[str]:
    """`perf script` printing each sample as a header line and one line per stack frame."""
    return [perf, "script", "-i", str(perf_data), "-F", SCRIPT_FIELDS]


class FlameRecorder:
    """One background `perf record` of server backends. `start` never blocks; `stop` returns
    (perf.data path, "") or (None, reason). Neither raises when perf is missing or fails."""

    def __init__(self, perf: str = "perf", event: str = "cpu-clock", freq_hz: int = 333) -> None:
        self.perf, self.event, self.freq_hz = perf, event, freq_hz
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._out: Path | None = None
        self._deadline = 0.0
        self._reason = "not started"

    def start(self, pids: list[int], seconds: float, out: Path) -> bool:
        """Launch perf record; False (reason kept for `stop`) if it could not be launched."""
        cmd = record_command(pids, seconds, out, self.event, self.freq_hz, perf=self.perf)
        self._out = Path(out)
        self._out.unlink(missing_ok=True)  # a stale file must not pass for this recording
        self._stderr = tempfile.TemporaryFile()
        try:
            # Own process group: SIGINT in `stop` must reach perf and its `sleep` together.
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=self._stderr, start_new_session=True)
        except OSError as exc:
            self._reason = f"could not run {self.perf}: {exc.strerror or exc}"
            self._proc = None
            self._stderr.close()
            self._stderr = None
            return False
        self._deadline = time.monotonic() + seconds
        self._reason = ""
        return True

    def stop(self, timeout_s: float | None = None) -> tuple[Path | None, str]:
        """Wait until the recording ends by itself (at most `timeout_s`, default: what is left of
        its duration plus a grace period), else SIGINT it so perf writes what it has."""
        proc = self._proc
        if proc is None:
            return None, self._reason
        self._proc = None
        if timeout_s is None:
            timeout_s = max(0.0, self._deadline - time.monotonic()) + STOP_GRACE_S
        if not _wait(proc, timeout_s):
            _await_file(proc, self._out, STOP_GRACE_S)
            _signal_group(proc, signal.SIGINT)
            if not _wait(proc, STOP_GRACE_S):
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
                return None, f"{self.perf} record did not stop after SIGINT; killed"
        return self._result(proc.returncode)

    def _result(self, returncode: int) -> tuple[Path | None, str]:
        # perf exits 143 when a single target exits early (it SIGTERMs its `sleep`) yet the
        # file is complete, so the file decides success, not the exit code.
        out = self._out
        if out is not None and out.is_file() and out.stat().st_size > 0:
            return out, ""
        return None, f"{self.perf} record exited {returncode}: {self._stderr_tail()}"

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [ln.strip() for ln in self._stderr.read().decode(errors="replace").splitlines()]
        self._stderr.close()
        self._stderr = None
        return " | ".join(ln for ln in lines if ln)[-300:] or "no message"


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    try:
        proc.wait(timeout=timeout_s)
        return True
    except subprocess.TimeoutExpired:
        return False


def _await_file(proc: subprocess.Popen[bytes], out: Path | None, timeout_s: float) -> None:
    """Until perf has created its file (or exited): only then does it handle SIGINT by writing
    what it has. Before that, SIGINT kills it without a file, which a loaded host turns from a
    few milliseconds into seconds."""
    deadline = time.monotonic() + timeout_s
    while out is not None and not out.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def collapse_perf_script(text: str, include_comm: bool = True,
                         names: Mapping[int, str] | None = None) -> dict[str, int]:
    """`perf script` text -> {"comm;outermost;...;innermost": samples}. See `collapse_lines`."""
    return collapse_lines(text.splitlines(), include_comm, names)


def collapse_lines(lines: Iterable[str], include_comm: bool = True,
                   names: Mapping[int, str] | None = None) -> dict[str, int]:
    """The stackcollapse-perf algorithm: a sample is a header line (comm pid/tid time: event:)
    then one frame per line, innermost first (`<addr> <sym>+0x<off> (<dso>)`), ended by a blank
    line. Offsets are dropped, `;` in names becomes `:`, spaces in comm become `_`; a frame or
    sample without a symbol counts as `[unknown]`, and a run of them is one frame (frame-pointer
    walks through code built without frame pointers can repeat it hundreds of times, which only
    makes the graph tall). Each sample counts 1, whatever its period. `names`: a comm per
    process id, for the samples of those processes (the driver's, model.FLAME_CLIENT)."""
    folded: dict[str, int] = {}
    comm: str | None = None
    frames: list[str] = []

    def flush() -> None:
        stack = [f for i, f in enumerate(frames[::-1]) if f != "[unknown]" or i == 0 or frames[::-1][i - 1] != f]
        stack = stack or ["[unknown]"]
        if include_comm:
            stack.insert(0, comm or "[unknown]")
        key = ";".join(stack)
        folded[key] = folded.get(key, 0) + 1

    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.startswith("#"):
            continue
        if not line.strip():
            if comm is not None:
                flush()
            comm, frames = None, []
        elif comm is not None and line[0] in " \t":
            frames.append(_frame_name(line))
        else:
            if comm is not None:
                flush()
            comm, frames = _header_comm(line, names), []
    if comm is not None:
        flush()
    return folded


def _header_comm(line: str, names: Mapping[int, str] | None = None) -> str:
    match = _HEADER.match(line)
    if match and names and int(match.group("pid")) in names:
        return names[int(match.group("pid"))]
    comm = match.group("comm") if match else line.split()[0]
    return comm.strip().replace(" ", "_").replace(";", ":")


def _frame_name(line: str) -> str:
    parts = line.strip().split(None, 1)
    rest = parts[1] if len(parts) > 1 else ""
    if rest.endswith(")"):  # drop the trailing "(dso)"; symbols may hold parentheses too
        depth = 0
        for i in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[i], 0)
            if depth == 0:
                rest = rest[:i] if i == 0 or rest[i - 1] == " " else rest
                break
    name = _OFFSET.sub("", rest.strip())
    return name.replace(";", ":") or "[unknown]"


def collapse_file(perf_data: Path, include_comm: bool = True, *, perf: str = "perf",
                  timeout_s: float = SCRIPT_TIMEOUT_S,
                  names: Mapping[int, str] | None = None) -> tuple[dict[str, int], str]:
    """Run `perf script` on `perf_data` and collapse its output, streamed: (folded, "") or
    ({}, why): perf missing or failing (its exit code and last words), running longer than
    `timeout_s`, or a recording without samples."""
    env = dict(os.environ, DEBUGINFOD_URLS="")  # never wait on the network for symbols
    stderr = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(script_command(perf_data, perf=perf), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=stderr, env=env,
                                text=True, errors="replace")
    except OSError as exc:
        stderr.close()
        return {}, f"could not run {perf} script: {exc.strerror or exc}"
    late = threading.Event()

    def stop_late() -> None:
        late.set()
        proc.kill()

    timer = threading.Timer(timeout_s, stop_late)
    timer.start()
    assert proc.stdout is not None  # opened with stdout=PIPE
    try:
        with proc.stdout:
            folded = collapse_lines(proc.stdout, include_comm, names)
        returncode = proc.wait()
    finally:
        timer.cancel()
    with stderr:
        stderr.seek(0)
        words = " | ".join(ln.strip() for ln in stderr.read().decode(errors="replace").splitlines() if ln.strip())
    if late.is_set():
        return {}, f"{perf} script ran longer than {timeout_s:g} s; stopped"
    if returncode != 0:
        return {}, f"{perf} script exited {returncode}: {words[-300:] or 'no message'}"
    return (folded, "") if folded else ({}, f"the recording holds no samples ({perf_data.stat().st_size} bytes)")
