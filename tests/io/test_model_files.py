"""Loading is memory-safe: a model built from outside data (bytes, a file, a pickle, trees
edited in memory) is checked before the prediction kernel (which has no bounds checks)
sees it. Every bad input raises ValueError; everything accepted predicts exactly as an
independent pure-NumPy tree walker says a valid model predicts.

The fuzz tests mutate the arrays, the header and the bytes of small valid model files.
`BOOSTERS_FUZZ_EXAMPLES=N` runs N cases per fuzz test instead of the CI default.
"""

import bz2
import io
import json
import os
import pickle
import stat
import struct
import subprocess
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import boosters as bst
from support.child_python import python_popen, python_run
from support.model_files import (
    N_FEATURES, TREE_ARRAYS, assert_predicts_like_reference, decode, fuzz_settings, json_values, model_bytes,
    query_rows, reference_is_valid, values,
)


# ----------------------------------------------------------------------------------
# Small valid models and what the tests know about them, independently of boosters
# ----------------------------------------------------------------------------------


def encode(header, arrays) -> bytes:
    header_bytes = header if isinstance(header, bytes) else json.dumps(header).encode()
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(header_bytes, dtype=np.uint8), **arrays)
    return buf.getvalue()


def model_arrays(model):
    """A loaded model's arrays, as the file's names, from its trees."""
    trees = model.trees
    out = {name: np.concatenate([getattr(t, name) for t in trees]) for name in TREE_ARRAYS}
    out["base_scores"] = np.asarray(model.forest.base_scores)
    out["tree_group"] = np.asarray(model.forest.tree_group, dtype=np.int32)
    out["tree_sizes"] = np.array([t.n_nodes for t in trees], dtype=np.int64)
    return out


def load_or_reject(data: bytes):
    """The loaded model, or None when rejected with ValueError (any other exception fails)."""
    try:
        model = bst.GBDTModel.from_bytes(data)
    except ValueError as exc:
        assert str(exc).startswith("not a valid boosters model: "), exc
        event("rejected")
        return None
    event("loaded")
    return model


# ----------------------------------------------------------------------------------
# The reference itself, and the issue's examples
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["squared", "softmax"])
def test_reference_agrees_with_valid_files(kind):
    header, arrays = decode(model_bytes(kind))
    assert reference_is_valid(header, arrays)
    assert_predicts_like_reference(bst.GBDTModel.from_bytes(model_bytes(kind)), header, arrays)


def test_reference_validity_catches_a_cycle():
    header, arrays = decode(model_bytes("squared"))
    arrays["left_child"][0] = 0
    assert not reference_is_valid(header, arrays)


def mutated(kind, **changes) -> bytes:
    """The file of `kind` with arrays (or, by name "header", the header) changed in place."""
    header, arrays = decode(model_bytes(kind))
    for name, change in changes.items():
        change(header if name == "header" else arrays[name])
    return encode(header, arrays)


def set_item(index, value):
    return lambda a: a.__setitem__(index, value)


def share_a_child(left):
    """Node 1's left child becomes node 2's left child (both children of the first tree's
    root split): that node has two parents, node 1's old left child none."""
    assert left[1] > 0 and left[2] > 0 and left[1] != left[2]
    left[1] = left[2]


ISSUE_CASES = {
    "split feature 2**31 - 1 (was a segfault)": dict(split_feature=set_item(0, 2**31 - 1)),
    "every tree group 1 (was an out-of-bounds write)": dict(tree_group=set_item(slice(None), 1)),
    "root's left child is the root (was an endless loop)": dict(left_child=set_item(0, 0)),
    "child points back up": dict(right_child=set_item(1, 0)),
    "two parents share a child": dict(left_child=share_a_child),
    "child outside the tree": dict(left_child=set_item(0, 10_000)),
    "negative child": dict(right_child=set_item(0, -7)),
    "leaf with children": dict(split_feature=set_item(0, -1)),
    "split feature -2": dict(split_feature=set_item(0, -2)),
    "feature beyond n_features": dict(split_feature=set_item(0, N_FEATURES)),
    "NaN threshold": dict(threshold=set_item(0, np.nan)),
    "inf leaf value": dict(value=set_item(-1, np.inf)),
    "NaN base score": dict(base_scores=set_item(0, np.nan)),
    "tree sizes do not add up": dict(tree_sizes=lambda a: a.__setitem__(0, a[0] + 1)),
    "zero-node tree": dict(tree_sizes=set_item(0, 0)),
    "huge tree size (overflowing sums)": dict(tree_sizes=set_item(0, 2**62)),
    "unknown objective": dict(header=lambda h: h["objective"].__setitem__("name", "cox")),
    "n_groups is not the objective's": dict(header=lambda h: h.__setitem__("n_groups", 2)),
    "format version 2": dict(header=lambda h: h.__setitem__("format_version", 2)),
    "n_features missing": dict(header=lambda h: h.pop("n_features")),
    "best_iteration -3": dict(header=lambda h: h.__setitem__("best_iteration", -3)),
    "best_iteration past the rounds": dict(header=lambda h: h.__setitem__("best_iteration", 10**6)),
}


