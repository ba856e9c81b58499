"""What the value domain asks the project about a name another of its modules defines.

The project layer answers (`ModuleLink.definition_of`); the domains below it receive the
question as a function and never import the project.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Optional

from jaxlint.analysis.engine.names import Names


@dataclass(frozen=True)
class ProjectDef:
    """A plain (undecorated) module-level `def`, or a `class`, of a project module."""

    names: Names  # its module's names
    node: ast.AST  # the `def` or `class` statement
    qualname: str  # its qualified name: its module's, then its own
    facts: Any  # its module's facts, as the project builds them (the key flow reads theirs)
    definitions: "ProjectDefinitions"  # the same question, asked from its module


# The definition a qualified name seen in a module stands for, if the project defines it.
ProjectDefinitions = Callable[[str], Optional[ProjectDef]]
