"""A bare Debian bookworm root (debootstrap minbase + python3) for checking that dbdrift works from
`pip install` of the checkout alone, without the apt packages ./dev installs; runs commands in it."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

SUITE, MIRROR = "bookworm", "https://deb.debian.org/debian"
INCLUDE = "python3,python3-venv,ca-certificates"
MARKER = ".barehost-complete"  # written last: a root without it is unfinished and is made anew
VENV = Path("/opt/dbdrift-venv")  # inside the root
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What ./dev or a server needs from apt and a bare host must lack: file names, and dpkg package-name prefixes.
FOREIGN_FILES = {"libaio.so.1", "libaio.so.1t64", "libnuma.so.1", "libncurses.so.5", "mariadbd", "mysqld",
                 "mariadb", "mysql", "sysbench", "valgrind", "perf", "postgres", "psql"}
FOREIGN_PACKAGES = ("libaio", "libnuma", "libncurses5", "mariadb", "mysql", "sysbench", "valgrind",
                    "linux-perf", "postgresql")


def make_root(path: Path) -> Path:
    """Debootstrap a minimal bookworm root at `path`, or reuse a complete one; prints time and size."""
    path = Path(path)
    if (path / MARKER).exists():
        return path
    if path.exists():  # an unfinished root: remove it, but never through a live mount
        if mounts_under(path):
            raise RuntimeError(f"mounts under unfinished root {path}: {mounts_under(path)}")
        shutil.rmtree(path)
    if not shutil.which("debootstrap"):
        _run(["apt-get", "update", "-qq"])
        _run(["apt-get", "install", "-y", "-qq", "debootstrap"],
             env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # In a private mount namespace, so the /proc and /sys debootstrap mounts die with it even on failure.
    _run(["unshare", "--mount", "--propagation", "private", "debootstrap", "--variant=minbase",
          f"--include={INCLUDE}", SUITE, str(path), MIRROR], timeout=1800)
    seconds = time.monotonic() - start
    _run(["chroot", str(path), "apt-get", "clean"])
    print(f"barehost: debootstrap {SUITE} took {seconds:.0f} s; root is {du_mib(path):.0f} MiB", file=sys.stderr)
    (path / MARKER).write_text(f"{SUITE} {INCLUDE} {seconds:.0f}s\n")
    return path


def foreign_packages_absent(root: Path, besides: tuple[str, ...] = ()) -> list[str]:
    """What the bare root wrongly holds: files such as libaio.so.1, and dpkg packages such as
    mariadb-*; directories `besides` (relative to the root, e.g. dbdrift's cache) not looked in."""
    found = []
    skipped = {Path(root) / b for b in besides}
    status = Path(root) / "var/lib/dpkg/status"
    if status.exists():
        for line in status.read_text(errors="replace").splitlines():
            name = line.partition("Package: ")[2].strip()
            if line.startswith("Package: ") and name.startswith(FOREIGN_PACKAGES):
                found.append(f"package {name}")
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == Path(root):
            dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev", "tmp")]
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) not in skipped]
        found += [f"file {Path(dirpath, f).relative_to(root)}" for f in filenames if f in FOREIGN_FILES]
    return sorted(found)


