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
    "cli": {"model", "units", "errors", "cpus", "version", "disk", "env", "catalog", "plan", "server", "driver", "metrics", "store",
            "runner", "analysis", "results", "report", "cluster"},
    "__main__": {"cli"},
    "__init__": set(),
}


ROLES = {"results": "results", "report": "report"}
"""workloads/<name>/<role>.py belongs to the layer of its role; a package's __init__ to none."""


def layer_of(path: Path) -> str:
    rel = path.relative_to(PKG)
    if rel.parts[0] == "workloads":
        return ROLES.get(rel.stem, "__init__")
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def module_layer(parts: list[str]) -> str:
    """The layer of module dbdrift.<parts> (a workload's role module: its role's layer)."""
    return ROLES.get(parts[-1], parts[0]) if parts[0] == "workloads" else parts[0]


def imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dbdrift"):
            parts = node.module.split(".")
            if len(parts) == 3 and parts[1] == "workloads":  # from dbdrift.workloads.<name> import <role>
                found.update(module_layer([*parts[1:], alias.name]) for alias in node.names)
            elif len(parts) > 1:
                found.add(module_layer(parts[1:]))
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dbdrift."):
                    found.add(module_layer(alias.name.split(".")[1:]))
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