@pytest.mark.parametrize("case", sorted(ISSUE_CASES))
def test_targeted_mutations_are_rejected(case):
    data = mutated("squared", **ISSUE_CASES[case])
    header, arrays = decode(data)
    if "header" not in ISSUE_CASES[case]:
        assert not reference_is_valid(header, arrays)
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        bst.GBDTModel.from_bytes(data)


def test_error_names_what_is_wrong():
    with pytest.raises(ValueError, match="tree 0, node 0: left child must come after its parent"):
        bst.GBDTModel.from_bytes(mutated("squared", left_child=set_item(0, 0)))
    with pytest.raises(ValueError, match="splits on feature 2147483647 but the model has 4 features"):
        bst.GBDTModel.from_bytes(mutated("squared", split_feature=set_item(0, 2**31 - 1)))
    with pytest.raises(ValueError, match="tree 0: its group is outside 0..0"):
        bst.GBDTModel.from_bytes(mutated("squared", tree_group=set_item(slice(None), 1)))


@pytest.mark.parametrize("data", [b"", b"not a model", b"PK\x03\x04" + bytes(40), b"\x93NUMPY" + bytes(20),
                                  pickle.dumps({"a": 1})])
def test_non_model_bytes_raise_value_error(data):
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        bst.GBDTModel.from_bytes(data)


