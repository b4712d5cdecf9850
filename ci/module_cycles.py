#!/usr/bin/env python3
"""Fails when cuda-gl's top-level modules import each other in a cycle.

Every `crate::<module>` path in a module's files (its `.rs` file or folder) is an edge from that
module to `<module>`; `super::` inside a folder stays within it. The layering the crate keeps is
sys -> result -> safe types -> graphics/external, with errors at the bottom: a cycle means two
modules can no longer be read or tested one after the other.

Usage: ci/module_cycles.py [SRC_DIR]   (default cuda-gl/src); prints the graph with -v.
"""
import re
import sys
from pathlib import Path


def module_of(path: Path, src: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def strip_comments(text: str) -> str:
    """Drops comments and doc comments: an intra-doc link is no import."""
    return re.sub(r"//[^\n]*", "", text)


def root_names(src: Path) -> dict[str, str]:
    """Names that lib.rs re-exports at the crate root, by the module they come from."""
    names = {}
    lib = strip_comments((src / "lib.rs").read_text())
    for module, body in re.findall(r"pub use ([a-z_][a-z0-9_]*)::\{?([^;]*)\}?;", lib):
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body):
            names[name] = module
    return names


def graph(src: Path) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    roots = root_names(src)
    for path in src.rglob("*.rs"):
        module = module_of(path, src)
        if module in ("lib", "main"):
            continue
        text = strip_comments(path.read_text())
        # Tests may reach anywhere; only the library's own layering counts.
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        deps = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", text))
        deps.update(roots[n] for n in re.findall(r"\bcrate::([A-Z][A-Za-z0-9_]*)", text) if n in roots)
        for group in re.findall(r"\buse crate::\{([^}]*)\}", text):
            for part in group.split(","):
                name = part.strip().split("::")[0]
                deps.add(roots.get(name, name))
        edges.setdefault(module, set()).update(d for d in deps if d != module)
    modules = set(edges)
    return {m: {d for d in ds if d in modules} for m, ds in edges.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "-v"]
    src = Path(args[0] if args else "cuda-gl/src")
    edges = graph(src)
    if "-v" in sys.argv:
        for m in sorted(edges):
            print(f"{m} -> {', '.join(sorted(edges[m])) or '(nothing)'}")
    found = cycles(edges)
    for c in found:
        print("import cycle: " + " -> ".join(c))
    if not found:
        print(f"no import cycle among {len(edges)} modules of {src}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
