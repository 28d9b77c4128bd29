"""The parameters of objectives and metrics: each one's name (the Objective / Metric attribute),
default and check, shared by every definition that takes it (tweedie and tweedie_deviance
both take VARIANCE_POWER), and how a metric label, as model files write it ("ndcg@10",
"pinball@0.1,0.9"), gives its value."""

from __future__ import annotations

import numbers
from typing import Callable, NamedTuple

from boosters._lib.checks import require_float, require_int


def joined(names: tuple[str, ...]) -> str:
    """Names as a message lists them: "softmax and one_vs_rest", "squared, absolute, huber"."""
    return " and ".join(names) if len(names) == 2 else ", ".join(names)


class Parameter(NamedTuple):
    """A keyword of an objective or a metric: the attribute of the same name on Objective /
    Metric, set for the definitions that take it and None for the others."""

    name: str
    default: object  # kept when none is given; None: optional (n_targets) or required (n_classes' check refuses it)
    check: Callable[[object, str], object]  # (value, the definition's name) -> the value kept; TypeError / ValueError
    keyword: bool = False  # repr: Objective.lambdarank(ndcg_at=10) rather than Objective.lambdarank(10)
    applies_to: Callable[[tuple[str, ...]], str] = joined  # "X only applies to ...": its definitions' names
    from_label: Callable[[str, str], object] | None = None  # a metric label's value: (name, text after the "@")
    label_wins: bool = False  # the label's value replaces one given as a keyword (else it only fills an absent one)


def argument_texts(parameters: tuple[Parameter, ...], value) -> list[str]:
    """The arguments of `value`'s (an Objective's or a Metric's) repr, its parameters in order;
    None is left out (an objective of one target)."""
    out = []
    for parameter in parameters:
        setting = getattr(value, parameter.name)
        if setting is None:
            continue
        text = str(list(setting) if isinstance(setting, tuple) else setting)
        out.append(f"{parameter.name}={text}" if parameter.keyword else text)
    return out


def label_text(setting) -> str:
    """A parameter's value as a metric label writes it after the "@": "10", "1.5", "0.1,0.9"."""
    return ",".join(map(repr, setting)) if isinstance(setting, tuple) else repr(setting)


def check_n_targets(value, owner: str) -> int | None:
    """None (one target, or as many as y has columns) or an int >= 1 (1 is stored as None:
    the single-target objective)."""
    if value is None:
        return None
    value = require_int("n_targets", value, 1)
    return None if value == 1 else value


def check_n_classes(value, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"n_classes must be an int >= 2, got {type(value).__name__} {value!r}")
    if value < 2:
        raise ValueError(f"n_classes must be >= 2 for {owner}, got {value}")
    return int(value)


def check_variance_power(value, owner: str = "") -> float:
    """Tweedie's variance power: a float strictly between 1 and 2 (the compound Poisson-gamma range)."""
    value = require_float("variance_power", value, 1.0, strictly_above=True)
    if value >= 2.0:
        raise ValueError(f"variance_power must be < 2 (use Objective.gamma() for 2), got {value}")
    return value


def check_alpha(value, owner: str = "") -> float | tuple[float, ...]:
    """Pinball's quantile level: a float in (0, 1), or a strictly increasing list of them (one
    output per level; a one-level list is the float)."""
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) == 1:  # a list, tuple or 1-D array
        levels = tuple(_alpha_level(a) for a in value)  # a level, not a list of them again
        if not levels:
            raise ValueError("alpha: a list of quantile levels must not be empty")
        if any(a >= b for a, b in zip(levels, levels[1:])):
            raise ValueError(f"alpha: a list of quantile levels must be strictly increasing, got {list(levels)}")
        return levels[0] if len(levels) == 1 else levels
    return _alpha_level(value)


def _alpha_level(value) -> float:
    value = require_float("alpha", value, 0.0, strictly_above=True)
    if value >= 1.0:
        raise ValueError(f"alpha must be < 1 (a quantile level in (0, 1)), got {value}")
    return value


def integer_label(name: str, text: str) -> int:
    """k of "ndcg@10", as LightGBM names its ranking metrics."""
    if not text.isdigit():
        raise ValueError(f"metric {name}@k needs an integer k, got {text!r}")
    return int(text)


def number_label(symbol: str) -> Callable[[str, str], float]:
    """The parser of "tweedie_deviance@1.5" (`symbol` "p"): one number."""
    def parse(name: str, text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"metric {name}@{symbol} needs a number {symbol}, got {text!r}") from None
    return parse


def numbers_label(name: str, text: str) -> list[float]:
    """The numbers of "pinball@0.1,0.9"."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"metric {name}@... needs numbers after the @, got {text!r}") from None


def levels_label(name: str, text: str) -> float | list[float]:
    """Pinball's levels: one number, or a list of several."""
    values = numbers_label(name, text)
    return values if len(values) > 1 else values[0]


def delta_label(name: str, text: str) -> float:
    values = numbers_label(name, text)
    if len(values) != 1:
        raise ValueError(f"metric {name}@delta needs one number, got {text!r}")
    return values[0]


def _ranking_metrics(names: tuple[str, ...]) -> str:
    return f"the ranking metrics {names}"


N_TARGETS = Parameter("n_targets", None, check_n_targets, keyword=True)  # multi-target regression
N_CLASSES = Parameter("n_classes", None, check_n_classes)  # required: one output per class
NDCG_AT = Parameter("ndcg_at", 10, lambda value, owner: require_int("ndcg_at", value, 1), keyword=True)
VARIANCE_POWER = Parameter("variance_power", 1.5, check_variance_power, from_label=number_label("p"))
# model files write pinball's and huber's metrics as labels that carry their value, which wins
ALPHA = Parameter("alpha", 0.5, check_alpha, from_label=levels_label, label_wins=True)
DELTA = Parameter("delta", 1.0, lambda value, owner: require_float("delta", value, 0.0, strictly_above=True),
                  from_label=delta_label, label_wins=True)
K = Parameter("k", 10, lambda value, owner: require_int("k", value, 1), applies_to=_ranking_metrics,
              from_label=integer_label)
THRESHOLD = Parameter("threshold", 0.0, lambda value, owner: require_float("threshold", value, -float("inf")),
                      from_label=number_label("t"))  # finite