def build_wheel(checkout: Path, out_dir: Path) -> Path:
    """Build the checkout's wheel (maturin backend, Rust driver included) into `out_dir`; returns the .whl."""
    checkout, out_dir = Path(checkout), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("dbdrift-*.whl"):
        old.unlink()
    env = {**os.environ, "PATH": f"{Path.home() / '.cargo/bin'}:{os.environ.get('PATH', PATH)}"}
    maturin = checkout / ".venv/bin/maturin"
    python = checkout / ".venv/bin/python"
    if maturin.exists():
        argv = [str(maturin), "build", "--release", "--out", str(out_dir), "-m", str(checkout / "pyproject.toml")]
    else:  # pip fetches maturin into an isolated build environment
        argv = [str(python if python.exists() else sys.executable), "-m", "pip", "wheel", "--no-deps", "-q",
                "-w", str(out_dir), str(checkout)]
    start = time.monotonic()
    _run(argv, env=env, timeout=1800)
    wheels = list(out_dir.glob("dbdrift-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one dbdrift wheel in {out_dir}, found {wheels}")
    print(f"barehost: wheel {wheels[0].name} built in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return wheels[0]


def install_wheel(root: Path, wheel: Path) -> Path:
    """pip install `wheel` into a fresh venv inside the root; returns the `dbdrift` command's path there."""
    root, wheel = Path(root), Path(wheel)
    # The host's network settings, so pip reaches PyPI from inside: DNS, and locally added CAs (a TLS proxy's).
    shutil.copyfile("/etc/resolv.conf", root / "etc/resolv.conf")
    local_cas = Path("/usr/local/share/ca-certificates")
    if local_cas.is_dir():
        shutil.copytree(local_cas, root / local_cas.relative_to("/"), dirs_exist_ok=True)
        _check(run_in_root(root, ["update-ca-certificates"]))
    inbox = root / "opt/wheels"
    shutil.rmtree(inbox, ignore_errors=True)
    inbox.mkdir(parents=True)
    shutil.copy2(wheel, inbox / wheel.name)
    start = time.monotonic()
    _check(run_in_root(root, ["python3", "-m", "venv", "--clear", str(VENV)]))
    _check(run_in_root(root, [str(VENV / "bin/pip"), "install", "-q", "--disable-pip-version-check",
                              f"/opt/wheels/{wheel.name}"], timeout=900))
    print(f"barehost: venv and pip install took {time.monotonic() - start:.0f} s", file=sys.stderr)
    command = VENV / "bin/dbdrift"
    if not (root / command.relative_to("/")).exists():
        raise RuntimeError(f"{command} missing in {root} after pip install")
    return command


def run_in_root(root: Path, argv: list[str], env: dict | None = None, binds: dict[Path, Path] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess:
    """Run argv chrooted into `root` with /proc, /sys, /dev, a tmpfs /tmp and `binds` (host -> inside).

    All mounts live in a private mount and PID namespace: they vanish with its last process, which
    dies with us, also on a timeout. The host's /proc/mounts is checked afterwards regardless."""
    root = Path(root).resolve()
    q = shlex.quote(str(root))
    steps = [f"mount --rbind /dev {q}/dev", f"mount --rbind /sys {q}/sys", f"mount -t tmpfs tmpfs {q}/tmp"]
    for host, inside in (binds or {}).items():
        target = shlex.quote(f"{root}/{str(inside).lstrip('/')}")
        steps += [f"mkdir -p {target}" if Path(host).is_dir() else f"touch {target}",
                  f"mount --bind {shlex.quote(str(host))} {target}"]
    script = " && ".join(steps) + f" && exec chroot {q} " + shlex.join(map(str, argv))
    full_env = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", **(env or {})}
    try:
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child",
                               f"--mount-proc={root}/proc", "sh", "-c", script],
                              capture_output=True, text=True, env=full_env, timeout=timeout)
    finally:
        leaked = mounts_under(root)
        for mount in reversed(leaked):
            subprocess.run(["umount", "-l", mount], check=False)
        if leaked:
            raise RuntimeError(f"mounts left under {root} (lazily unmounted): {leaked}")


def mounts_under(root: Path) -> list[str]:
    """Mount points in the host's /proc/mounts at or below `root`."""
    prefix = str(Path(root).resolve())
    points = [line.split()[1].replace("\\040", " ") for line in Path("/proc/mounts").read_text().splitlines()]
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


def du_mib(path: Path) -> float:
    """Disk use of a tree in MiB, as `du -sk` counts it."""
    return int(subprocess.run(["du", "-sk", "-x", str(path)], capture_output=True, text=True).stdout.split()[0]) / 1024


def _run(argv: list[str], env: dict | None = None, timeout: float = 600) -> None:
    _check(subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout))


def _check(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(map(str, proc.args))} exited {proc.returncode}:\n"
                           f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc
