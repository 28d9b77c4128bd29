"""Which model file names `GBDTModel.save` and `load` accept, and what to tell a user
whose file is another library's model.

A file's name picks the encoding that `save` writes: ``.json`` the JSON encoding, ``.npz``
the binary one (a zip of .npy members, which is what a .npz is). ``.bst``, the binary
encoding's name in older docs, still works. Any other name is refused: users of LightGBM
and XGBoost name their files ``.txt``, ``.ubj``, ``.model``, ``.bin``, and expect those
libraries' formats there, which boosters does not write (XGBoost JSON by name only:
`boosters.convert.to_xgboost_json`).
"""

from __future__ import annotations

import os
import re

BINARY, JSON = "binary", "json"
SUFFIXES = {".npz": BINARY, ".bst": BINARY, ".json": JSON}
_WORKING = "'.npz' (the binary encoding; '.bst' too) or '.json' (the JSON encoding)"

# suffixes that other libraries' users give their model files, with what boosters offers instead
_ON_SAVE = {
    ".txt": "boosters does not write LightGBM's text model format",
    ".ubj": "boosters does not write XGBoost's UBJSON format; for XGBoost, write the bytes of "
            "bst.convert.to_xgboost_json(model) to a '.json' file (xgboost.Booster(model_file=...) reads it)",
}
_ON_LOAD = {
    ".txt": "a LightGBM text model is read by bst.convert.from_lightgbm(path)",
    ".ubj": "an XGBoost UBJSON model is read by bst.convert.from_xgboost(path)",
}
_OTHER_LIBRARY = ("an XGBoost or LightGBM model file is read by bst.convert.from_xgboost(path) or "
                  "bst.convert.from_lightgbm(path)")

# the first bytes of the other libraries' model files (as they write them; only looked at
# once boosters' own decoding has refused the file, so a false match costs nothing)
_LIGHTGBM_TEXT = re.compile(rb"\s*tree\r?\n")
_XGBOOST_JSON = re.compile(rb'\s*\{\s*"learner"\s*:')
_XGBOOST_UBJSON = re.compile(rb"\{(?:[iUIlL].{1,8}|#.)?learner", re.DOTALL)


def suffix_of(path) -> str:
    """The path's last suffix, lower-cased ("" without one)."""
    return os.path.splitext(os.fsdecode(path))[1].lower()


def encoding_for_save(path) -> str:
    """The encoding `save` writes to `path` (BINARY or JSON), by its suffix; ValueError
    naming the suffix and the ones that work for any other."""
    suffix = suffix_of(path)
    if suffix not in SUFFIXES:
        hint = _ON_SAVE.get(suffix)
        raise ValueError(f"cannot save a model as {os.fsdecode(path)!r}: {_suffix_words(suffix)}; a model file's "
                         f"name ends in {_WORKING}" + (f"; {hint}" if hint else ""))
    return SUFFIXES[suffix]


def check_load_suffix(path) -> None:
    """ValueError, before `load` decodes anything, when `path`'s suffix is none that `save`
    writes: the file is most likely another library's model."""
    suffix = suffix_of(path)
    if suffix not in SUFFIXES:
        raise ValueError(f"cannot load {os.fsdecode(path)!r} as a boosters model: {_suffix_words(suffix)}; a boosters "
                         f"model file's name ends in {_WORKING}; {_ON_LOAD.get(suffix, _OTHER_LIBRARY)}")


def _suffix_words(suffix: str) -> str:
    return f"its suffix is {suffix!r}" if suffix else "it has no suffix"


def other_library_model(data: bytes) -> str | None:
    """What to do with `data` when it is another library's model file (None otherwise):
    for the error of a file boosters cannot decode, renamed or mistaken for its own."""
    if _LIGHTGBM_TEXT.match(data):
        return "it is a LightGBM text model: read it with bst.convert.from_lightgbm(path)"
    if _XGBOOST_JSON.match(data) or _XGBOOST_UBJSON.match(data):
        return "it is an XGBoost model: read it with bst.convert.from_xgboost(path)"
    return None
