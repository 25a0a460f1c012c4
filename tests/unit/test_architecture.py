"""The folder layout is the data flow: each layer imports only the layers before it, no module
imports itself back round a cycle, and no workload's name is tested outside its slice
(docs/contributing.md, "The layers, and why")."""
import ast
import graphlib
from pathlib import Path

from dbdrift.workloads.registry import WORKLOADS

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
# layer's, as is sysbench's campaign expanded into each target's steps (expand.py). The runner's parts of a
# workload that does more than run.py holds are the runner's too: its steps on one server (session.py, on
# runner/session.py's TargetSession), its SQL on each engine (dialect.py, on runner/dialect.py's), the targets
# taking turns inside one driver run (turns.py) and the instruction counts under callgrind (instructions.py).
# A role may be a package (sysbench's results/ and report/), each of its modules in the role's layer. The
# views of a report of cells (views.py: its results built, rendered and written, as the verbs shape it)
# compose the slice's results and report parts, so they sit where the registry does, above both.
ROLES = {"catalog": "catalog", "plan": "plan", "run": "runner", "cluster": "cluster", "results": "results",
         "report": "report", "dataset": "runner", "curve": "analysis", "keys": "plan", "session": "runner",
         "dialect": "runner", "turns": "runner", "instructions": "runner", "expand": "plan", "views": "workloads"}


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
    assert layer_of(slices / "sysbench" / "results" / "build.py") == "results"  # a role's package
    assert layer_of(slices / "sysbench" / "report" / "__init__.py") == "report"
    assert layer_of(slices / "sysbench" / "views.py") == "workloads"
    # every file of a slice is one of the roles, or in a role's package (module_layer raises KeyError on any
    # other name)
    assert {layer_of(p) for p in slices.glob("*/**/*.py")} <= set(ROLES.values()) | {"__init__"}


def test_nothing_outside_cli_imports_cli():
    offenders = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                 if layer_of(p) not in ("cli", "__main__") and "cli" in imported_layers(p)]
    assert offenders == []


def module_of(path: Path, package: Path = PKG) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str], package: Path = PKG) -> set[str]:
    """The dbdrift modules `path` imports wherever the import stands (top, under TYPE_CHECKING,
    inside a function): `from a.b import c` imports a.b.c when that is a module, else a.b."""
    own = module_of(path, package)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = own.split(".")[: len(own.split(".")) - node.level + (path.name == "__init__.py")] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names}
    return (found & modules) - {own}


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the import graph (its modules, the first repeated at the end), [] for none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return []


def test_the_import_finder_counts_type_checking_and_function_local_imports(tmp_path):
    (tmp_path / "dbdrift" / "plan").mkdir(parents=True)
    module = tmp_path / "dbdrift" / "plan" / "campaign.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dbdrift.workloads import sysbench\n"
                      "def f():\n    from ..results.build import build\n    import dbdrift.store.reads\n")
    modules = {"dbdrift.workloads.sysbench", "dbdrift.results.build", "dbdrift.store.reads", "dbdrift.plan.campaign"}
    assert imported_modules(module, modules, tmp_path / "dbdrift") == modules - {"dbdrift.plan.campaign"}
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) in (["a", "c", "b", "a"], ["a", "b", "c", "a"],
                                                                 ["b", "a", "c", "b"], ["c", "b", "a", "c"])
    assert import_cycle({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_not_even_under_type_checking_or_inside_a_function():
    paths = sorted(PKG.rglob("*.py"))
    modules = {module_of(p) for p in paths}
    graph = {module_of(p): imported_modules(p, modules) for p in paths}
    assert import_cycle(graph) == []


def imported_slices(path: Path) -> set[str]:
    """The workload slices (workloads/<name>/) `path` imports, at the top, under TYPE_CHECKING or in a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "dbdrift.workloads":
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(n.split(".")[2] for n in names
                     if n.startswith("dbdrift.workloads.") and n.split(".")[2] != "registry")
    return found


def test_the_slice_import_finder_sees_each_form_of_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from dbdrift.workloads import tpcc\nfrom dbdrift.workloads.sysbench.expand import RunStep\n"
                      "import dbdrift.workloads.vector.run\nfrom dbdrift.workloads.registry import Workload\n"
                      "def f():\n    from dbdrift.workloads.ibench import catalog\n")
    assert imported_slices(module) == {"tpcc", "sysbench", "vector", "ibench"}


def test_nothing_outside_the_slices_imports_a_slice():
    """A slice is reached only through the registry (workloads/registry.py), which hands each
    Workload down: the verbs look it up there, the campaign readers are handed the plan parts
    (plan/campaign.py's Plans), results/ the catalogue of tests (results/microbenchmarks.py), and
    the runner asks what it needs as Protocols (runner/campaign.py's CampaignWorkload,
    runner/sequential.py's MeasuredRun). Counted wherever an import stands."""
    outside = [p for p in sorted(PKG.rglob("*.py")) if p.relative_to(PKG).parts[0] != "workloads"]
    offenders = [f"{p.relative_to(PKG)} imports {sorted(imported_slices(p))}" for p in outside if imported_slices(p)]
    assert offenders == []


# A slice imports another only where it is built on it: CH-benCHmark is TPROC-C's run with
# analytical streams beside it. What every workload shares is the core's (plan/params.py's
# RefuseTopLevelKeys, plan/lifecycle.py's default_settle_s, catalog/sql.py's render_sql).
BUILT_ON = {"htap": {"tpcc"}}


def test_a_slice_imports_another_only_where_it_is_built_on_it():
    found = {}
    for path in sorted((PKG / "workloads").rglob("*.py")):
        own = path.relative_to(PKG / "workloads").parts[0]
        if own.endswith(".py"):
            continue  # the registry and the package's __init__
        other = imported_slices(path) - {own} - BUILT_ON.get(own, set())
        if other:
            found[str(path.relative_to(PKG))] = sorted(other)
    assert found == {}


WORKLOAD_NAMES = set(WORKLOADS)
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
