"""The folder layout is the data flow: each layer imports only the layers before it (style.md)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "dbdrift"
BASE = {"model", "quantities", "errors", "cpus", "version", "disk", "workload", "origin"}
ALLOWED = {
    "cpus": {"errors"},
    "model": {"errors", "quantities"},
    "quantities": {"errors"},
    "errors": set(),
    "version": set(),
    "origin": set(),  # where dbdrift was installed from: every install hint
    "disk": set(),
    "workload": set(),
    "env": BASE,
    "catalog": BASE,
    "plan": BASE | {"catalog"},
    "server": BASE | {"catalog", "plan", "env"},
    "driver": BASE | {"catalog", "plan"},
    "metrics": BASE,
    "store": BASE,
    "runner": BASE | {"catalog", "plan", "server", "driver", "metrics", "store", "env", "analysis"},
    "analysis": {"model", "quantities"},
    "results": BASE | {"catalog", "store", "analysis"},
    "report": {"analysis", "model", "quantities", "version", "origin", "results"},  # origin: its install hints
    "cluster": BASE | {"catalog", "plan", "server", "store", "env", "runner"},
    # the workload registry assembles every slice's parts, so it sits above every layer they belong to
    "workloads": BASE | {"env", "catalog", "plan", "server", "driver", "metrics", "store", "runner", "analysis",
                        "results", "report", "cluster"},
    # a use case: what a verb does, below the command line that parses and prints it
    "app": BASE | {"env", "catalog", "plan", "server", "driver", "metrics", "store", "runner", "analysis", "results",
                   "report", "cluster", "workloads"},
    "cli": {"app", "report", "errors"},
    "__main__": {"cli"},
    "__init__": set(),
}


# A workload's sub-package (workloads/<name>/) holds one file per role, each in the layer of its role: a
# data set it makes (vector search's vectors and their exact neighbours) is the runner's, a pure computation
# on its results (recall against QPS) the analysis layer's, the rows of its campaign table (keys.py) the plan
# layer's. The runner's parts of a workload that does more than run.py holds are the runner's too: its steps
# on one server (session.py, on runner/session.py's TargetSession), its SQL on each engine (dialect.py, on
# runner/dialect.py's), the targets taking turns inside one driver run (turns.py) and the instruction
# counts under callgrind (instructions.py).
ROLES = {"catalog": "catalog", "plan": "plan", "run": "runner", "cluster": "cluster", "results": "results",
         "report": "report", "dataset": "runner", "curve": "analysis", "keys": "plan", "session": "runner",
         "dialect": "runner", "turns": "runner", "instructions": "runner"}


def module_layer(parts: list[str]) -> str:
    """The layer of the module dbdrift.<parts...>: its top package, or for a workload slice its role."""
    if parts[0] != "workloads":
        return parts[0]
    if len(parts) == 1 or parts[1] == "__init__":
        return "__init__"
    if parts[1] == "registry":
        return "workloads"
    if len(parts) == 2 or parts[2] == "__init__":
        return "__init__"
    return ROLES[parts[2]]


CLI = PKG / "cli"
# Shared command-line helpers: every verb may import them; they import no verb.
CLI_HELPERS = {"options", "progress"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    return module_layer(list(rel.parts))


def imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dbdrift"):
            parts = node.module.split(".")[1:]
            if parts and (parts[0] != "workloads" or len(parts) > 2 or parts[-1] == "registry"):
                found.add(module_layer(parts))
            else:  # from dbdrift import model; from dbdrift.workloads(.<name>) import <role or slice>
                found.update(module_layer([*parts, alias.name]) for alias in node.names
                             if parts or alias.name != "workloads")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dbdrift."):
                    found.add(module_layer(alias.name.split(".")[1:]))
    return found


def test_every_module_imports_only_earlier_layers():
    violations = []
    for path in sorted(PKG.rglob("*.py")):
        layer = layer_of(path)
        bad = imported_layers(path) - ALLOWED[layer_of(path)] - {layer, "__init__"}
        if bad:
            violations.append(f"{path.relative_to(PKG)} imports {sorted(bad)}")
    assert violations == []


def test_a_workload_role_file_sits_in_the_layer_of_its_role():
    slices = PKG / "workloads"
    assert layer_of(slices / "ibench" / "catalog.py") == "catalog"
    assert layer_of(slices / "tpcc" / "run.py") == "runner"
    assert layer_of(slices / "sysbench" / "plan.py") == "plan"
    assert layer_of(slices / "registry.py") == "workloads"
    # every file of a slice is one of the roles (module_layer raises KeyError on any other name)
    assert {layer_of(p) for p in slices.glob("*/*.py")} <= set(ROLES.values()) | {"__init__"}


def test_nothing_outside_cli_imports_cli():
    offenders = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                 if layer_of(p) not in ("cli", "__main__") and "cli" in imported_layers(p)]
    assert offenders == []


WORKLOAD_NAMES = {"sysbench", "insert-benchmark", "tpcc"}
# where a workload's name may still be compared: the registry and the slices themselves
NAMED_HERE = ("workloads/",)


def _names_a_workload(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in WORKLOAD_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_workload(e) for e in node.elts)
    return False


def _is_workload_attr(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "workload"


def workload_switches(tree: ast.AST) -> list[int]:
    """Lines comparing a workload name: a Compare with a workload-name constant on either side,
    or a `.workload` compared to anything."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_a_workload(s) or _is_workload_attr(s) for s in sides):
                lines.append(node.lineno)
    return lines