def test_other_npz_files_raise_value_error(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(3))
    with pytest.raises(ValueError, match="unexpected member 'x.npy'"):
        bst.GBDTModel.from_bytes(buf.getvalue())
    buf = io.BytesIO()
    np.savez(buf, header=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        bst.GBDTModel.from_bytes(buf.getvalue())
    path = tmp_path / "not_a_model.bst"
    path.write_bytes(b"hello")
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        bst.GBDTModel.load(path)


def test_non_bytes_raise_type_error():
    with pytest.raises(TypeError, match="bytes"):
        bst.GBDTModel.from_bytes("a string")


@pytest.mark.parametrize("declared, message", [
    (lambda n: n + 1, "bytes of data for shape"),
    (lambda n: 999999999, "bytes of data for shape"),
])
def test_a_members_declared_shape_must_match_its_data(declared, message):
    header, arrays = decode(model_bytes("squared"))
    good = encode(header, arrays)
    with zipfile.ZipFile(io.BytesIO(good)) as zin:
        members = {info.filename: zin.read(info) for info in zin.infolist()}
    raw = members["value.npy"]
    n = len(arrays["value"])
    members["value.npy"] = raw.replace(f"({n},)".encode(), f"({declared(n)},)".encode(), 1)
    assert members["value.npy"] != raw
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for name, payload in members.items():
            zout.writestr(name, payload)
    with pytest.raises(ValueError, match=message):
        bst.GBDTModel.from_bytes(out.getvalue())


def test_pickle_is_checked_too(monkeypatch):
    bad = mutated("squared", left_child=set_item(0, 0))
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    with monkeypatch.context() as m:  # a pickle whose model bytes are bad
        m.setattr(bst.GBDTModel, "__getstate__", lambda self: {"bytes": bad})
        blob = pickle.dumps(model)
    with pytest.raises(ValueError, match="left child"):
        pickle.loads(blob)
    with monkeypatch.context() as m:
        m.setattr(bst.GBDTModel, "__getstate__", lambda self: {"something": 1})
        blob = pickle.dumps(model)
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        pickle.loads(blob)


# ----------------------------------------------------------------------------------
# Trees edited in memory
# ----------------------------------------------------------------------------------

def test_tree_arrays_of_a_model_are_read_only():
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    with pytest.raises(ValueError, match="read-only"):
        model.trees[0].left_child[0] = 0
    trained = bst.GBDTModel.train(bst.Dataset(query_rows()[3:], np.arange(61.0)),
                                  config=bst.GBDTConfig(n_estimators=2))
    trained.predict(query_rows())
    with pytest.raises(ValueError, match="read-only"):
        trained.trees[1].split_feature[0] = 10**6


def test_assigned_arrays_are_checked_before_the_next_prediction():
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    X = query_rows()
    before = model.predict(X)
    tree = model.trees[0]
    good = tree.left_child.copy()
    cycle = good.copy()
    cycle[0] = 0
    tree.left_child = cycle
    with pytest.raises(ValueError, match="left child must come after its parent"):
        model.predict(X)
    tree.left_child = good
    assert np.array_equal(model.predict(X), before)
    tree.split_feature = np.where(tree.split_feature >= 0, 2**31 - 1, -1)
    with pytest.raises(ValueError, match="features"):
        model.predict(X)
    tree.split_feature = np.where(tree.split_feature >= 0, 0, -1)  # valid: all splits on feature 0
    header, arrays = decode(model_bytes("squared"))
    arrays["split_feature"][: tree.n_nodes] = tree.split_feature
    assert_predicts_like_reference(model, header, arrays)  # the edit is used, not a stale copy


def test_replaced_groups_trees_and_base_scores_are_checked():
    model = bst.GBDTModel.from_bytes(model_bytes("softmax"))
    X = query_rows()
    model.predict(X)
    model.forest.tree_group[0] = 3
    with pytest.raises(ValueError, match="group is outside 0..2"):
        model.predict(X)
    model.forest.tree_group[0] = 0
    model.forest.base_scores = np.array([0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="base score 1"):
        model.predict(X)
    model.forest.base_scores = np.zeros(3)
    model.forest.trees[2] = bst.GBDTModel.from_bytes(model_bytes("squared")).trees[0]  # reads feature 3
    model.predict(X)  # valid, and used:
    header, arrays = decode(model_bytes("softmax"))
    arrays = model_arrays(model)
    assert_predicts_like_reference(model, {**header, "n_groups": 3}, arrays)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])


# ----------------------------------------------------------------------------------
# Fuzz: arrays, header, bytes, in-memory edits
# ----------------------------------------------------------------------------------

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32, np.float64, np.bool_]


