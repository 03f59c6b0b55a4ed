"""Sequences and column defaults: CREATE/DROP/SHOW SEQUENCE, ``DEFAULT seq.NEXTVAL``, and how clones remap them."""

from lakeclone.sequences import defaults, statements

__all__ = ["defaults", "statements"]
