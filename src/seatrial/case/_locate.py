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
            locator._index(node, ())
        return locator

    def _index(self, node: yaml.Node, path: Path_, inside: frozenset[int] = frozenset()) -> None:
        if id(node) in inside:
            return  # a recursive alias (`&a [*a]`): its lines are already indexed
        inside = inside | {id(node)}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
                child = (*path, key)
                line = key_node.start_mark.line + 1
                if child in self.lines:
                    self.duplicates.append(DuplicateKey(child, line, self.lines[child]))
                self.lines[child] = line
                self._index(value_node, child, inside)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                self.lines[child] = item.start_mark.line + 1
                self._index(item, child, inside)

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