def cast(value, dtype) -> np.ndarray:
    """`value` as `dtype`, wrapping like a C cast (NaN/inf become 0 for integers)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if np.issubdtype(dtype, np.integer) and isinstance(value, float):
            value = 0 if not np.isfinite(value) else value
            return np.array(value).astype(np.int64).astype(dtype)
        if np.issubdtype(dtype, np.integer):
            return np.array(value % 2**64, dtype=np.uint64).astype(dtype)  # wraps like C
        return np.array(value, dtype=np.float64).astype(dtype)


@st.composite
def array_mutation(draw, arrays):
    """A copy of the arrays with one to three mutations."""
    arrays = {k: v.copy() for k, v in arrays.items()}
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(arrays) if arrays else ["split_feature"]))
        if name not in arrays:
            continue
        arr = arrays[name]
        kind = draw(st.sampled_from(["set", "set", "set", "swap", "copy_from", "resize", "dtype", "drop"]))
        if kind == "set" and len(arr):
            arr[draw(st.integers(0, len(arr) - 1))] = cast(draw(values), arr.dtype)
        elif kind == "swap" and len(arr) > 1:
            i, j = draw(st.integers(0, len(arr) - 1)), draw(st.integers(0, len(arr) - 1))
            arr[[i, j]] = arr[[j, i]]
        elif kind == "copy_from":  # e.g. left_child := right_child
            other = arrays[draw(st.sampled_from(sorted(arrays)))]
            if len(other) == len(arr):
                with np.errstate(all="ignore"):
                    arrays[name] = other.astype(arr.dtype) if draw(st.booleans()) else other.copy()
        elif kind == "resize":
            n = draw(st.integers(0, len(arr) + 3))
            arrays[name] = np.resize(arr, n) if n else arr[:0]
        elif kind == "dtype":
            with np.errstate(all="ignore"):
                arrays[name] = arr.astype(draw(st.sampled_from(DTYPES)))
        elif kind == "drop":
            del arrays[name]
    return arrays


@pytest.mark.parametrize("kind", ["squared", "softmax"])
@fuzz_settings(ci_examples=600)
@given(data=st.data())
def test_fuzz_arrays(kind, data):
    """Mutated arrays load exactly when they form a valid forest (the reference's
    loops say so), and then predict as the reference walker does."""
    header, arrays = decode(model_bytes(kind))
    changed = data.draw(array_mutation(arrays))
    model = load_or_reject(encode(header, changed))
    assert (model is not None) == reference_is_valid(header, changed)
    if model is not None:
        assert_predicts_like_reference(model, header, changed)
        for name, arr in model_arrays(model).items():
            np.testing.assert_array_equal(arr, changed[name])


HEADER_PATHS = ["format_version", "objective", "objective.name", "objective.n_classes", "n_features",
                "feature_names", "best_iteration", "best_score", "eval_history", "n_groups", "config",
                "config.objective", "config.max_depth", "config.metric", "config.growth_strategy",
                "config.unknown_field", "unknown_field", "categorical_features", "categories"]


@pytest.mark.parametrize("kind", ["squared", "softmax"])
@fuzz_settings(ci_examples=300)
@given(path=st.sampled_from(HEADER_PATHS), value=json_values, remove=st.booleans())
def test_fuzz_header(kind, path, value, remove):
    """A changed or removed header field: rejected, or loaded and predicting as the
    reference walker does with the header as loaded."""
    header, arrays = decode(model_bytes(kind))
    *parents, key = path.split(".")
    target = header
    for p in parents:
        target = target[p]
    if remove:
        target.pop(key, None)
    else:
        target[key] = value
    model = load_or_reject(encode(header, arrays))
    if model is not None:
        assert model.objective.name == header["objective"]["name"]
        assert model.n_features == header["n_features"] >= N_FEATURES
        assert_predicts_like_reference(model, header, arrays)


@pytest.mark.parametrize("kind", ["squared", "softmax"])
@fuzz_settings(ci_examples=300)
@given(data=st.data())
def test_fuzz_bytes(kind, data):
    """Flipped, cut or inserted bytes anywhere in the file: rejected, or loaded and
    predicting as the reference walker does on what was loaded."""
    raw = bytearray(model_bytes(kind))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["flip", "flip", "cut", "insert"]))
        if action == "flip":
            raw[where] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del raw[where:where + data.draw(st.integers(1, 64))]
        else:
            raw[where:where] = data.draw(st.binary(min_size=1, max_size=8))
        if not raw:
            break
    model = load_or_reject(bytes(raw))
    if model is not None:
        header, arrays = decode(model.to_bytes())
        assert reference_is_valid(header, arrays)
        assert_predicts_like_reference(model, header, arrays)


@pytest.mark.parametrize("kind", ["squared", "softmax"])
@fuzz_settings(ci_examples=250)
@given(data=st.data())
def test_fuzz_in_memory_edits(kind, data):
    """A tree's array replaced by a mutated one: predict raises ValueError, or predicts
    as the reference walker does on the edited arrays."""
    model = bst.GBDTModel.from_bytes(model_bytes(kind))
    header, _ = decode(model_bytes(kind))
    t = data.draw(st.integers(0, model.n_trees - 1))
    tree = model.trees[t]
    name = data.draw(st.sampled_from(sorted(TREE_ARRAYS)))
    arr = getattr(tree, name).copy()
    for _ in range(data.draw(st.integers(1, 3))):
        arr[data.draw(st.integers(0, len(arr) - 1))] = cast(data.draw(values), arr.dtype)
    setattr(tree, name, arr)
    edited = model_arrays(model)
    try:
        model.predict(query_rows())
    except ValueError:
        event("rejected")
        assert not reference_is_valid(header, edited)
        return
    event("predicted")
    assert reference_is_valid(header, edited)
    assert_predicts_like_reference(model, header, edited)


def test_a_pickled_forest_is_checked_again():
    """A pickle carries the trees but not the checked cache (which a crafted pickle could
    otherwise pair with other trees): the unpickled forest checks on first use."""
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    X = query_rows()
    model.predict(X)  # the forest now holds checked flat arrays
    copy = pickle.loads(pickle.dumps(model.forest))
    assert copy._flat is None
    np.testing.assert_array_equal(copy.predict_margins(X, 1), model.forest.predict_margins(X, 1))
    assert copy._flat is not None


# ----------------------------------------------------------------------------------
# Paths that are not regular files, and what a zip file may make the reader inflate
# ----------------------------------------------------------------------------------

def run_isolated(code: str, cwd, *args) -> dict:
    """Run `code` in a fresh interpreter (a read or write that blocks cannot hang the test
    run: 120 s, far more than the imports take) and return the JSON it prints last. In
    `cwd`, not the repository root, whose ./boosters has no compiled kernels."""
    done = python_run("-c", code, *map(str, args), capture_output=True, text=True,
                          timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def make_special(path, kind: str) -> None:
    """A FIFO, a link to a character device (as a copy of /dev/zero or /dev/full would
    be one), or a directory at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind.startswith("/dev/"):
        os.symlink(kind, path)
    else:
        os.mkdir(path)


