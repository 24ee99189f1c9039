"""Graph algorithms over a plan's dependencies, in linear time: order, cycles, longest chain.

A graph here is ``{step id: ids it depends on}`` in plan order; dependencies on ids that
are not in the graph are ignored (validation reports them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["ancestors", "critical_path", "dependency_cycles", "descendants", "topological_ids"]

Graph = Mapping[str, Sequence[str]]


def _edges(graph: Graph) -> dict[str, list[str]]:
    return {sid: [d for d in dict.fromkeys(deps) if d in graph] for sid, deps in graph.items()}


def ancestors(graph: Graph, start: Sequence[str]) -> list[str]:
    """Every id reachable from ``start`` through dependencies, nearest first (breadth
    first); ids not in the graph are skipped."""
    edges = _edges(graph)
    seen: dict[str, None] = {}
    queue = [sid for sid in start if sid in edges]
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen[current] = None
        queue.extend(edges[current])
    return list(seen)


def descendants(graph: Graph, start: Sequence[str]) -> list[str]:
    """``start`` and every id that depends on it, directly or through others, nearest
    first; ids not in the graph are skipped."""
    dependents: dict[str, list[str]] = {sid: [] for sid in graph}
    for sid, deps in _edges(graph).items():
        for dep in deps:
            dependents[dep].append(sid)
    return ancestors(dependents, start)


def topological_ids(graph: Graph) -> list[str]:
    """Ids ordered so that each comes after its dependencies, in rounds that keep plan order.

    Ids on or behind a cycle are left out; compare the length to notice them.
    """
    edges = _edges(graph)
    position = {sid: index for index, sid in enumerate(edges)}
    waiting = {sid: len(deps) for sid, deps in edges.items()}
    dependents: dict[str, list[str]] = {sid: [] for sid in edges}
    for sid, deps in edges.items():
        for dep in deps:
            dependents[dep].append(sid)
    order: list[str] = []
    free = [sid for sid in edges if not waiting[sid]]
    while free:
        order.extend(free)
        unlocked = []
        for sid in free:
            for child in dependents[sid]:
                waiting[child] -= 1
                if not waiting[child]:
                    unlocked.append(child)
        free = sorted(unlocked, key=position.__getitem__)
    return order


def dependency_cycles(graph: Graph) -> list[list[str]]:
    """Each cycle as exactly the ids on it, in plan order (a step depending on itself counts).

    Tarjan's strongly connected components, iteratively, so that long plans cannot
    exhaust the stack.
    """
    edges = _edges(graph)
    position = {sid: index for index, sid in enumerate(edges)}
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in edges:
        if root in index_of:
            continue
        work = [(root, 0)]
        while work:
            node, next_edge = work.pop()
            if next_edge == 0:
                index_of[node] = low[node] = len(index_of)
                stack.append(node)
                on_stack.add(node)
            if next_edge < len(edges[node]):
                work.append((node, next_edge + 1))
                child = edges[node][next_edge]
                if child not in index_of:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index_of[child])
                continue
            if low[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    cycles.append(sorted(component, key=position.__getitem__))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(cycles, key=lambda cycle: position[cycle[0]])


def critical_path(graph: Graph) -> list[str]:
    """The longest chain of dependent ids, first to last (empty when the graph has a cycle)."""
    edges = _edges(graph)
    order = topological_ids(edges)
    if len(order) < len(edges):
        return []
    length: dict[str, int] = {}
    previous: dict[str, str | None] = {}
    for sid in order:
        best = max(edges[sid], key=length.__getitem__, default=None)
        previous[sid] = best
        length[sid] = 1 + (length[best] if best is not None else 0)
    end = max(order, key=length.__getitem__, default=None)
    path: list[str] = []
    while end is not None:
        path.append(end)
        end = previous[end]
    return path[::-1]
