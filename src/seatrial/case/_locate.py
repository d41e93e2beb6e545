"""Where each key and item of a parsed file was written, so problems can name a line.

A location path is a tuple of mapping keys (``str``) and list indices (``int``), the same
shape as a pydantic error's ``loc``. Lines are 1-based.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import yaml

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class DuplicateKey:
    """A mapping key written twice; YAML keeps the last value silently, so we report it."""

    path: Path_
    line: int
    first_line: int


@dataclass
class Locator:
    """Line numbers of the keys and items of one parsed document."""

    lines: dict[Path_, int] = field(default_factory=dict)
    duplicates: list[DuplicateKey] = field(default_factory=list)

    @classmethod
    def from_yaml(cls, node: yaml.Node | None) -> Locator:
        """Index a node tree from ``yaml.compose``: each key's line, each list item's line."""
        locator = cls()
        if node is not None:
            locator.lines[()] = node.start_mark.line + 1
            locator._index(node)
        return locator

    def _index(self, root: yaml.Node) -> None:
        # Depth first, in the order the file is written (a key written twice is found at its
        # second place), with a stack of its own rather than recursion: libyaml reads nesting
        # up to 1,000 levels, deeper than Python's call stack allows.
        # Each entry: a node, its path, the line to record for that path (None for the
        # root), whether that line is a mapping key's, and the nodes above it.
        stack: list[tuple[yaml.Node, Path_, int | None, bool, frozenset[int]]] = [
            (root, (), None, False, frozenset())
        ]
        while stack:
            node, path, line, is_key, inside = stack.pop()
            if line is not None:
                if is_key and path in self.lines:
                    self.duplicates.append(DuplicateKey(path, line, self.lines[path]))
                self.lines[path] = line
            if id(node) in inside:
                continue  # a recursive alias (`&a [*a]`): its lines are already indexed
            inside = inside | {id(node)}
            if isinstance(node, yaml.MappingNode):
                children = [
                    (value, (*path, _key(key)), key.start_mark.line + 1, True, inside)
                    for key, value in node.value
                ]
            elif isinstance(node, yaml.SequenceNode):
                children = [
                    (item, (*path, index), item.start_mark.line + 1, False, inside)
                    for index, item in enumerate(node.value)
                ]
            else:
                continue
            stack.extend(reversed(children))

    def line(self, path: Path_, bases: Sequence[Path_] = ((),)) -> int | None:
        """The line of ``path`` written under one of ``bases``, or its nearest written parent."""
        return self.locate(path, bases)[0]

    def locate(self, path: Path_, bases: Sequence[Path_] = ((),)) -> tuple[int | None, int]:
        """The line of ``path`` and the index of the base it was found under.

        With several bases (a case and the suite defaults that filled it) the base holding the
        longest part of ``path`` wins; on a tie, the first base. Index -1: no base was written.
        """
        best: tuple[int, int | None, int] = (-1, None, -1)
        for index, base in enumerate(bases):
            if base not in self.lines:
                continue
            depth, line = 0, self.lines[base]
            for size in range(1, len(path) + 1):
                found = self.lines.get((*base, *path[:size]))
                if found is None:
                    break
                depth, line = size, found
            if depth > best[0]:
                best = (depth, line, index)
        return best[1], best[2]


def _key(node: yaml.Node) -> str:
    """A mapping key as a path part; a key that is itself a list or mapping is ``?``."""
    return str(node.value) if isinstance(node, yaml.ScalarNode) else "?"