SPECIAL_KINDS = {"fifo": "a FIFO (named pipe)", "/dev/zero": "a character device", "directory": "a directory"}

_SAVE_SCRIPT = """
import json, sys
import boosters as bst
model = bst.GBDTModel.load(sys.argv[1])
out = {}
for path in sys.argv[2:]:
    for suffix in ("", ".json"):  # both encodings
        try:
            model.save(path + suffix)
            out[path + suffix] = "saved"
        except OSError as error:
            out[path + suffix] = f"OSError: {error}"
print(json.dumps(out))
"""


def test_save_refuses_what_is_not_a_regular_file(tmp_path):
    """A FIFO, a device (through a link) or a directory is refused with an OSError naming
    the path, and left as it was (os.replace used to turn it into a regular file)."""
    source = tmp_path / "source.npz"
    source.write_bytes(model_bytes("squared"))
    paths = {}
    for kind in SPECIAL_KINDS:
        for suffix in ("", ".json"):
            path = tmp_path / f"{kind.strip('/').replace('/', '_')}{suffix}"
            make_special(path, kind)
            paths[str(path)] = kind
    result = run_isolated(_SAVE_SCRIPT, tmp_path, source, *[p for p in paths if not p.endswith(".json")])
    assert set(result) == set(paths)
    for path, kind in paths.items():
        assert result[path] == f"OSError: {path!r} is {SPECIAL_KINDS[kind]}: a model file must be a regular file"
        mode = os.lstat(path).st_mode
        assert (stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISLNK(mode) and os.readlink(path) == kind
                if kind.startswith("/dev/") else stat.S_ISDIR(mode))
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(p) for p in paths] + ["source.npz"])  # no temp file


def test_save_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "models" / "model.npz"
    target.write_bytes(b"an older model")
    link = tmp_path / "links" / "model.npz"
    link.symlink_to(target)
    dangling = tmp_path / "links" / "new.json"
    dangling.symlink_to(tmp_path / "models" / "new.json")  # its target does not exist yet
    renames, replace = [], os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (renames.append((src, dst)), replace(src, dst)))
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    model.save(link)
    model.save(dangling)
    assert link.is_symlink() and dangling.is_symlink()
    models = os.path.realpath(tmp_path / "models")
    # the temporary file is made beside the target, which the rename replaces
    assert [(os.path.dirname(src), dst) for src, dst in renames] == [
        (models, os.path.join(models, "model.npz")), (models, os.path.join(models, "new.json"))]
    assert sorted(os.listdir(tmp_path / "models")) == ["model.npz", "new.json"]
    X = query_rows()
    for path in (target, link, tmp_path / "models" / "new.json"):
        np.testing.assert_array_equal(bst.GBDTModel.load(path).predict(X), model.predict(X))  # exactly


