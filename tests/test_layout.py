"""testbed/'s packages import only the packages before them in
testbed.LAYERS, and no module imports itself back through others."""
import ast
from pathlib import Path

import testbed

ROOT = Path(testbed.__file__).resolve().parent


def _module(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def _imports(path):
    """The testbed modules (or packages) a file imports, dotted from
    testbed/ ('machine.vm', 'common')."""
    mod = _module(path)
    pkg = mod.split(".")[:-1] if path.name != "__init__.py" else \
        mod.split(".")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg[:len(pkg) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                found.add(".".join(target + [alias.name]))
        elif isinstance(node, ast.ImportFrom) and \
                (node.module or "").startswith("testbed"):
            rest = node.module.split(".")[1:]
            for alias in node.names:
                found.add(".".join(rest + [alias.name]))
    return found


def _known(name, modules):
    """The longest prefix of an imported name that is a module."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in modules:
            return ".".join(parts[:n])
    return None


def _graph():
    files = {_module(p): p for p in ROOT.rglob("*.py")
             if "__pycache__" not in p.parts}
    return {m: {k for k in (_known(n, files) for n in _imports(p))
                if k and k != m}
            for m, p in files.items()}


def test_every_package_is_a_layer():
    packages = {p.name for p in ROOT.iterdir()
                if (p / "__init__.py").is_file()}
    assert packages == set(testbed.LAYERS)
    assert not [p.name for p in ROOT.glob("*.py") if p.name != "__init__.py"]


def test_nothing_imports_upward():
    rank = {name: i for i, name in enumerate(testbed.LAYERS)}
    wrong = []
    for mod, deps in _graph().items():
        if not mod:
            continue
        for dep in deps:
            here, there = mod.split(".")[0], dep.split(".")[0]
            if rank[there] > rank[here]:
                wrong.append(f"{mod} imports {dep}")
    assert not wrong


def test_no_cycles():
    graph = _graph()
    state = {}

    def visit(mod, path):
        if state.get(mod) == "done":
            return
        assert state.get(mod) != "open", " -> ".join(path + [mod])
        state[mod] = "open"
        for dep in sorted(graph.get(mod, ())):
            visit(dep, path + [mod])
        state[mod] = "done"

    for mod in sorted(graph):
        visit(mod, [])


def test_each_package_says_what_it_holds():
    for name in testbed.LAYERS:
        doc = ast.get_docstring(ast.parse(
            (ROOT / name / "__init__.py").read_text()))
        assert doc and len(doc) > 80, name
