"""The one version of dbdrift: the package metadata, which maturin takes from the driver's
Cargo.toml, so the package, the driver and every report say the same."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dbdrift")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