_LOAD_SCRIPT = """
import json, sys
import boosters as bst
from boosters.convert import from_lightgbm, from_xgboost
loaders = (("load", bst.GBDTModel.load), ("from_xgboost", from_xgboost), ("from_lightgbm", from_lightgbm),
           ("from_npy", bst.Dataset.from_npy), ("from_parquet", lambda path: bst.Dataset.from_parquet(path, label="y")))
out = {}
for path in sys.argv[1:]:
    for name, load in loaders:
        try:
            load(path)
            out[f"{name} {path}"] = "loaded"
        except (OSError, ValueError) as error:
            out[f"{name} {path}"] = f"{type(error).__name__}: {error}"
print(json.dumps(out))
"""


def test_loaders_refuse_what_is_not_a_regular_file_without_blocking(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes (forever), reading a link to
    /dev/zero never ends: every model file loader and the out-of-core file sources refuse
    them, and directories, first."""
    paths = {}
    for kind in SPECIAL_KINDS:
        path = tmp_path / kind.strip("/").replace("/", "_")
        make_special(path, kind)
        paths[str(path)] = kind
    result = run_isolated(_LOAD_SCRIPT, tmp_path, *paths)
    assert len(result) == 5 * len(paths)
    data_files = {"from_npy": "a .npy file", "from_parquet": "a Parquet file"}
    for key, message in result.items():
        loader, path = key.split(" ", 1)
        refusal = f"{path!r} is {SPECIAL_KINDS[paths[path]]}: {data_files.get(loader, 'a model file')} must be a " \
                  f"regular file"
        if loader in data_files:  # its own message around the refusal
            assert message == f"ValueError: path: cannot read {path!r} as {data_files[loader]}: {refusal}"
        else:
            assert message == f"OSError: {refusal}"


def zip_of(members: dict, method=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)
    return out.getvalue()


def members_of(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


@pytest.mark.parametrize("method, name", [(zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_LZMA, "lzma")])
def test_only_stored_and_deflate_members_are_inflated(method, name):
    """Python's zip reader inflates bzip2 and LZMA too, whose ratios are unbounded (and
    bzip2's reader inflates a whole block at once): such members are refused unread."""
    valid = zip_of(members_of(model_bytes("squared")), method)
    with pytest.raises(ValueError, match=f"^not a valid boosters model: .*: compression method {name} "):
        bst.GBDTModel.from_bytes(valid)
    for stored in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):  # np.savez's and np.savez_compressed's
        X = query_rows()
        model = bst.GBDTModel.from_bytes(zip_of(members_of(model_bytes("squared")), stored))
        np.testing.assert_array_equal(model.predict(X), bst.GBDTModel.from_bytes(model_bytes("squared")).predict(X))


def test_a_bzip2_bomb_is_refused_before_it_is_inflated():
    """20 MB of zeros in a few hundred bytes of bzip2 (the hostile file of the report was
    0.55 MB and made the reader allocate 5.5 GB): refused having allocated far less."""
    n = 2_500_000
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (n,)})
    members = members_of(model_bytes("squared"))
    bomb = zip_of({name: payload for name, payload in members.items() if name != "value.npy"})
    buf = io.BytesIO(bomb)
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_BZIP2) as zf:
        zf.writestr("value.npy", header.getvalue() + bytes(8 * n))
    assert len(buf.getvalue()) < 10_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            bst.GBDTModel.from_bytes(buf.getvalue())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # bytes; inflating the member takes 20 MB
    assert "value.npy: compression method bzip2" in str(refused.value)


def with_declared_size(data: bytes, member: str, file_size=None, compress_size=None) -> bytes:
    """`data` with the sizes its zip headers (local and central) declare for `member` changed."""
    out = bytearray(data)
    name = member.encode()
    for signature, offset in ((b"PK\x03\x04", 18), (b"PK\x01\x02", 20)):  # compressed size, then uncompressed
        at = out.find(signature)
        while at >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if out[name_at:name_at + len(name)] == name:
                old_compressed, old_size = struct.unpack_from("<II", out, at + offset)
                struct.pack_into("<II", out, at + offset, compress_size or old_compressed, file_size or old_size)
            at = out.find(signature, at + 4)
    return bytes(out)


