"""The Debian file formats dbdrift reads, pure: Release and Packages indexes, package versions
in dpkg's order, the library closure of a package, and .deb archives (ar holding tar), which
are unpacked without dpkg. No network; debian.py fetches what these read.
"""
from __future__ import annotations

import gzip
import io
import lzma
import os
import re
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dbdrift.errors import UserError
from dbdrift.origin import package_hint
from dbdrift.server import untar

_SKIPPED = re.compile(r"^usr/share/(doc|man|info|lintian|locale|bug|bash-completion)/")
_DIGITS, _NON_DIGITS = re.compile(r"\d*"), re.compile(r"\D*")


def _lead(pattern: re.Pattern[str], text: str) -> str:
    """The run of `text`'s start that `pattern` (which matches the empty string) takes."""
    match = pattern.match(text)
    return match.group(0) if match else ""

@dataclass
class Release:
    """What a suite's InRelease says: its date, and the SHA256 and size of each index file."""

    suite: str
    date: str
    valid_until: str
    files: dict[str, tuple[str, int]]
    signature: str  # "verified by gpgv (<key>)" or "not verified: <why>"
    names: tuple[str, ...] = ()  # what the file calls its suite: its Suite and Codename ("stable", "trixie")


@dataclass
class Package:
    name: str
    version: str
    filename: str
    sha256: str
    size: int
    depends: str = ""
    provides: list[str] = field(default_factory=list)

def upstream_version(deb_version: str) -> str:
    """"1:11.8.9+ds-4" -> "11.8.9"; "19~rc1-1" -> "19rc1"; "17.12-0+deb13u1" -> "17.12"."""
    version = deb_version.split(":", 1)[-1]
    if "-" in version:
        version = version.rsplit("-", 1)[0]
    version = version.split("+", 1)[0]
    return version.replace("~", "")

# --- parsing (pure) -----------------------------------------------------------------------


def parse_release(suite: str, text: bytes, signature: str) -> Release:
    """The fields of a (clearsigned) Release file that dbdrift uses."""
    body = text.decode("utf-8", "replace")
    if body.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        body = body.partition("\n\n")[2].partition("\n-----BEGIN PGP SIGNATURE-----")[0]
    fields = _fields(body)
    files = {}
    for line in fields.get("SHA256", "").splitlines():
        parts = line.split()
        if len(parts) == 3 and re.fullmatch(r"[0-9a-f]{64}", parts[0]) and parts[1].isdigit():
            files[parts[2]] = (parts[0], int(parts[1]))
    if not files:
        raise UserError(f"debian {suite}: InRelease lists no SHA256 files", "the mirror serves a damaged InRelease")
    names = tuple(fields[key] for key in ("Suite", "Codename") if fields.get(key))
    return Release(suite, fields.get("Date", ""), fields.get("Valid-Until", ""), files, signature, names)


def parse_packages(text: str) -> dict[str, Package]:
    """A Packages index as {name: Package}, the newest version of each name."""
    packages: dict[str, Package] = {}
    for stanza in text.split("\n\n"):
        if not stanza.strip():
            continue
        f = _fields(stanza)
        if "Package" not in f or "Filename" not in f or "SHA256" not in f:
            continue
        size = f.get("Size", "0")
        package = Package(f["Package"], f.get("Version", ""), f["Filename"], f["SHA256"], int(size) if size.isdigit() else 0,
                          ", ".join(x for x in (f.get("Pre-Depends", ""), f.get("Depends", "")) if x),
                          [p.split("(")[0].strip() for p in f.get("Provides", "").split(",") if p.strip()])
        old = packages.get(package.name)
        if old is None or _deb_newer(package.version, old.version):
            packages[package.name] = package
    return packages


def _deb_newer(a: str, b: str) -> bool:
    return compare_deb_versions(a, b) > 0


def compare_deb_versions(a: str, b: str) -> int:
    """dpkg's order of two package versions (epoch, then upstream, then revision, each
    compared as alternating non-digit and digit runs, `~` before anything): -1, 0 or 1."""
    def split(version: str) -> tuple[int, str, str]:
        epoch, _, rest = version.rpartition(":") if ":" in version else ("0", "", version)
        upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "0")
        return int(epoch or 0), upstream, revision

    def order(char: str) -> int:
        if char == "~":
            return -1
        return ord(char) if char.isalpha() else ord(char) + 256

    def part(x: str, y: str) -> int:
        while x or y:
            xs, ys = _lead(_NON_DIGITS, x), _lead(_NON_DIGITS, y)
            for cx, cy in zip(xs + "\0" * (len(ys) - len(xs)), ys + "\0" * (len(xs) - len(ys))):
                ox, oy = (0 if cx == "\0" else order(cx)), (0 if cy == "\0" else order(cy))
                if ox != oy:
                    return -1 if ox < oy else 1
            x, y = x[len(xs):], y[len(ys):]
            xd, yd = _lead(_DIGITS, x), _lead(_DIGITS, y)
            if int(xd or 0) != int(yd or 0):
                return -1 if int(xd or 0) < int(yd or 0) else 1
            x, y = x[len(xd):], y[len(yd):]
        return 0

    (ea, ua, ra), (eb, ub, rb) = split(a), split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return part(ua, ub) or part(ra, rb)


