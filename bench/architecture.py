"""The shape of the code, as issue-style figures: how much of the first workload (sysbench) still
sits in the core, which imports run against the layering, and how wide the main seams are.

Reads the source tree as text and syntax trees; runs nothing of dbdrift. What it prints:
- imports of a workload slice (workloads/<name>/) from modules outside every slice, per layer,
  counting module-level, `if TYPE_CHECKING:` and function-local imports alike;
- the lines of the modules outside the slices that import sysbench's slice, those that make or
  render its report model (ReportData), and the core modules no module but sysbench's imports
  (the part of the first workload still in the core, as far as a program can tell it), beside
  the lines of the slice itself, and the fields of CampaignSpec;
- arrows back up: pairs of top-level packages where a lower one imports a higher one (the
  order is the layering of tests/unit/test_architecture.py, the registry's package on top);
- import cycles among modules (strongly connected parts of more than one module), counting
  the same three kinds of import;
- hooks of `Workload`/`WorkloadPlan` typed `Callable[..., Any]` or with `Any` in their type,
  and those that may be None;
- the methods of the store's classes;
- the places the judging defaults are written: a 0.02 bound to a name with `min_effect` in it,
  a 0.05 bound to a name with `noisy` in it;
- the files outside a slice that name the newest slice (what adding a workload touches);
- `duplicates` pairs over the whole tree and over src/ (when the command is on the PATH).

    .venv/bin/python bench/architecture.py
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "dbdrift"
# the layering, lowest first: a package may import those before it (tests/unit/test_architecture.py)
ORDER = ["errors", "quantities", "version", "origin", "disk", "workload", "model", "cpus", "analysis", "env", "catalog",
         "plan", "server", "driver", "metrics", "store", "runner", "results", "report", "cluster", "workloads",
         "app", "cli", "__main__"]
NEWEST_SLICE = "htap"


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[str]:
    """Every dbdrift module `path` imports, wherever the import stands (top, TYPE_CHECKING, a function)."""
    tree = ast.parse(path.read_text())
    found: list[str] = []
    own = module_name(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("dbdrift")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = own.split(".")[: -node.level + (1 if path.name == "__init__.py" else 0)] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("dbdrift"):
                continue
            # `from dbdrift.workloads import sysbench` imports the module sysbench; `from dbdrift.plan.keys
            # import Key` the module keys (main() trims a name that is not a module back to its module)
            found += [f"{mod}.{a.name}" for a in node.names]
    return found


def slice_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "workloads" and parts[2] not in ("registry", "__init__"):
        return parts[2]
    return None


def top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def main() -> int:
    files = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)
    modules = {module_name(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imp in imports_of(path):
            while imp and imp not in modules:
                imp = imp.rpartition(".")[0]
            if imp and imp != name:
                targets.add(imp)
        graph[name] = targets

    print("imports of a slice from outside every slice (module, top, TYPE_CHECKING and function-local alike):")
    per_layer: dict[str, int] = defaultdict(int)
    sysbench_users: set[str] = set()
    for name, targets in graph.items():
        if slice_of(name) or name.endswith("workloads.registry"):
            continue
        for t in targets:
            s = slice_of(t)
            if s:
                per_layer[top(name)] += 1
                if s == "sysbench":
                    sysbench_users.add(name)
    total = sum(per_layer.values())
    print(f"  {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(per_layer.items())))
    lines = sum(len(modules[m].read_text().splitlines()) for m in sysbench_users)
    print(f"lines of the {len(sysbench_users)} modules outside the slices that import sysbench's slice: {lines:,}")
    for m in sorted(sysbench_users):
        print(f"    {m} ({len(modules[m].read_text().splitlines())})")
    # sysbench's report model (ReportData) and its makers and renderers: modules outside the slice that
    # make or render it (0 once they moved into workloads/sysbench/results/ and report/)
    model = {n for n in graph if n.startswith("dbdrift.workloads.sysbench.results.data")}
    on_model = sorted(n for n, t in graph.items() if not slice_of(n) and not n.endswith("workloads.registry")
                      and t & model)
    print(f"modules outside the slices that make or render sysbench's report model (ReportData): {len(on_model)}"
          + "".join(f"\n    {m}" for m in on_model))
    # the part of the core only sysbench's slice uses: modules outside the slices imported by no module but
    # sysbench's (its catalogue's readers handed down, say), counted as a program can tell it
    importers: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        for t in targets:
            importers[t].add(name)
    only_sysbench = sorted(n for n in graph if not slice_of(n) and not n.endswith("__init__") and importers[n]
                           and all(slice_of(i) == "sysbench" for i in importers[n]))
    lines = sum(len(modules[m].read_text().splitlines()) for m in only_sysbench)
    print(f"core modules imported by sysbench's slice alone: {len(only_sysbench)} ({lines:,} lines)"
          + "".join(f"\n    {m} ({len(modules[m].read_text().splitlines())})" for m in only_sysbench))
    own = sum(len(p.read_text().splitlines()) for n, p in modules.items() if slice_of(n) == "sysbench")
    print(f"lines of sysbench's slice (workloads/sysbench/): {own:,}")

    spec = next(n for n in ast.walk(ast.parse((PKG / "plan" / "campaign.py").read_text()))
                if isinstance(n, ast.ClassDef) and n.name == "CampaignSpec")
    print(f"fields of CampaignSpec: {sum(isinstance(s, ast.AnnAssign) for s in spec.body)} "
          "(a workload's own keys are its Params record's, in `params`)")

    rank = {p: i for i, p in enumerate(ORDER)}
    back: dict[tuple[str, str], int] = defaultdict(int)
    for name, targets in graph.items():
        for t in targets:
            a, b = top(name), top(t)
            if a in rank and b in rank and rank[b] > rank[a]:
                back[(a, b)] += 1
    print(f"arrows back up (lower package imports a higher one): {len(back)}"
          + "".join(f"\n    {a} -> {b} ({n} import(s))" for (a, b), n in sorted(back.items())))

    cycles = strongly_connected(graph)
    print(f"import cycles (strongly connected parts of more than one module): {len(cycles)}")
    for c in cycles:
        print("    " + ", ".join(sorted(m.removeprefix("dbdrift.") for m in c)))

    hooks = list(workload_hooks())
    loose = sum("Callable[..., Any]" in t for _, t, _o in hooks)
    with_any = sum(bool(re.search(r"\bAny\b", t)) for _, t, _o in hooks)
    print(f"Workload hooks (fields of Workload and WorkloadPlan): {len(hooks)}; {loose} Callable[..., Any], "
          f"{with_any} with Any in their type, {sum(o for _, _t, o in hooks)} that may be None")

    store_methods = []
    for path in (PKG / "store").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.FunctionDef) for b in node.body):
                store_methods.append((node.name, sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                     for b in node.body)))
    print("methods of the store package's classes: " + ", ".join(f"{n} {c}" for n, c in sorted(store_methods)))

    print(f"places the judging defaults are written: min_effect 0.02 {defaults(files, 'min_effect', 0.02)}, "
          f"noisy 0.05 {defaults(files, 'noisy', 0.05)}")

    touched = sorted(str(p.relative_to(ROOT)) for p in files
                     if slice_of(module_name(p)) != NEWEST_SLICE and re.search(rf"\b{NEWEST_SLICE}\b", p.read_text()))
    print(f"files outside workloads/{NEWEST_SLICE}/ that name it: {len(touched)}"
          + "".join(f"\n    {t}" for t in touched))

    if shutil.which("duplicates"):
        for where in (ROOT, ROOT / "src"):
            done = subprocess.run(["duplicates", "--repo", str(where), "--seconds", "120"], capture_output=True,
                                  text=True, check=False)
            first = done.stdout.splitlines()[0] if done.stdout else done.stderr.strip()
            print(f"duplicates over {where.relative_to(ROOT) if where != ROOT else 'the tree'}: {first}")
    else:
        print("duplicates: the command is not on the PATH")
    return 0


def workload_hooks():
    """(name, annotation, optional) of each field of the classes Workload and WorkloadPlan, wherever
    they are declared (workload.py, workloads/registry.py), but the plan part and the name."""
    for path in (PKG / "workload.py", PKG / "workloads" / "registry.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ClassDef) and node.name in ("Workload", "WorkloadPlan")):
                continue
            for field in node.body:
                if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) \
                        and field.target.id not in ("plan", "name", "table", "caps", "demo"):
                    text = ast.unparse(field.annotation)
                    optional = (isinstance(field.value, ast.Constant) and field.value.value is None) \
                        or text.endswith("| None")
                    yield field.target.id, text, optional


def defaults(files: list[Path], word: str, value: float) -> int:
    """How many times `value` is bound to a name containing `word`: a parameter's default, a
    field's default, an assignment or a keyword argument."""
    n = 0
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            pairs: list[tuple[str, ast.AST | None]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                pos = a.posonlyargs + a.args
                pairs += [(arg.arg, d) for arg, d in zip(pos[len(pos) - len(a.defaults):], a.defaults)]
                pairs += [(arg.arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.value))
            elif isinstance(node, ast.Assign):
                pairs += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.keyword) and node.arg:
                pairs.append((node.arg, node.value))
            n += sum(1 for name, v in pairs if word in name.lower() and isinstance(v, ast.Constant) and v.value == value)
    return n


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
