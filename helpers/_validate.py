"""Argument checks shared by the helpers modules (private)."""

from __future__ import annotations

import math
from numbers import Integral, Real


def positive_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 1; otherwise a TypeError/ValueError that names ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def nonnegative_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 0; otherwise a TypeError/ValueError that names ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def positive_real(name: str, value: object) -> float:
    """``value`` as a float if it is a finite real number > 0; otherwise a TypeError/ValueError that names ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def optional_scale(scale: object, name: str = "scale") -> float | None:
    """``None``, or ``scale`` as a float if it is a finite real number > 0; otherwise a TypeError/ValueError."""
    if scale is None:
        return None
    if isinstance(scale, bool) or not isinstance(scale, Real):
        raise TypeError(f"{name} must be a real number or None, got {type(scale).__name__}")
    return positive_real(name, scale)
