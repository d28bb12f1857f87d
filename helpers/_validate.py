"""The argument checks of helpers' public functions, in one place (private to the package).

A wrong type raises ``TypeError``, a wrong value ``ValueError``, naming the argument. Each public function calls
these at its top, so the rest of its body is the computation. A check returns the value it accepted (as a plain
``int`` or ``float`` where it converts one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from numbers import Integral, Real
from typing import Any, TypeVar

import torch
from torch import Tensor

T = TypeVar("T")


def _listed(words: Iterable[object]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    *rest, last = (str(word) for word in words)
    return f"{', '.join(rest)} and {last}" if rest else last


# ---- plain values


def instance(name: str, value: object, types: type[T] | tuple[type[T], ...], what: str) -> T:
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


def boolean(name: str, value: object) -> bool:
    return instance(name, value, bool, "a bool")


def string(name: str, value: object) -> str:
    return instance(name, value, str, "a str")


def text(name: str, value: object) -> str:
    """A non-empty str (an empty one is a TypeError too)."""
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")
    return value


def one_of(name: str, value: object, choices: tuple[str, ...]) -> str:
    choice = string(name, value)
    if choice not in choices:
        raise ValueError(f"{name} must be {' or '.join(map(repr, choices))}, got {choice!r}")
    return choice


def _numeric(name: str, value: object, kind: type, what: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):  # a bool is not a number here
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


def integer(name: str, value: object, lo: int = 1, hi: int | None = None, why: str = "") -> int:
    """An int (a NumPy integer is one) with ``lo <= value`` (and ``value < hi``)."""
    n = int(_numeric(name, value, Integral, "an int"))
    if n < lo or (hi is not None and n >= hi):
        raise ValueError(f"{name} must be {f'>= {lo}' if hi is None else f'in [{lo}, {hi})'}{why}, got {n}")
    return n


def positive_ints(**values: object) -> None:
    """Every keyword an int >= 1: the sizes of a model or of a batch."""
    for name, value in values.items():
        integer(name, value)


def seed(name: str, value: object) -> int:
    """The one seed rule: an int in [0, 2**32), which NumPy's generator accepts too."""
    return integer(name, value, 0, 2**32)


def at_most(name: str, value: int, limit_name: str, limit: int, why: str) -> None:
    if value > limit:
        raise ValueError(f"{name} must be <= {limit_name} ({why}), got {value} > {limit}")


def number(name: str, value: object) -> float:
    return float(_numeric(name, value, Real, "a real number"))


def real(name: str, value: object, lo: float, hi: float, *, exclusive: bool = False) -> float:
    """A float in [lo, hi], or in (lo, hi) when ``exclusive``."""
    x = number(name, value)
    if not (lo < x < hi if exclusive else lo <= x <= hi):  # NaN fails too
        left, right = "()" if exclusive else "[]"
        raise ValueError(f"{name} must be a number in {left}{lo:g}, {hi:g}{right}, got {value!r}")
    return x


def positive_real(name: str, value: object) -> float:
    x = number(name, value)
    if not 0.0 < x < math.inf:  # NaN fails too
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return x


def optional_scale(name: str, value: object) -> float | None:
    """``None`` (the default scale), or a finite multiplier > 0."""
    return None if value is None else positive_real(name, _numeric(name, value, Real, "a real number or None"))


def scale(name: str, value: object, default: float) -> float:
    """A multiplier of the attention logits, ``default`` where it is None."""
    checked = optional_scale(name, value)
    return default if checked is None else checked


def band(name: str, value: object) -> tuple[float, float]:
    """A finite ``(low, high)`` with ``low <= high``; a pair of the wrong length is a TypeError."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of numbers, got {value!r}")
    low, high = (number(name, x) for x in value)
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"{name} must be finite with low <= high, got {value!r}")
    return low, high


# ---- collections


def sequence(name: str, value: object) -> Sequence[Any]:
    """A list, a tuple or another sequence, but not a string."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
    return value


