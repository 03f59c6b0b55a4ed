"""Informational constraints: PRIMARY KEY, UNIQUE and FOREIGN KEY, recorded (not enforced) as Snowflake does."""

from lakeclone.constraints import keys

__all__ = ["keys"]