def _fields(stanza: str) -> dict[str, str]:
    """RFC 822-style fields; continuation lines (leading space) are joined with newlines."""
    fields: dict[str, str] = {}
    key = None
    for line in stanza.splitlines():
        if line.startswith((" ", "\t")) and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def is_library(name: str) -> bool:
    """Packages that ship shared libraries (Debian names them lib*; zlib is the exception)."""
    return name.startswith("lib") or name == "zlib1g"


def closure(index: dict[str, Package], seeds: list[str]) -> list[Package]:
    """The seed packages and, recursively, the library packages they depend on (first
    alternative the index has, directly or through Provides); non-library dependencies
    (debconf, perl, tzdata, common configuration packages) are not followed."""
    providers: dict[str, str] = {}
    for package in index.values():
        for provided in package.provides:
            providers.setdefault(provided, package.name)
    seen: dict[str, Package] = {}
    todo = list(seeds)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        if name not in index:
            raise UserError(f"debian package {name} is not in the suite's index",
                            "the suite changed while reading it; retry")
        seen[name] = index[name]
        for dependency in _dependencies(index[name].depends):
            chosen = next((alt if alt in index else providers[alt] for alt in dependency
                           if alt in index or alt in providers), None)
            if chosen is not None and is_library(chosen) and chosen not in seen:
                todo.append(chosen)
    return list(seen.values())


def _dependencies(field_text: str) -> list[list[str]]:
    """"a (>= 1) | b, c:any" -> [["a", "b"], ["c"]] (versions and architectures dropped)."""
    result = []
    for group in field_text.split(","):
        names = [re.split(r"[\s(:]", alt.strip(), 1)[0] for alt in group.split("|") if alt.strip()]
        if names:
            result.append(names)
    return result


# --- unpacking --------------------------------------------------------------------------


def unpack_deb(deb: Path, dest: Path) -> None:
    """A .deb is an ar archive; its data.tar.{xz,gz,zst} member is unpacked into `dest`
    (docs, manuals and translations left out; absolute symlinks made relative to `dest`)."""
    data, name = _ar_member(deb, "data.tar")
    opener: dict[str, Callable[[io.BytesIO], io.BufferedIOBase]] = {
        ".xz": lzma.LZMAFile, ".gz": lambda f: gzip.GzipFile(fileobj=f), "": lambda f: f}
    suffix = name[len("data.tar"):]
    stream: io.BufferedIOBase
    if suffix == ".zst":
        try:
            import zstandard
        except ImportError:
            raise UserError(f"{deb.name}: its data is zstd-compressed",
                            package_hint("zstandard", "dbdrift reads xz and gzip .debs without it"))
        stream = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
    elif suffix in opener:
        stream = opener[suffix](io.BytesIO(data))
    else:
        raise UserError(f"{deb.name}: unknown data member {name}", "report this")
    root = dest.resolve()
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            kept = _member_in(member, root)
            if kept is None:
                continue
            try:
                untar.extract(archive, untar.checked(kept, root), root)
            except untar.UnsafeMember as exc:
                raise UserError(f"{deb.name}: member {member.name} would land outside the build ({exc})",
                                "the package looks malformed; report it")


def _member_in(member: tarfile.TarInfo, root: Path) -> tarfile.TarInfo | None:
    name = _relative(member.name)
    if not name or _SKIPPED.match(name + ("/" if member.isdir() else "")):
        return None
    member = untar.changed(member, name=name)
    if member.islnk():
        member = untar.changed(member, linkname=_relative(member.linkname))
    if member.issym() and member.linkname.startswith("/"):
        target = root / member.linkname.lstrip("/")
        member = untar.changed(member, linkname=os.path.relpath(target, (root / name).parent))
    if member.ischr() or member.isblk() or member.isfifo():
        return None
    return member


def _relative(name: str) -> str:
    """A tar member name as dpkg-deb writes it ("./usr/bin/x") without its leading "./"."""
    while name.startswith(("./", "/")):
        name = name[2:] if name.startswith("./") else name[1:]
    return "" if name == "." else name


def _ar_member(path: Path, prefix: str) -> tuple[bytes, str]:
    """The first member of ar archive `path` whose name starts with `prefix`."""
    with path.open("rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise UserError(f"{path.name} is not a .deb (no ar header)", "the download is damaged; retry")
        while header := f.read(60):
            if len(header) < 60:
                break
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            body = f.read(size)
            if size % 2:
                f.read(1)
            if name.startswith(prefix):
                return body, name
    raise UserError(f"{path.name} has no {prefix}* member", "the download is damaged; retry")

# Sonames whose package is not named after them (Debian's library package naming otherwise).
SONAME_PACKAGES = {"libgcc_s.so.1": "libgcc-s1", "libz.so.1": "zlib1g", "libcrypto.so.1.1": "libssl1.1",
                   "libcrypto.so.3": "libssl3", "liblber-2.4.so.2": "libldap-2.4-2", "libtinfo.so.5": "libtinfo5"}

def package_for(soname: str, index: dict[str, Package]) -> str | None:
    """The library package that ships `soname`: libaio.so.1 -> libaio1 (or libaio1t64),
    liblz4.so.1 -> liblz4-1, libssl.so.1.1 -> libssl1.1."""
    if soname in SONAME_PACKAGES:
        names = [SONAME_PACKAGES[soname]]
    else:
        stem, _, number = soname.partition(".so.")
        stem = stem.replace("_", "-").lower()
        name = stem + ("-" if stem[-1:].isdigit() else "") + number
        names = [name]
    return next((n for base in names for n in (base, base + "t64") if n in index), None)
