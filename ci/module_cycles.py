#!/usr/bin/env python3
"""Fails when cuda-gl's modules import each other in a cycle.

Each source file is a module (`graphics/registration.rs` is `graphics::registration`,
`graphics/mod.rs` is `graphics`). Every path a file names (`crate::a::b::C`, `super::x`, and a
name lib.rs re-exports at the crate root) is an edge to the deepest module that path names.
Re-exports (`pub use`) and `mod` declarations are not edges: a parent that re-exports its
children's items does not depend on them. A path through a re-export is followed to the module
the item lives in (`super::Registration` in `graphics/array.rs` is an edge to
`graphics::registration`, not to `graphics`), so that cycles through a parent's re-exports
show. Comments, doc links and `#[cfg(test)] mod tests` are left out: only the library's own
code counts.

The same check runs again on the top-level modules (each folder or file directly under
cuda-gl/src, with every file inside a folder counted as the folder): two folders must not lean
on each other, even through different files (`error/` and `result/` once did: the driver's
error type lived in `error/`, and `error/` asked `result/` to describe codes).

The layering this keeps: sys -> result (which owns the driver's error type, `CudaError`) ->
error -> safe types -> graphics and external; `egl` uses the error types, never the reverse. A
cycle means two modules can no longer be read or tested one after the other.

Usage: ci/module_cycles.py [-v] [SRC_DIR]   (default cuda-gl/src; -v prints every edge)
"""
import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)*)::\{([^}]*)\}", re.S)


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts == ["lib"]:
        return ""
    return "::".join(parts)


def code_of(text: str) -> str:
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    text = re.sub(r"//[^\n]*", "", text)
    # Re-exports and module declarations are not dependencies.
    text = re.sub(r"\bpub(\([a-z]+\))?\s+use\s[^;]*;", "", text)
    return re.sub(r"\b(pub(\([a-z]+\))?\s+)?mod\s+[a-z_][a-z0-9_]*\s*;", "", text)


def root_names(src: Path) -> dict[str, str]:
    """Names that lib.rs re-exports at the crate root, by the module path they come from."""
    names = {}
    lib = re.sub(r"//[^\n]*", "", (src / "lib.rs").read_text())
    for path, body in re.findall(r"pub use ((?:[a-z_][a-z0-9_]*::)+)\{?([^;]*?)\}?;", lib):
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body):
            names[name] = path.rstrip(":")
    return names


def resolve(segments: list[str], modules: set[str]) -> str | None:
    """The deepest module that a path's leading segments name."""
    found = resolve_at(segments, modules)
    return found[0] if found else None


def resolve_at(segments: list[str], modules: set[str]) -> tuple[str, int] | None:
    """The deepest module that a path's leading segments name, and how many segments that is."""
    for n in range(len(segments), 0, -1):
        candidate = "::".join(segments[:n])
        if candidate in modules:
            return candidate, n
    return None


USE = re.compile(r"\bpub(?:\([a-z]+\))?\s+use\s+([^;]*);")


def bases(module: str, is_dir: bool) -> dict[str, list[str]]:
    """What `crate`, `super` and a bare path start from, in `module`."""
    parts = module.split("::") if module else []
    parent = parts[:-1]
    return {
        "crate": [],
        "super": parent[:-1] if is_dir else parent,
        # In a folder's mod.rs a bare path starts at its children; in a file, at its own
        # children (Rust 2018 paths), which for a file module are rare: both are `parts`.
        "self": parts,
    }


def use_paths(body: str) -> list[list[str]]:
    """The paths one `use` statement's body names, groups expanded (one level)."""
    body = re.sub(r"\s+", "", body)
    m = re.match(r"^(.*?)::\{(.*)\}$", body)
    if not m:
        return [body.split("::")]
    prefix, items = m.group(1).split("::"), m.group(2)
    return [prefix + item.split("::") for item in items.split(",") if item]


def reexports(files: dict[str, Path], modules: set[str]) -> dict[tuple[str, str], str]:
    """(module, name) -> the module the name comes from, for every `pub use` of the library.

    A path through a re-export (`super::Registration`, where `graphics/mod.rs` re-exports
    `registration::Registration`) depends on the module the item lives in, not on the parent
    that re-exports it: without following re-exports, cycles through parents go unseen."""
    out = {}
    for module, path in files.items():
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", path.read_text())[0]
        text = re.sub(r"//[^\n]*", "", text)
        base = bases(module, path.name == "mod.rs" or module == "")
        for body in USE.findall(text):
            for segs in use_paths(body):
                segs = [s for s in segs if s and s != "self"]
                if not segs:
                    continue
                name = segs[-1].split("as")[-1] if "as" in segs[-1] else segs[-1]
                kind = segs[0] if segs[0] in ("crate", "super") else "self"
                rest = segs[1:] if kind != "self" else segs
                found = resolve_at(base[kind] + rest[:-1], modules) if rest[:-1] else None
                if found is None and kind == "crate" and rest:
                    found = resolve_at(rest[:-1], modules)
                if found:
                    out[(module, name)] = found[0]
    return out


def follow(target: str, segments: list[str], used: int, table: dict[tuple[str, str], str]) -> str:
    """`target` named by `segments[:used]`, moved to where the next name really lives when
    `target` only re-exports it (a few hops at most)."""
    for _ in range(4):
        if used >= len(segments):
            break
        source = table.get((target, segments[used]))
        if not source or source == target:
            break
        target = source
    return target


def graph(src: Path) -> dict[str, set[str]]:
    files = {module_name(p, src): p for p in src.rglob("*.rs")}
    modules = set(files) - {""}
    roots = root_names(src)
    table = reexports(files, modules)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module in modules:
        text = code_of(files[module].read_text())
        parent = module.rsplit("::", 1)[0] if "::" in module else ""
        is_dir = files[module].name == "mod.rs"
        # `super` of a folder's mod.rs is its parent; of a file, the folder it sits in.
        base = {"crate": [], "super": (parent if not is_dir else parent).split("::")}
        if not is_dir:
            base["super"] = parent.split("::") if parent else []
        else:
            grand = parent.rsplit("::", 1)[0] if "::" in parent else ""
            base["super"] = grand.split("::") if grand else []
        paths = [(k, p.strip(":").split("::")) for k, p in PATH.findall(text)]
        for kind, prefix, group in GROUP.findall(text):
            for item in group.split(","):
                item = item.strip()
                if item:
                    paths.append((kind, prefix.strip(":").split("::") + item.split("::")))
        for kind, segments in paths:
            segments = [s for s in segments if s]
            if not segments:
                continue
            if kind == "crate" and segments[0] in roots:
                segments = roots[segments[0]].split("::") + segments[1:]
            full = base[kind] + segments
            found = resolve_at(full, modules)
            if not found:
                continue
            target = follow(found[0], full, found[1], table)
            if target != module:
                edges[module].add(target)
    return edges


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
    folders = top_level(edges)
    found_folders = cycles(folders)
    for c in found_folders:
        print("top-level import cycle: " + " -> ".join(c))
    if not found and not found_folders:
        print(
            f"no import cycle among the {len(edges)} modules of {src}, nor among its "
            f"{len(folders)} top-level modules"
        )
    return 1 if found or found_folders else 0


def top_level(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The edges between top-level modules: `a::x -> b::y` is `a -> b` (when a != b)."""
    out: dict[str, set[str]] = {}
    for module, targets in edges.items():
        top = module.split("::")[0]
        out.setdefault(top, set())
        for target in targets:
            other = target.split("::")[0]
            if other != top:
                out[top].add(other)
    return out


if __name__ == "__main__":
    sys.exit(main())
