"""The folder layout is the data flow: each layer imports only the layers before it (style.md)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "dbdrift"
BASE = {"model", "units", "errors", "cpus", "version", "disk"}
ALLOWED = {
    "cpus": {"errors"},
    "model": {"errors", "units"},
    "units": {"errors"},
    "errors": set(),
    "version": set(),
    "disk": set(),
    "env": BASE,
    "catalog": BASE,
    "plan": BASE | {"catalog"},
    "server": BASE | {"catalog", "plan", "env"},
    "driver": BASE | {"catalog", "plan"},
    "metrics": BASE,
    "store": BASE,
    "runner": BASE | {"catalog", "plan", "server", "driver", "metrics", "store", "env", "analysis"},
    "analysis": {"model", "units"},
    "results": BASE | {"catalog", "store", "analysis"},
    "report": {"analysis", "model", "units", "version", "results"},
    "cluster": BASE | {"catalog", "plan", "server", "store", "env", "runner"},
    "app": BASE | {"env", "catalog", "plan", "server", "driver", "metrics", "store", "runner", "analysis", "results",
                   "report", "cluster"},
    "cli": {"app", "model", "units", "errors", "cpus", "version", "disk", "env", "catalog", "plan", "server", "driver", "metrics", "store",
            "runner", "analysis", "results", "report", "cluster"},
    "__main__": {"cli"},
    "__init__": set(),
}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dbdrift"):
            parts = node.module.split(".")
            if len(parts) > 1:
                found.add(parts[1])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dbdrift."):
                    found.add(alias.name.split(".")[1])
    return found


def test_every_module_imports_only_earlier_layers():
    violations = []
    for path in sorted(PKG.rglob("*.py")):
        layer = layer_of(path)
        bad = imported_layers(path) - ALLOWED[layer] - {layer}
        if bad:
            violations.append(f"{path.relative_to(PKG)} imports {sorted(bad)}")
    assert violations == []


def test_nothing_outside_cli_imports_cli():
    offenders = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                 if layer_of(p) not in ("cli", "__main__") and "cli" in imported_layers(p)]
    assert offenders == []
