"""Row sampling of a training (RFC-0008 RowSamplingParams): the config's sizes in rows.

- `subsample` < 1: each round's trees see round(subsample * n_rows) rows (at least one)
  drawn uniformly without replacement, one sample per round shared by its trees (one
  per output), as LightGBM's bagging with bagging_freq=1 (which draws each row with
  probability bagging_fraction, so its sample size varies a little). With a ranking
  objective (query groups), whole queries are drawn instead: round(subsample *
  n_queries) of them (at least one), as LightGBM's bagging_by_query.
- GOSS (`goss_top_rate` a, `goss_other_rate` b): top_k = round(a * n_rows) (at least
  one) rows with the largest sum over outputs of |grad * hess| (LightGBM's score), plus
  other_k = round(b * n_rows) rows drawn uniformly from the rest, whose gradients and
  hessians are multiplied by (1 - a) / b (the LightGBM paper's factor; LightGBM's code
  uses (n_rows - top_k) / other_k, the same up to the rounding of the two counts). As
  LightGBM, the first int(1 / learning_rate) rounds use every row: while the model is
  far from the labels every gradient is large and the top set is arbitrary.

- Bayesian bootstrap (`bagging_temperature` T, CatBoost's bootstrap_type="Bayesian"):
  each round every row's gradients and hessians are multiplied by (-log U)^T, U uniform
  in (0, 1] per (round, row); not with `subsample` < 1 or GOSS (config.py refuses them).

The draws are seeded by `seed` and the round (see _sampling.pyx).
"""

from __future__ import annotations

from boosters.config import GBDTConfig
from boosters.training._sampling import RowSampler


def goss_warmup_rounds(learning_rate: float) -> int:
    """Rounds that use every row before GOSS starts (LightGBM: int(1 / learning_rate))."""
    return int(1.0 / learning_rate)


def sample_size(subsample: float, n: int) -> int | None:
    """How many of n rows (or queries) a round samples with `subsample`; None when that
    is all of them (no sampler needed)."""
    n_sample = max(1, round(subsample * n))
    return None if n_sample >= n else n_sample


def make_row_sampler(config: GBDTConfig, n_rows: int, n_outputs: int, n_threads: int,
                     query_groups=None) -> RowSampler | None:
    """The training's row sampler, None when every round uses every row; `query_groups`
    (the query boundaries of a ranking objective): whole queries are sampled."""
    if config.bagging_temperature == 0.0:  # every weight (-log U)^0 is 1: no bootstrap, no cost
        return None
    if config.bagging_temperature is not None:
        return RowSampler("bayesian", n_rows, n_outputs, config.seed, n_threads,
                          temperature=config.bagging_temperature)
    if config.goss_top_rate is not None:
        a, b = config.goss_top_rate, config.goss_other_rate
        top_k = min(n_rows, max(1, round(a * n_rows)))
        other_k = min(n_rows - top_k, round(b * n_rows))
        return RowSampler("goss", n_rows, n_outputs, config.seed, n_threads, top_k=top_k, other_k=other_k,
                          weight=(1.0 - a) / b, warmup_rounds=goss_warmup_rounds(config.learning_rate))
    if query_groups is not None:
        n_sample = sample_size(config.subsample, len(query_groups) - 1)
        if n_sample is None:
            return None
        return RowSampler("queries", n_rows, n_outputs, config.seed, n_threads, n_sample=n_sample,
                          groups=query_groups)
    n_sample = sample_size(config.subsample, n_rows)
    if n_sample is None:
        return None
    return RowSampler("uniform", n_rows, n_outputs, config.seed, n_threads, n_sample=n_sample)
