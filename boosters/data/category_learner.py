"""The categorical features of an out-of-core Dataset (data/out_of_core.py), learned block
by block where the in-memory Dataset sees all rows at once."""

from __future__ import annotations

import numpy as np

from boosters.data.categories import MAX_CATEGORIES, category_values, check_codes, map_codes


class CategoryLearner:
    """One categorical feature over the blocks of pass 1: its categories and code range as
    `learn_frame` finds them on all rows at once (`learn_codes`: a declared order as it is,
    else the distinct values present, sorted; numbers: the codes themselves); afterwards,
    it maps each block's values to those codes (`map_codes`)."""

    def __init__(self, label: str):
        self.label = label
        self.kind: str | None = None  # "codes", "declared" or "values", from the first block
        self.declared: np.ndarray | None = None  # the declared categories (kind "declared")
        self.present: set = set()  # the values seen (kind "values")
        self.n_codes = 0          # largest code seen + 1 (kinds "codes" and "declared")
        self.has_missing = self.has_values = False
        self._categories: np.ndarray | None = None

    def _kind_is(self, kind: str) -> None:
        if self.kind is None:
            self.kind = kind
        elif self.kind != kind:
            raise ValueError(f"categorical feature {self.label}: its blocks differ ({self.kind} in the first, "
                             f"{kind} in a later one)")

    def see_codes(self, codes: np.ndarray) -> None:
        """A block giving the feature as numeric codes."""
        self._kind_is("codes")
        check_codes(codes, self.label)
        present = codes[~np.isnan(codes)]
        self.has_missing |= len(present) < len(codes)
        if len(present):
            self.has_values = True
            self.n_codes = max(self.n_codes, int(present.max()) + 1)

    def see_encoded(self, indices: np.ndarray, values, ordered: bool) -> None:
        """A frame block's non-numeric column, dictionary encoded (`Column.encoded`)."""
        self.has_missing |= bool((indices < 0).any())
        used = np.unique(indices[indices >= 0])
        self.has_values |= len(used) > 0
        if ordered:
            self._kind_is("declared")
            declared = category_values(values, self.label)
            if self.declared is None:
                self.declared = declared
            elif not np.array_equal(declared, self.declared):
                raise ValueError(f"categorical feature {self.label}: the blocks declare different categories")
            if len(used):
                self.n_codes = max(self.n_codes, int(used[-1]) + 1)
        else:
            self._kind_is("values")
            self.present.update(category_values(np.asarray(values)[used], self.label).tolist())

    def categories(self) -> np.ndarray | None:
        """The values in code order (None: the feature is given as codes)."""
        if self.kind == "declared":
            self._categories = self.declared
        elif self.kind == "values":
            self._categories = np.unique(category_values(np.array(sorted(self.present), dtype=object)
                                                         if self.present else [], self.label))
            self.n_codes = len(self._categories)
        if self._categories is not None and len(self._categories) > MAX_CATEGORIES:
            raise ValueError(f"categorical feature {self.label} has {len(self._categories)} categories; at most "
                             f"{MAX_CATEGORIES} (MAX_CATEGORIES) are supported")
        return self._categories

    def encode(self, indices: np.ndarray, values) -> np.ndarray:
        """A frame block's non-numeric column, dictionary encoded, as codes (later passes)."""
        return map_codes(indices, values, self._categories, self.label)

    def edges(self) -> tuple[np.ndarray, bool, bool]:
        """(upper edges, has missing values, has values), as `categorical_edges` on all rows."""
        edges = np.append(np.arange(self.n_codes - 1, dtype=np.float64) + 0.5, np.inf) if self.has_values \
            else np.array([np.inf])
        return edges, self.has_missing, self.has_values
