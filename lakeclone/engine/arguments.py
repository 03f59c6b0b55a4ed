"""The arguments of a function lakeclone binds itself, by name."""

from __future__ import annotations

from sqlglot import exp

from lakeclone.errors import SqlCompilationError


def named_arguments(call: exp.Anonymous, names: tuple[str, ...]) -> dict[str, exp.Expression]:
    """A call's arguments by name: named (``RESULT_LIMIT => 10``) or, in the order of ``names``, by position.

    Raises:
        SqlCompilationError: more arguments than names, or a name not among them.
    """
    found: dict[str, exp.Expression] = {}
    for position, argument in enumerate(call.expressions):
        if isinstance(argument, exp.Kwarg):
            key, value = argument.this.name.upper(), argument.expression
        elif position < len(names):
            key, value = names[position], argument
        else:
            raise SqlCompilationError(f"{call.name.upper()} takes at most {len(names)} arguments.")
        if key not in names:
            accepted = ", ".join(n + " =>" for n in names)
            raise SqlCompilationError(f"{call.name.upper()} takes the arguments {accepted}; got {key}.")
        found[key] = value
    return found
