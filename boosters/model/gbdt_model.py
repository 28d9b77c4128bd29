"""GBDTModel: train, predict, inspect, save and load."""

from __future__ import annotations

import io
import json

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig, Metric, Objective
from boosters.data.dataset import Dataset
from boosters.data.validation import as_feature_matrix
from boosters.model.tree import TREE_ARRAY_NAMES, Forest, Tree
from boosters.training.objectives import make_objective
from boosters.training.trainer import GBDTTrainer

FORMAT_VERSION = 1


def _config_to_json(config: GBDTConfig) -> dict:
    out = config.to_dict()
    out["objective"] = {"name": config.objective.name, "n_classes": config.objective.n_classes}
    out["metric"] = None if config.metric is None else config.metric.name
    out["growth_strategy"] = config.growth_strategy.value
    return out


def _config_from_json(data: dict) -> GBDTConfig:
    data = dict(data)
    data["objective"] = Objective(data["objective"]["name"], data["objective"]["n_classes"])
    data["metric"] = None if data["metric"] is None else Metric(data["metric"])
    return GBDTConfig(**data)


class GBDTModel:
    """A trained gradient boosted tree ensemble. Make one with `GBDTModel.train`."""

    def __init__(self, forest: Forest, objective: Objective, n_features: int, config: GBDTConfig | None = None,
                 feature_names=None, best_iteration=None, best_score=None, eval_history=None):
        self.forest = forest
        self.objective = objective
        self.config = config
        self.n_features = n_features
        self.feature_names = feature_names
        self.best_iteration = best_iteration
        self.best_score = best_score
        self.eval_history = list(eval_history or [])
        self._objective_fn = make_objective(objective)

    @classmethod
    def train(cls, dataset: Dataset, config: GBDTConfig | None = None, val_set: Dataset | None = None,
              n_threads: int = 0) -> "GBDTModel":
        """Train on `dataset`; with `val_set`, evaluate every round (and stop early when
        `config.early_stopping_rounds` is set). `n_threads=0` uses all available cores."""
        config = GBDTConfig() if config is None else config
        if not isinstance(config, GBDTConfig):
            raise TypeError(f"config must be a GBDTConfig, got {type(config).__name__}")
        result = GBDTTrainer(config, n_threads).train(dataset, val_set)
        return cls(result.forest, config.objective, dataset.n_features, config, dataset.feature_names,
                   result.best_iteration, result.best_score, result.history)

    # -- prediction --------------------------------------------------------------------

    def _features(self, X) -> np.ndarray:
        X = X.X if isinstance(X, Dataset) else as_feature_matrix(X, "X")
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features but the model was trained on {self.n_features}")
        return X

    def predict_raw(self, X, n_threads: int = 0) -> np.ndarray:
        """Margins: (n_rows,) for one output, (n_rows, n_classes) for softmax."""
        margins = self.forest.predict_margins(self._features(X), effective_n_threads(n_threads))
        return margins[:, 0] if margins.shape[1] == 1 else margins

    def predict(self, X, n_threads: int = 0) -> np.ndarray:
        """Values for squared error, P(y=1) for logistic, class probabilities
        (n_rows, n_classes) for softmax. X: array or Dataset; NaN = missing."""
        margins = self.forest.predict_margins(self._features(X), effective_n_threads(n_threads))
        return self._objective_fn.transform(margins)

    # -- inspection ----------------------------------------------------------------------

    @property
    def n_trees(self) -> int:
        return self.forest.n_trees

    @property
    def trees(self) -> list[Tree]:
        return self.forest.trees

    def feature_importance(self, importance_type: str = "split") -> np.ndarray:
        """Per feature: number of splits ("split") or total split gain ("gain")."""
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        out = np.zeros(self.n_features)
        for tree in self.trees:
            internal = tree.split_feature >= 0
            weights = None if importance_type == "split" else tree.gain[internal]
            out += np.bincount(tree.split_feature[internal], weights=weights, minlength=self.n_features)
        return out

    # -- persistence -------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The model as .npz bytes (tree arrays + a JSON header); no pickle involved."""
        header = {
            "format_version": FORMAT_VERSION,
            "objective": {"name": self.objective.name, "n_classes": self.objective.n_classes},
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "best_iteration": self.best_iteration,
            "best_score": self.best_score,
            "eval_history": self.eval_history,
            "n_groups": self.forest.n_groups,
            "config": None if self.config is None else _config_to_json(self.config),
        }
        arrays = {"base_scores": self.forest.base_scores,
                  "tree_group": np.asarray(self.forest.tree_group, dtype=np.int32),
                  "tree_sizes": np.asarray([t.n_nodes for t in self.trees], dtype=np.int64)}
        for name in TREE_ARRAY_NAMES:
            arrays[name] = (np.concatenate([getattr(t, name) for t in self.trees]) if self.trees
                            else np.zeros(0))
        buf = io.BytesIO()
        np.savez_compressed(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "GBDTModel":
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            header = json.loads(npz["header"].tobytes().decode())
            if header.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"unsupported model format version {header.get('format_version')}")
            spec = header["objective"]
            forest = Forest(header["n_groups"], npz["base_scores"])
            bounds = np.concatenate([[0], np.cumsum(npz["tree_sizes"])])
            columns = {name: npz[name] for name in TREE_ARRAY_NAMES}
            for i, group in enumerate(npz["tree_group"]):
                lo, hi = bounds[i], bounds[i + 1]
                forest.add(Tree(**{name: columns[name][lo:hi] for name in TREE_ARRAY_NAMES}), int(group))
        config = None if header["config"] is None else _config_from_json(header["config"])
        return cls(forest, Objective(spec["name"], spec["n_classes"]), header["n_features"], config,
                   header["feature_names"], header["best_iteration"], header["best_score"],
                   header["eval_history"])

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, path) -> "GBDTModel":
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        self.__dict__.update(GBDTModel.from_bytes(state["bytes"]).__dict__)

    def __repr__(self):
        return (f"GBDTModel({self.objective!r}, n_trees={self.n_trees}, n_features={self.n_features}, "
                f"best_iteration={self.best_iteration})")
