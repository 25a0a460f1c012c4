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
    "cli": {"app", "report", "errors"},
    "__main__": {"cli"},
    "__init__": set(),
}


CLI = PKG / "cli"
# Shared command-line helpers: every verb may import them; they import no verb.
CLI_HELPERS = {"options", "progress"}
# Verbs whose services still live in cli/ (they import the layers below, and each other, directly);
# the set only shrinks: a verb leaves it when its use case moves to app/.
NOT_YET_CONVERTED = {"run", "check", "demo", "campaigns", "report", "ibench_report"}
UNCONVERTED_ALLOWED = ALLOWED["app"] | {"app"}


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


def allowed_for(path: Path) -> set[str]:
    if path.parent == CLI and path.stem in NOT_YET_CONVERTED:
        return UNCONVERTED_ALLOWED
    return ALLOWED[layer_of(path)]


def test_every_module_imports_only_earlier_layers():
    violations = []
    for path in sorted(PKG.rglob("*.py")):
        layer = layer_of(path)
        bad = imported_layers(path) - allowed_for(path) - {layer}
        if bad:
            violations.append(f"{path.relative_to(PKG)} imports {sorted(bad)}")
    assert violations == []


def test_nothing_outside_cli_imports_cli():
    offenders = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                 if layer_of(p) not in ("cli", "__main__") and "cli" in imported_layers(p)]
    assert offenders == []


def imported_cli_modules(path: Path) -> set[str]:
    """The cli/ modules `path` imports (`from dbdrift.cli import run`, `from dbdrift.cli.run import x`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "dbdrift.cli":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dbdrift.cli."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("dbdrift.cli."))
    return found


def verb_modules() -> list[Path]:
    return [p for p in sorted(CLI.glob("*.py")) if p.stem not in CLI_HELPERS | {"__init__", "main"}]


def test_no_verb_imports_another_verb():
    """A verb parses, calls its use case in app/ and prints; what two verbs share is a use case or
    a helper (cli/options.py, cli/progress.py), so no verb depends on another's flags or output."""
    offenders = [f"{p.stem} imports {sorted(imported_cli_modules(p) - CLI_HELPERS)}" for p in verb_modules()
                 if p.stem not in NOT_YET_CONVERTED and imported_cli_modules(p) - CLI_HELPERS]
    assert offenders == []


def test_cli_helpers_import_no_verb():
    offenders = [p.stem for p in sorted(CLI.glob("*.py")) if p.stem in CLI_HELPERS
                 and imported_cli_modules(p) - CLI_HELPERS]
    assert offenders == []


def test_the_not_yet_converted_verbs_exist():
    """The exemption names real verbs, so a converted or renamed one is taken off the set, not forgotten."""
    assert NOT_YET_CONVERTED <= {p.stem for p in verb_modules()}