def test_the_switch_finder_sees_the_forms_a_workload_test_takes():
    code = ('a = spec.workload == "tpcc"\nb = "sysbench" != kind\nc = args.workload in ("tpcc", "sysbench")\n'
            'd = w.workload is other\ne = spec.order == "turns"\nf = name in WORKLOADS\n'
            'g = workload not in key.workloads\n')
    assert workload_switches(ast.parse(code)) == [1, 2, 3, 4]


def test_no_module_outside_the_workload_slices_compares_a_workload_name():
    found = {str(path.relative_to(PKG)): workload_switches(ast.parse(path.read_text()))
             for path in sorted(PKG.rglob("*.py")) if not str(path.relative_to(PKG)).startswith(NAMED_HERE)}
    assert [f"{name}:{lines}" for name, lines in found.items() if lines] == []


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
                 if imported_cli_modules(p) - CLI_HELPERS]
    assert offenders == []


def test_cli_helpers_import_no_verb():
    offenders = [p.stem for p in sorted(CLI.glob("*.py")) if p.stem in CLI_HELPERS
                 and imported_cli_modules(p) - CLI_HELPERS]
    assert offenders == []


def test_the_verb_import_finder_sees_each_form_of_import(tmp_path):
    """Every way a module names a cli/ module counts, so a verb reaching another cannot hide."""
    module = tmp_path / "verb.py"
    module.write_text("from dbdrift.cli import run, options\nfrom dbdrift.cli.report import render\n"
                      "import dbdrift.cli.demo\nfrom dbdrift.app import report\n")
    assert imported_cli_modules(module) == {"run", "options", "report", "demo"}


def test_no_use_case_imports_a_workload_slice_but_through_the_registry():
    """app/ is handed each workload by the registry (workloads/registry.py, the composition root):
    no module of it imports a slice's module, at the top, under TYPE_CHECKING or in a function, so
    what a verb asks of a workload is a hook of its Workload, not sysbench's catalogue or sequence."""
    def slices_named(tree: ast.AST) -> list[str]:
        found = []
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            found += [n for n in names if n.startswith("dbdrift.workloads.")
                      and not n.startswith("dbdrift.workloads.registry")]
        return found

    assert slices_named(ast.parse("def f():\n    from dbdrift.workloads import sysbench\n")) == \
        ["dbdrift.workloads.sysbench"]  # the finder sees a function-local import of a slice by its package
    offenders = {p.name: slices_named(ast.parse(p.read_text())) for p in sorted((PKG / "app").rglob("*.py"))}
    assert {name: found for name, found in offenders.items() if found} == {}