def each(name: str, values: object, check: Callable[[str, object], T]) -> list[T]:
    """Every entry of ``values`` (a non-empty list, tuple, 1-D tensor or array, or other iterable but a
    string or a mapping), accepted by ``check`` under the name ``name[i]``."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence, got {type(values).__name__}")
    items: Any = values
    if hasattr(items, "ndim") and hasattr(items, "tolist"):  # torch.Tensor, numpy.ndarray
        if items.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {tuple(items.shape)}")
        items = items.tolist()
    entries = list(items)
    if not entries:
        raise ValueError(f"{name} must not be empty")
    return [check(f"{name}[{i}]", value) for i, value in enumerate(entries)]


def length(name: str, value: Sized, n: int, what: str) -> None:
    if len(value) != n:
        raise ValueError(f"{name} must hold {n} value{'s' * (n != 1)} ({what}), got {value!r}")


def same_length(what: str, **values: Sized) -> None:
    lengths = [len(value) for value in values.values()]
    if len(set(lengths)) > 1:
        raise ValueError(f"{_listed(values)} must have one entry per {what}, got lengths {_listed(lengths)}")


# ---- tensors


def tensor(name: str, value: object, dtype: torch.dtype | None = None) -> Tensor:
    t = instance(name, value, Tensor, "a torch.Tensor")
    if dtype is not None and t.dtype != dtype:
        raise TypeError(f"{name} must have dtype {dtype}, got {t.dtype}")
    return t


def float_tensor(name: str, value: object, min_dim: int = 0, layout: str = "") -> Tensor:
    """A floating-point tensor with at least ``min_dim`` dimensions."""
    t = tensor(name, value)
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {t.dtype}")
    if t.dim() < min_dim:
        plural, got = ("s", f"shape {tuple(t.shape)}") if min_dim > 1 else ("", "a 0-dimensional tensor")
        raise ValueError(f"{name} must have at least {min_dim} dimension{plural}{layout}, got {got}")
    return t


def dims(name: str, value: Tensor, n: int, what: str) -> None:
    if value.dim() != n:
        raise ValueError(f"{name} must have {n} dimension{'s' * (n != 1)} ({what}), got shape {tuple(value.shape)}")


def shape(name: str, value: Tensor, expected: tuple[int, ...], layout: str) -> None:
    if tuple(value.shape) != expected:
        raise ValueError(f"{name} must have shape {layout} = {expected}, got {tuple(value.shape)}")


def like(name: str, value: Tensor, ref_name: str, ref: Tensor) -> None:
    """``value`` in the dtype and on the device of ``ref``."""
    if value.dtype != ref.dtype:
        raise TypeError(f"{name} must have the dtype of {ref_name} ({ref.dtype}), got {value.dtype}")
    if value.device != ref.device:
        raise ValueError(f"{name} must be on the device of {ref_name} ({ref.device}), got {value.device}")


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(torch.broadcast_shapes(*shapes))  # type: ignore[no-untyped-call]  # unannotated in torch
    except RuntimeError:
        return None


def broadcastable(name: str, value: Tensor, to: str, target: tuple[int, ...], *, exact: bool = False) -> None:
    """``value``'s shape broadcasts with ``target`` (``exact``: to ``target`` itself, as a mask must)."""
    joint = _broadcast(tuple(value.shape), target)
    if joint is None or (exact and joint != target):
        raise ValueError(f"{name} of shape {tuple(value.shape)} does not broadcast to {to} of shape {target}")


# ---- attention's arguments: query (..., L, E), key (..., S, E), value (..., S, E_v)


def _same_size(dim: int, what: str, **tensors: Tensor) -> None:
    if len({t.shape[dim] for t in tensors.values()}) > 1:
        got = _listed(f"{name} {tuple(t.shape)}" for name, t in tensors.items())
        raise ValueError(f"{_listed(tensors)} must have the same {what}, got {got}")


def query_key(query: Tensor, key: Tensor, value: Tensor | None = None) -> tuple[int, ...]:
    """query (..., L, E), key (..., S, E) and, where given, value (..., S, E_v); the broadcast of their batch
    dimensions ``...``."""
    tensors = {"query": query, "key": key} | ({} if value is None else {"value": value})
    for name, t in tensors.items():
        float_tensor(name, t, 2, " (..., length, features)")
        like(name, t, "query", query)
    _same_size(-1, "last dimension d_k", query=query, key=key)
    if value is not None:
        _same_size(-2, "length S (dimension -2)", key=key, value=value)
    batch = _broadcast(*(tuple(t.shape[:-2]) for t in tensors.values()))
    if batch is None:
        shapes = ", ".join(f"{name} {tuple(t.shape)}" for name, t in tensors.items())
        raise ValueError(f"the batch dimensions of {_listed(tensors)} do not broadcast: {shapes}")
    return batch


def attn_mask(mask: Tensor | None, is_causal: bool, query: Tensor, logits_shape: tuple[int, ...]) -> None:
    """``is_causal``, and a mask for logits (..., L, S): bool, or of the dtype of ``query``."""
    boolean("is_causal", is_causal)
    if mask is None:
        return
    if is_causal:
        raise ValueError("attn_mask must be None when is_causal=True (torch's rule as well)")
    instance("attn_mask", mask, Tensor, "a torch.Tensor or None")
    if mask.dtype != torch.bool and mask.dtype != query.dtype:
        raise TypeError(f"attn_mask must be bool or have the dtype of query ({query.dtype}), got {mask.dtype}")
    if mask.device != query.device:
        raise ValueError(f"attn_mask must be on the device of query ({query.device}), got {mask.device}")
    broadcastable("attn_mask", mask, "the attention logits (..., L, S)", logits_shape, exact=True)


def recall_inputs(pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> None:
    """A recall model's inputs: int64 ``pair_keys`` (B, P), ``pair_values`` (B, P) and ``query`` (B,)."""
    for name, value in (("pair_keys", pair_keys), ("pair_values", pair_values), ("query", query)):
        tensor(name, value, torch.int64)
    dims("pair_keys", pair_keys, 2, "B, P")
    shape("pair_values", pair_values, tuple(pair_keys.shape), "(B, P)")
    shape("query", query, tuple(pair_keys.shape[:1]), "(B,)")
