"""The modules of fastbudget import one another without a cycle, and every exception and
warning class is defined in ``fastbudget.exceptions``.

The import graph is read from the source (``ast``), not from ``sys.modules``: every ``import``
and ``from ... import`` statement counts, at module level or inside a function, a class or
an ``if``/``try`` block, since an import inside a function is a dependency all the same (it
only runs later). Relative imports are resolved against the importing module's package, and
``from pkg import name`` is an edge to the submodule ``pkg.name`` when that is a module, else
to ``pkg`` itself. Importing a submodule also runs its package's ``__init__``; those implicit
edges are left out (a package's ``__init__`` that imports its own submodules would otherwise
be a cycle by construction).
"""
import ast
import pathlib

import fastbudget

PACKAGE_DIR = pathlib.Path(fastbudget.__file__).parent


def _modules():
    """Dotted module name -> path, for every module of the package (``__init__.py`` as the
    package's own name)."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _targets(module, path, node, modules):
    """The modules of the package that the import statement ``node`` in ``module`` names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            parts = package.split(".")
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                 for alias in node.names]
    out = set()
    for name in names:
        # `import a.b.c` (or a name of a module) imports the longest prefix that is a module
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.add(name)
    return out


def import_graph():
    """Module -> set of the package's modules it imports (anywhere in its source)."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(module, path, node, modules)
        graph[module] = edges
    return graph


def find_cycles(graph):
    """The strongly connected components of ``graph`` with more than one module (Tarjan),
    each as ``(sorted modules, one cycle through them as a list that starts and ends at the
    same module)``; a module importing itself is ignored (``_targets`` drops it)."""
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def visit(v):                   # iterative Tarjan (no recursion limit on deep graphs)
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [(comp, _one_cycle(graph, comp)) for comp in comps]


def _one_cycle(graph, comp):
    """A shortest cycle through the first module of the component ``comp`` (breadth first
    inside the component)."""
    members = set(comp)
    start = comp[0]
    parent = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    return comp  # pragma: no cover - a component always has a cycle


def _describe(cycles, graph):
    lines = []
    for comp, cycle in cycles:
        lines.append(" -> ".join(cycle))
        for m in comp:
            lines.append(f"    {m} imports {sorted(graph[m] & set(comp))}")
    return "\n".join(lines)


def test_the_package_modules_import_one_another_without_a_cycle():
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles inside fastbudget:\n" + _describe(cycles, graph)


def test_the_cycle_finder_reports_a_cycle_through_a_function_level_import(tmp_path):
    # the finder itself: a cycle whose one edge is an import inside a function is found, and
    # named as a path that starts and ends at the same module
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    (comp, cycle), = find_cycles(graph)
    assert comp == ["p.a", "p.b", "p.c"]
    assert cycle == ["p.a", "p.b", "p.c", "p.a"]
    src = "def f():\n    from . import b\n"
    tree = ast.parse(src)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    fake = {"p": tmp_path / "__init__.py", "p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    assert _targets("p.a", fake["p.a"], node, fake) == {"p.b"}


def test_relative_and_package_imports_resolve_to_the_submodule_they_name():
    graph = import_graph()
    # `from .kernels import adiabatic as ad` names the submodule, not the package
    assert "fastbudget.kernels.adiabatic" in graph["fastbudget.engine"]
    # `from ..exceptions import ...` two levels up from a subpackage's module
    assert "fastbudget.exceptions" in graph["fastbudget.datasets.readers"]
    # a function-level import counts (base's `save` calls persist inside the method)
    assert "fastbudget.persist" in graph["fastbudget.base"]


def _exception_classes(tree):
    """Names of the classes defined anywhere in ``tree`` that derive, by name, from an
    exception or warning class."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
            if any(b.endswith(("Error", "Exception", "Warning")) for b in bases):
                out.append(node.name)
    return out


def test_every_public_exception_class_is_defined_in_the_exceptions_module():
    modules = _modules()
    elsewhere = {}
    for module, path in modules.items():
        if module == "fastbudget.exceptions":
            continue
        names = [n for n in _exception_classes(ast.parse(path.read_text()))
                 if not n.startswith("_")]      # private control flow (e.g. a _Stop signal)
        if names:
            elsewhere[module] = names
    assert not elsewhere, f"exception classes defined outside fastbudget.exceptions: {elsewhere}"
    from fastbudget import exceptions

    defined = _exception_classes(ast.parse(modules["fastbudget.exceptions"].read_text()))
    assert sorted(defined) == sorted(exceptions.__all__)
    for name in defined:
        assert issubclass(getattr(exceptions, name), Exception)
