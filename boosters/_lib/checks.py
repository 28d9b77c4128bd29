"""Checks of scalar arguments, shared by the configuration and the callbacks: a wrong
type raises TypeError, a value out of range ValueError, both naming the argument."""

from __future__ import annotations

import math
import numbers


def require_int(name, value, lo, hi=None, allow_none=False):
    """`value` as an int in [lo, hi] (hi None: no upper bound); None passes with `allow_none`.
    A bool is refused: True is an int to Python but never a count."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def require_float(name, value, lo, strictly_above=False):
    """`value` as a finite float >= lo (> lo with `strictly_above`); NaN and inf are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < lo or (strictly_above and value == lo):
        bound = f"> {lo}" if strictly_above else f">= {lo}"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value