@pytest.mark.parametrize("sizes, message", [
    ({"file_size": 10**9}, r"value.npy: declares 1000000000 bytes, more than its \d+ deflate bytes can hold"),
    ({"file_size": 40}, "Bad CRC-32|bytes of data for shape"),     # less than the member inflates to
    ({"compress_size": 10**6}, "compressed sizes add up to more than the file"),
])
def test_a_members_declared_size_must_be_its_size(sizes, message):
    """The zip's declared sizes bound what is inflated: a lie is refused before inflating
    (a size deflate cannot reach, members overlapping) or when the data runs past it."""
    good = zip_of(members_of(model_bytes("squared")))
    X = query_rows()
    np.testing.assert_array_equal(bst.GBDTModel.from_bytes(with_declared_size(good, "value.npy")).predict(X),
                                  bst.GBDTModel.from_bytes(good).predict(X))  # the editing itself keeps the model
    with pytest.raises(ValueError, match="^not a valid boosters model: .*" + message):
        bst.GBDTModel.from_bytes(with_declared_size(good, "value.npy", **sizes))


_KILLED_SAVE = """
import os, sys, time
import boosters as bst
model = bst.GBDTModel.from_bytes(open(sys.argv[1], "rb").read())
os.fsync = lambda fd: (print("writing", flush=True), time.sleep(600))  # killed while the temporary file is open
model.save(sys.argv[2])
"""


def _until_writing(process) -> None:
    """Read the process's output until it says it is writing (a development install's
    rebuild may print first)."""
    for line in process.stdout:
        if line.strip() == "writing":
            return
    raise AssertionError("the saving process ended before it wrote")


@pytest.mark.skipif(os.name == "nt", reason="no flock on Windows: a temporary file is not locked there")
def test_a_save_locks_its_temporary_file_through_the_descriptor_it_writes(tmp_path, monkeypatch):
    """The temporary file was opened a second time only to be locked: another container's
    cleaning (which sees no process of that PID) could remove it in between, and the save
    failed with FileNotFoundError. It is locked through the descriptor it is written with,
    and the lock is held until it is renamed."""
    import fcntl

    real_open, real_replace = os.open, os.replace

    def open_after_a_cleaning(path, flags, *args):
        if ".boosters-tmp-" in os.fsdecode(path) and not flags & os.O_CREAT:  # opened again: removed first
            os.unlink(path)
        return real_open(path, flags, *args)

    def replace_once_locked(source, target):
        other = real_open(source, os.O_RDONLY)  # another open file: its flock conflicts with the save's
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
        real_replace(source, target)

    monkeypatch.setattr(os, "open", open_after_a_cleaning)
    monkeypatch.setattr(os, "replace", replace_once_locked)
    model = bst.GBDTModel.from_bytes(model_bytes("squared"))
    model.save(tmp_path / "model.npz")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["model.npz"]
    assert (tmp_path / "model.npz").read_bytes() == model_bytes("squared")


def test_a_save_killed_midway_leaves_a_temporary_file_the_next_save_removes(tmp_path):
    """A process killed (SIGKILL) while it saves leaves its temporary file beside the target;
    the next save of that target removes it, and never the temporary file of a live save
    (locked, whose PID runs)."""
    source = tmp_path / "source.npz"
    source.write_bytes(model_bytes("squared"))
    target = tmp_path / "model.npz"
    killed = python_popen("-c", _KILLED_SAVE, str(source), str(target),
                              stdout=subprocess.PIPE, text=True)
    try:
        _until_writing(killed)  # blocks until the temporary file is being written
    finally:
        killed.kill()
        killed.wait(timeout=60)
    left = [name for name in os.listdir(tmp_path) if name.startswith("model.npz.")]
    assert len(left) == 1 and f".boosters-tmp-{killed.pid}-" in left[0]
    live = python_popen("-c", _KILLED_SAVE, str(source), str(tmp_path / "other.npz"),
                            stdout=subprocess.PIPE, text=True)
    try:
        _until_writing(live)
        bst.GBDTModel.from_bytes(source.read_bytes()).save(target)
        bst.GBDTModel.from_bytes(source.read_bytes()).save(tmp_path / "other.npz")  # beside a live save
        names = sorted(os.listdir(tmp_path))
        assert [n for n in names if n.startswith("model.npz.")] == []  # the dead process's: removed
        assert len([n for n in names if n.startswith(f"other.npz.boosters-tmp-{live.pid}-")]) == 1  # kept
    finally:
        live.kill()
        live.wait(timeout=60)
    assert bst.GBDTModel.load(target).to_bytes() == source.read_bytes()
