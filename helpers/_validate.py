"""Argument checks shared by the helpers modules (private)."""

from __future__ import annotations


def positive_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 1; otherwise a TypeError/ValueError that names ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value
