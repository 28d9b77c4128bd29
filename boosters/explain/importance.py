"""Feature importance: how often the trees split on each feature, and how much those
splits gained or covered."""

from __future__ import annotations

from enum import Enum

import numpy as np

from boosters.model.forest import Forest


class ImportanceType(str, Enum):
    """What `feature_importance` measures per feature, summed over every split on it.

    ``Split``: the number of splits. ``Gain``: their total loss reduction (LightGBM's
    ``"gain"``, XGBoost's ``"total_gain"``). ``Cover``: their total cover, the hessian
    sum of the rows reaching the split node (XGBoost's ``"total_cover"``).
    ``AverageGain`` and ``AverageCover``: the totals divided by the number of splits
    (XGBoost's ``"gain"`` and ``"cover"``); 0 for a feature never split on. Each
    member equals its string name, and the strings are accepted wherever a kind is.

    Examples
    --------
    >>> import boosters as bst
    >>> bst.ImportanceType("average_gain")
    <ImportanceType.AverageGain: 'average_gain'>
    >>> bst.ImportanceType.Gain == "gain"
    True
    """

    Split = "split"
    Gain = "gain"
    Cover = "cover"
    AverageGain = "average_gain"
    AverageCover = "average_cover"

    @classmethod
    def parse(cls, importance_type) -> "ImportanceType":
        """`importance_type` as an ImportanceType (a member or its string name).

        Parameters
        ----------
        importance_type : ImportanceType or str
            ``"split"``, ``"gain"``, ``"cover"``, ``"average_gain"`` or ``"average_cover"``.

        Returns
        -------
        ImportanceType

        Examples
        --------
        >>> from boosters import ImportanceType
        >>> ImportanceType.parse("cover")
        <ImportanceType.Cover: 'cover'>
        """
        try:
            return cls(importance_type)
        except ValueError:
            names = ", ".join(repr(k.value) for k in cls)
            raise ValueError(f"importance_type must be one of {names} (or a boosters.ImportanceType), "
                             f"got {importance_type!r}") from None

    def __str__(self) -> str:
        return self.value


def feature_importance(forest: Forest, n_features: int, importance_type="split",
                       normalize: bool = False) -> np.ndarray:
    """Per feature, its importance over every split of the forest's trees.

    Parameters
    ----------
    forest : Forest
        The trees (``model.forest``).
    n_features : int
        The length of the result (features never split on get 0).
    importance_type : ImportanceType or str, default "split"
        What to measure, see `ImportanceType`.
    normalize : bool, default False
        Divide by the total, so that the importances sum to 1 (as scikit-learn's
        ``feature_importances_``); all zeros stay zeros (a forest without splits).

    Returns
    -------
    numpy.ndarray
        float64, shape (n_features,).

    Examples
    --------
    >>> import numpy as np, boosters as bst
    >>> from boosters.explain.importance import feature_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = 2 * X[:, 0] + X[:, 1]
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, max_depth=2))
    >>> feature_importance(model.forest, 3, "gain", normalize=True).round(2)
    array([0.85, 0.15, 0.  ])
    """
    kind = ImportanceType.parse(importance_type)
    nodes = forest.flat().arrays
    internal = nodes["split_feature"] >= 0
    features = nodes["split_feature"][internal]
    counts = np.bincount(features, minlength=n_features).astype(np.float64)
    if kind is ImportanceType.Split:
        importance = counts
    else:
        weights = nodes["gain" if kind in (ImportanceType.Gain, ImportanceType.AverageGain) else "cover"]
        importance = np.bincount(features, weights=weights[internal], minlength=n_features).astype(np.float64)
        if kind in (ImportanceType.AverageGain, ImportanceType.AverageCover):
            importance = np.divide(importance, counts, out=np.zeros_like(importance), where=counts > 0)
    if normalize:
        total = importance.sum()
        importance = importance / total if total > 0 else importance
    return importance
