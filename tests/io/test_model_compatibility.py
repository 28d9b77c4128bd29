"""Model files saved by earlier format versions keep loading and predicting identically
(issue 14: a format change bumps the version and keeps a reader for the old one). Each
tests/models/v<N>/ holds one small model per kind of content (categorical sets, missing
values, several outputs, quantile levels, several targets, linear leaves, DART), written
by tests/models/make_models.py with that version, beside the rows it predicts and its
raw and transformed predictions then. Equality is exact: the same trees on the same rows."""

from pathlib import Path

import numpy as np
import pytest

import boosters as bst

MODELS = Path(__file__).parent.parent / "models"  # tests/models
FILES = sorted(MODELS.glob("v*/*.bst")) + sorted(MODELS.glob("v*/*.bstr.json"))  # both encodings


def test_every_format_version_has_its_files():
    assert {path.parent.name for path in FILES} >= {"v1"}
    assert len([p for p in FILES if p.parent.name == "v1"]) == 12


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_old_model_file_loads_and_predicts_as_when_it_was_saved(path):
    model = bst.GBDTModel.load(path)
    expected = np.load(path.with_name(path.name.split(".")[0] + ".expected.npz"))
    np.testing.assert_array_equal(model.predict_raw(expected["X"], n_threads=1), expected["raw"])
    np.testing.assert_array_equal(model.predict(expected["X"], n_threads=2), expected["prediction"])
