"""The object parameters lakeclone knows, their defaults, and where they may be set.

Retention follows Delta Lake's defaults (7 days, the window VACUUM also
protects) rather than Snowflake's 1 day, so that a Delta user's VACUUM and a
Snowflake user's UNDROP agree about what can still be recovered.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakeclone.errors import InvalidParameterError

DATABASE, SCHEMA, TABLE = "DATABASE", "SCHEMA", "TABLE"
LEVELS = (DATABASE, SCHEMA, TABLE)


@dataclass(frozen=True)
class Parameter:
    """One parameter.

    Attributes:
        key: its name, upper case.
        default: the value when set nowhere, as shown by SHOW PARAMETERS.
        type: ``NUMBER``, ``BOOLEAN`` or ``STRING``.
        description: the text SHOW PARAMETERS shows.
        levels: the object kinds it may be set on.
        inherited: whether a value set on a database or schema applies below it.
        bounds: inclusive limits for a NUMBER.
    """

    key: str
    default: str
    type: str
    description: str
    levels: tuple[str, ...] = LEVELS
    inherited: bool = True
    bounds: tuple[int, int] = (0, 0)

    def normalize(self, value: object) -> str:
        """The stored text of a value, or InvalidParameterError."""
        if self.type == "NUMBER":
            try:
                number = int(str(value))
            except ValueError:
                raise InvalidParameterError(
                    f"invalid value [{value}] for parameter '{self.key}'"
                ) from None
            low, high = self.bounds
            if not low <= number <= high:
                raise InvalidParameterError(
                    f"invalid value [{value}] for parameter '{self.key}': must be between {low} and {high}"
                )
            return str(number)
        if self.type == "BOOLEAN":
            text = str(value).strip().upper()
            if text not in ("TRUE", "FALSE"):
                raise InvalidParameterError(f"invalid value [{value}] for parameter '{self.key}'")
            return text.lower()
        return str(value)


PARAMETERS: dict[str, Parameter] = {
    p.key: p
    for p in (
        Parameter(
            "DATA_RETENTION_TIME_IN_DAYS",
            "7",
            "NUMBER",
            "number of days to retain the old version of deleted/updated data",
            bounds=(0, 90),
        ),
        Parameter(
            "MAX_DATA_EXTENSION_TIME_IN_DAYS",
            "14",
            "NUMBER",
            "Maximum number of days to extend data retention beyond the retention period "
            "to prevent a stream becoming stale.",
            bounds=(0, 90),
        ),
        Parameter(
            "CHANGE_TRACKING",
            "false",
            "BOOLEAN",
            "whether change tracking is enabled on the table",
            levels=(TABLE,),
            inherited=False,
        ),
        Parameter(
            "COMMENT",
            "",
            "STRING",
            "a comment on the object",
            inherited=False,
        ),
    )
}


def lookup(key: str, level: str) -> Parameter:
    """The parameter named ``key``, checked to be settable on a ``level`` object."""
    parameter = PARAMETERS.get(key.upper())
    if parameter is None:
        raise InvalidParameterError(f"invalid property '{key}' for '{level}'")
    if level not in parameter.levels:
        raise InvalidParameterError(f"invalid property '{key}' for '{level}'")
    return parameter
