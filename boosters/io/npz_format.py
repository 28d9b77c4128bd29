"""The .npz model format: the forest's flat arrays and a JSON header, stored as .npy
members of a zip file (no pickle anywhere).

Members: `header` (UTF-8 JSON as uint8), `base_scores` (float64, one per output group),
`tree_group` (int32, per tree), `tree_sizes` (int64, nodes per tree) and the node arrays
of `model.validation.TREE_ARRAYS`, every tree's nodes concatenated. A model with
categorical splits adds `category_set` (per node), `tree_cat_sets` (sets per tree),
`cat_boundaries` (every set's first word, then the end; from 0) and `cat_bitsets`; a model with
linear leaves adds `linear_const`, `linear_n_terms` (per node), `linear_features` and
`linear_coefs` (every node's terms in node order, model/linear.py). Reading parses the
.npy headers itself (a member's declared shape must match its bytes), inflates only stored
and deflate members, never past the sizes the zip declares (bounded by deflate's ratio),
and checks everything (`io.validation`) before a model exists: a bad file raises one
ValueError.
"""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np

from boosters.io.validation import (ARRAY_NAMES, FORMAT_VERSION, categories_to_json, config_to_json, objective_to_json,
                                   ensemble_from_parts, statistics_to_json)
from boosters.model.ensemble import Ensemble

_READ_HEADER = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def to_bytes(ensemble: Ensemble) -> bytes:
    header, arrays = to_parts(ensemble)
    buf = io.BytesIO()
    np.savez_compressed(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buf.getvalue()


def to_parts(ensemble: Ensemble) -> tuple[dict, dict]:
    """The header (a JSON-ready dict) and the arrays by member name: what a file holds,
    before either encoding (this one, or io/json_format.py's) writes it."""
    forest = ensemble.forest
    flat = forest.flat()
    objective = ensemble.objective
    header = {
        "format_version": FORMAT_VERSION,
        "objective": objective_to_json(objective),
        "n_features": ensemble.n_features,
        "feature_names": ensemble.feature_names,
        "best_iteration": ensemble.best_iteration,
        "best_score": ensemble.best_score,
        "eval_history": list(ensemble.eval_history),
        "n_groups": forest.n_groups,
        "config": None if ensemble.config is None else config_to_json(ensemble.config),
        **categories_to_json(ensemble.categories),
        **statistics_to_json(ensemble.target_statistics),
    }
    arrays = {"base_scores": forest.base_scores, "tree_group": flat.tree_group,
              "tree_sizes": np.diff(flat.tree_offsets), **flat.arrays}
    if flat.categories is None:  # a model without categorical splits: the files older versions write
        del arrays["category_set"]
    else:
        tree_sets, boundaries, bitsets = flat.categories
        arrays.update(tree_cat_sets=np.diff(tree_sets), cat_boundaries=boundaries, cat_bitsets=bitsets)
    if flat.linear is not None:  # linear leaves (only then: older files have none)
        linear = flat.linear
        arrays.update(linear_const=linear.const, linear_n_terms=np.diff(linear.term_offsets).astype(np.int32),
                      linear_features=linear.features, linear_coefs=linear.coefs)
    return header, arrays


def from_bytes(data) -> Ensemble:
    """The ensemble in `data`; ValueError("not a valid boosters model: ...") for anything else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    try:
        members = _read_members(bytes(data))
        header = json.loads(members.pop("header").tobytes().decode("utf-8"))
    except Exception as exc:  # a damaged file fails in the zip, zlib, .npy or JSON layer, in many ways
        raise ValueError(f"not a valid boosters model: {type(exc).__name__}: {exc}") from exc
    try:
        return ensemble_from_parts(header, members)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a valid boosters model: {exc}") from exc


# Members are inflated only when stored or deflated (np.savez_compressed's): the zip reader
# also inflates bzip2 and LZMA, whose ratios have no useful bound. Deflate's is 1032:1, so a
# member's declared size beyond that of its compressed bytes (and a few bytes of header) is
# a lie, refused before anything is inflated; the members must not share compressed bytes,
# which bounds the whole file's inflated size by 1032 times its size.
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_MAX_DEFLATE_RATIO, _DEFLATE_SLACK = 1032, 64
_CHUNK = 1 << 20


def _read_members(data: bytes) -> dict[str, np.ndarray]:
    """Every .npy member of the zip, as a 1-D array of the dtype its header declares."""
    members = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        _check_sizes(infos, len(data))
        for info in infos:
            members[info.filename.removesuffix(".npy")] = _npy_array(info.filename, _inflate(zf, info))
    return members


def _check_sizes(infos: list, file_size: int) -> None:
    """The members' names, compression methods and declared sizes, before any is inflated."""
    names = set()
    for info in infos:
        name = info.filename.removesuffix(".npy")
        if name == info.filename or name in names or name not in ARRAY_NAMES:
            raise ValueError(f"unexpected member {info.filename!r}")
        names.add(name)
        if info.compress_type not in _METHODS:
            method = zipfile.compressor_names.get(  # type: ignore[attr-defined]  # CPython's, not in typeshed
                info.compress_type, info.compress_type)
            raise ValueError(f"{info.filename}: compression method {method} (only stored and deflate members are "
                             f"read)")
        bound = (info.compress_size if info.compress_type == zipfile.ZIP_STORED
                 else info.compress_size * _MAX_DEFLATE_RATIO + _DEFLATE_SLACK)
        if info.file_size > bound:
            raise ValueError(f"{info.filename}: declares {info.file_size} bytes, more than its {info.compress_size} "
                             f"{_METHODS[info.compress_type]} bytes can hold")
    if sum(info.compress_size for info in infos) > file_size:
        raise ValueError(f"the members' compressed sizes add up to more than the file's {file_size} bytes")


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, read in chunks (deflate inflates no more than asked for): an error
    as soon as it runs past its declared size, or if it ends before."""
    chunks, size = [], 0
    with zf.open(info) as f:
        while chunk := f.read(min(_CHUNK, info.file_size + 1 - size)):
            size += len(chunk)
            if size > info.file_size:
                raise ValueError(f"{info.filename}: inflates past the {info.file_size} bytes it declares")
            chunks.append(chunk)
    if size != info.file_size:
        raise ValueError(f"{info.filename}: {size} bytes, it declares {info.file_size}")
    return b"".join(chunks)


def _npy_array(filename: str, payload: bytes) -> np.ndarray:
    """A .npy member's bytes as the 1-D array its header declares (of exactly its data)."""
    name = filename.removesuffix(".npy")
    f = io.BytesIO(payload)
    version = np.lib.format.read_magic(f)
    if version not in _READ_HEADER:
        raise ValueError(f"{name}: unsupported .npy version {version}")
    shape, _, dtype = _READ_HEADER[version](f)
    if dtype.hasobject or len(shape) != 1:
        raise ValueError(f"{name}: expected a 1-D numeric array, got dtype {dtype} shape {shape}")
    n_bytes = len(payload) - f.tell()
    if math.prod(shape) * dtype.itemsize != n_bytes:
        raise ValueError(f"{name}: {n_bytes} bytes of data for shape {shape} of {dtype}")
    return np.frombuffer(payload, dtype=dtype, offset=f.tell())
