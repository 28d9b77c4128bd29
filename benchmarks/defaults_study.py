"""Which defaults should boosters have? boosters against LightGBM, XGBoost, CatBoost and
scikit-learn's HistGradientBoosting (HGB) on the real datasets of `real_datasets.py`,
ranked by held-out loss. The report is docs/benchmarks/defaults.md.

    python benchmarks/defaults_study.py --run [--datasets a b] [--seeds 0 1 2] [--max-rows N]
    python benchmarks/defaults_study.py --run --boosters-params '{"lgbm": {"learning_rate": 0.1,
        "growth_strategy": "leafwise", "n_leaves": 31, "min_samples_leaf": 20}}'
    python benchmarks/defaults_study.py --run --plain [...]   # the plain protocol, below
    python benchmarks/defaults_study.py --report tables.md
    python benchmarks/defaults_study.py --gap-report gaps.md --datasets a b \
        --entries boosters:base boosters:name [--reference "catboost defaults"]

Protocol
--------
- Data: each dataset of `real_datasets.DATASETS`, at most ``--max-rows`` rows (a seeded
  subsample, the same for every seed and library). Categorical columns are pandas
  ``category`` columns of one frame that every library receives: LightGBM natively,
  XGBoost with ``enable_categorical=True`` (hist), CatBoost as ``cat_features`` (its
  columns turned into strings, a missing value the string "NA": CatBoost refuses NaN in a
  categorical column), HGB with ``categorical_features="from_dtype"``, boosters natively
  (its "auto" picks up category columns).
- Splits: per dataset and seed (0, 1, 2), one 60/20/20 train/validation/test split,
  stratified by class for classification, shared by every library and configuration.
- Target: regression ``y`` is standardised by the training split's mean and standard
  deviation (a few targets are log-transformed first, see `real_datasets`), so the test
  RMSE is in units of the training target's standard deviation. Classification labels
  are the class codes 0..k-1.
- Training: up to 2000 rounds, early stopping on the validation split after 50 rounds
  without improvement of the objective's own validation loss (RMSE, log loss,
  multiclass log loss). LightGBM: the ``early_stopping(50)`` callback; XGBoost:
  ``early_stopping_rounds=50``; CatBoost: ``early_stopping_rounds=50`` with
  ``use_best_model`` (its default with an eval set); HGB: ``early_stopping=True,
  n_iter_no_change=50`` with ``X_val, y_val``, ``scoring="loss"``, tol 1e-7 (its default);
  boosters: ``early_stopping_rounds=50``. LightGBM, XGBoost, CatBoost and boosters predict
  with the trees up to the best round; HGB keeps its trees up to the stop (50 rounds past
  its best; that is HGB's behaviour, and part of what its defaults are).
- Plain protocol (``--plain``, configurations "plain" and "plain-candidate"): each
  library's own round count (LightGBM, XGBoost, HGB, boosters 100; CatBoost 1000), no
  validation data (HGB's ``early_stopping="auto"`` still turns on above 10,000 rows,
  with its own split of the training rows): what a user who calls ``fit(X, y)`` gets.
- Score: test RMSE (regression) or log loss (binary, multiclass; probabilities clipped to
  [1e-15, 1 - 1e-15]). Per dataset the libraries are ranked on the loss averaged over the
  seeds (rank 1 is the lowest; ties share the mean rank); the tables give the mean rank
  over datasets, the number of datasets won, and the mean over datasets of the loss
  relative to the best of the compared set (1.00 = always the best).
- Threads: one for every library (``n_jobs=1`` / ``thread_count=1`` / ``n_threads=1``, and
  OMP_NUM_THREADS=1 plus threadpoolctl for HGB). Fit time is the wall time of the fit call
  (for boosters: Dataset construction and training), validation scoring included.
- Configurations: "defaults": each library's own defaults, only the round budget, early
  stopping, threads and seed set (CatBoost then picks its learning rate from the train
  size and the 2000-iteration budget). "matched": learning rate 0.05, 31 leaves leaf-wise
  (LightGBM ``num_leaves``; XGBoost ``grow_policy="lossguide", max_leaves=31,
  max_depth=0``; HGB ``max_leaf_nodes``; boosters ``growth_strategy="leafwise"``;
  CatBoost: its symmetric trees of depth 6, its default), 20 rows per leaf (LightGBM
  ``min_child_samples``, HGB ``min_samples_leaf``, boosters ``min_samples_leaf``; XGBoost
  and CatBoost's symmetric trees have no row count limit), 255 value bins (LightGBM
  ``max_bin=255``, XGBoost ``max_bin=255``, HGB ``max_bins=255``, boosters ``max_bins=256``
  which counts the missing-value bin, CatBoost ``border_count=254``); everything else at
  each library's defaults.
- boosters candidates: ``--boosters-params '{"name": {GBDTConfig parameters}}'`` adds
  library "boosters:name", trained with those parameters (boosters', LightGBM's or
  XGBoost's names; the same round budget and early stopping). ``"learning_rate":
  "catboost"`` is CatBoost's rule for its automatic learning rate (CPU, use_best_model,
  `catboost_learning_rate`). The report ranks each candidate against the other four
  libraries' defaults.
- Cache: one JSON file per (dataset, seed, library, configuration) under ``--cache``; a
  run skips what is there, so an interrupted run resumes.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from real_datasets import BINARY, DATASETS, MULTICLASS, REGRESSION, load, n_classes  # noqa: E402

ROUNDS, PATIENCE = 2000, 50
LIBRARIES = ("boosters", "lightgbm", "xgboost", "catboost", "hgb")
CACHE = pathlib.Path(__file__).parent / ".defaults_study_cache"
warnings.filterwarnings("ignore", message=".*eval_set.*deprecated")  # LightGBM 4.7's sklearn API


# --- data ------------------------------------------------------------------------------

def split(X: pd.DataFrame, y: np.ndarray, task: str, seed: int):
    """60/20/20 train/validation/test, stratified for classification."""
    from sklearn.model_selection import train_test_split
    strat = None if task == REGRESSION else y
    idx = np.arange(len(y))
    rest, test = train_test_split(idx, test_size=0.2, random_state=seed, stratify=strat)
    strat = None if task == REGRESSION else y[rest]
    train, val = train_test_split(rest, test_size=0.25, random_state=seed, stratify=strat)
    y = y.astype(np.float64) if task == REGRESSION else y
    if task == REGRESSION:
        mean, std = y[train].mean(), y[train].std()
        y = (y - mean) / std
    parts = [(X.iloc[i].reset_index(drop=True), y[i]) for i in (train, val, test)]
    return parts


def test_loss(task: str, y: np.ndarray, pred: np.ndarray, k: int) -> float:
    if task == REGRESSION:
        return float(np.sqrt(np.mean((pred - y) ** 2)))
    p = np.clip(pred, 1e-15, 1 - 1e-15)
    if task == BINARY:
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    p = p / p.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


def catboost_learning_rate(task: str, n_rows: int, iterations: int, best_model: bool = True) -> float:
    """CatBoost's automatic learning rate (CPU; boost_from_average at its default: on for
    RMSE, off for Logloss and MultiClass; `best_model`: use_best_model, on with an eval
    set): ``exp(A log N + B) * (T / 1000) ** C`` with N training rows and T iterations,
    capped at 0.5, rounded to 6 decimals (catboost/libs/train_lib/options_helper.cpp,
    TAutoLRParamsGuesser)."""
    a, b, c = ({REGRESSION: (0.157, -4.062, -0.61), BINARY: (0.247, -5.158, -0.435),
                MULTICLASS: (0.02, -2.364, -0.382)} if best_model else
               {REGRESSION: (0.158, -4.287, -0.813), BINARY: (0.427, -7.525, -0.917),
                MULTICLASS: (0.051, -2.889, -0.845)})[task]
    return round(min(math.exp(a * math.log(n_rows) + b) * (iterations / 1000) ** c, 0.5), 6)


# --- one fit per library ---------------------------------------------------------------
# Each returns (test predictions: values, P(class 1) or class probabilities; rounds kept).
# `early`: the round budget and early stopping on the validation split; without it (the
# "plain" protocol) each library's own n_estimators and no validation data.

def fit_boosters(parts, task, k, params, seed, early=True):
    import boosters as bst
    (Xtr, ytr), (Xva, yva), (Xte, _) = parts
    params = dict(params)
    if params.get("learning_rate") == "catboost":
        rounds = ROUNDS if early else params.get("n_estimators", bst.GBDTConfig().n_estimators)
        params["learning_rate"] = catboost_learning_rate(task, len(ytr), rounds, best_model=early)
    objective = {REGRESSION: bst.Objective.squared, BINARY: bst.Objective.logistic,
                 MULTICLASS: lambda: bst.Objective.softmax(k)}[task]()
    if early:
        params.update(n_estimators=ROUNDS, early_stopping_rounds=PATIENCE)
    cfg = bst.GBDTConfig(objective=objective, seed=seed, **params)
    val = bst.Dataset(Xva, yva.astype(np.float64)) if early else None
    model = bst.GBDTModel.train(bst.Dataset(Xtr, ytr.astype(np.float64)), config=cfg, val_set=val, n_threads=1)
    pred = model.predict(Xte, n_threads=1)
    best = model.best_iteration
    return pred, (best + 1 if best is not None else model.n_trees // max(k, 1))


def fit_lightgbm(parts, task, k, params, seed, early=True):
    import lightgbm as lgb
    (Xtr, ytr), (Xva, yva), (Xte, _) = parts
    cls = lgb.LGBMRegressor if task == REGRESSION else lgb.LGBMClassifier
    model = cls(n_jobs=1, random_state=seed, verbose=-1, **({"n_estimators": ROUNDS} if early else {}), **params)
    if early:
        model.fit(Xtr, ytr, eval_set=[(Xva, yva)], callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
    else:
        model.fit(Xtr, ytr)
    pred = model.predict(Xte) if task == REGRESSION else model.predict_proba(Xte)
    return (pred[:, 1] if task == BINARY else pred), (model.best_iteration_ or model.n_estimators_)


def fit_xgboost(parts, task, k, params, seed, early=True):
    import xgboost as xgb
    (Xtr, ytr), (Xva, yva), (Xte, _) = parts
    cls = xgb.XGBRegressor if task == REGRESSION else xgb.XGBClassifier
    budget = {"n_estimators": ROUNDS, "early_stopping_rounds": PATIENCE} if early else {}
    model = cls(enable_categorical=True, tree_method="hist", n_jobs=1, random_state=seed, **budget, **params)
    model.fit(Xtr, ytr, **({"eval_set": [(Xva, yva)], "verbose": False} if early else {}))
    pred = model.predict(Xte) if task == REGRESSION else model.predict_proba(Xte)
    rounds = model.best_iteration + 1 if early else model.get_booster().num_boosted_rounds()
    return (pred[:, 1] if task == BINARY else pred), rounds


def _catboost_frame(X: pd.DataFrame, cats: list[str]) -> pd.DataFrame:
    X = X.copy()
    for c in cats:
        X[c] = X[c].astype(object).where(X[c].notna(), "NA").astype(str)
    return X


def fit_catboost(parts, task, k, params, seed, early=True):
    import catboost as cb
    (Xtr, ytr), (Xva, yva), (Xte, _) = parts
    cats = list(Xtr.select_dtypes("category").columns)
    Xtr, Xva, Xte = (_catboost_frame(X, cats) for X in (Xtr, Xva, Xte))
    cls = cb.CatBoostRegressor if task == REGRESSION else cb.CatBoostClassifier
    loss = {REGRESSION: "RMSE", BINARY: "Logloss", MULTICLASS: "MultiClass"}[task]
    budget = {"iterations": ROUNDS, "early_stopping_rounds": PATIENCE} if early else {}
    model = cls(loss_function=loss, thread_count=1, random_seed=seed, verbose=False, allow_writing_files=False,
                **budget, **params)
    model.fit(Xtr, ytr, cat_features=cats, **({"eval_set": (Xva, yva)} if early else {}))
    pred = model.predict(Xte) if task == REGRESSION else model.predict_proba(Xte)
    rounds = model.get_best_iteration() + 1 if early else model.tree_count_
    return (pred[:, 1] if task == BINARY else pred), rounds


def fit_hgb(parts, task, k, params, seed, early=True):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits
    (Xtr, ytr), (Xva, yva), (Xte, _) = parts
    cls = HistGradientBoostingRegressor if task == REGRESSION else HistGradientBoostingClassifier
    budget = dict(max_iter=ROUNDS, early_stopping=True, n_iter_no_change=PATIENCE, scoring="loss") if early else {}
    model = cls(categorical_features="from_dtype", random_state=seed, **budget, **params)
    with threadpool_limits(1):
        model.fit(Xtr, ytr, **({"X_val": Xva, "y_val": yva} if early else {}))
        pred = model.predict(Xte) if task == REGRESSION else model.predict_proba(Xte)
    return (pred[:, 1] if task == BINARY else pred), model.n_iter_


FIT = {"boosters": fit_boosters, "lightgbm": fit_lightgbm, "xgboost": fit_xgboost, "catboost": fit_catboost,
       "hgb": fit_hgb}

MATCHED = {
    "boosters": dict(learning_rate=0.05, growth_strategy="leafwise", n_leaves=31, min_samples_leaf=20,
                     max_bins=256),
    "lightgbm": dict(learning_rate=0.05, num_leaves=31, min_child_samples=20, max_bin=255),
    "xgboost": dict(learning_rate=0.05, grow_policy="lossguide", max_leaves=31, max_depth=0, max_bin=255),
    "catboost": dict(learning_rate=0.05, depth=6, border_count=254),
    "hgb": dict(learning_rate=0.05, max_leaf_nodes=31, min_samples_leaf=20, max_bins=255),
}


# --- runs and cache --------------------------------------------------------------------

def cache_path(cache: pathlib.Path, dataset: str, seed: int, library: str, config: str) -> pathlib.Path:
    return cache / dataset / f"seed{seed}" / f"{library.replace(':', '=')}__{config}.json"


def run_one(parts, spec, k, library, config, params, seed) -> dict:
    base = library.split(":")[0]
    start = time.perf_counter()
    pred, rounds = FIT[base](parts, spec.task, k, params, seed, early=not config.startswith("plain"))
    seconds = time.perf_counter() - start
    y_test = parts[2][1]
    return dict(dataset=spec.name, seed=seed, library=library, config=config, params=params,
                loss=test_loss(spec.task, y_test, np.asarray(pred, np.float64), k), rounds=rounds,
                fit_seconds=round(seconds, 4), n_train=len(parts[0][1]), task=spec.task)


def jobs(candidates: dict[str, dict], plain: bool) -> list[tuple[str, str, dict]]:
    """(library, configuration, parameters) to run: with early stopping, or `plain`."""
    if plain:
        out = [(lib, "plain", {}) for lib in LIBRARIES]
        return out + [(f"boosters:{name}", "plain-candidate", params) for name, params in candidates.items()]
    out = [(lib, "defaults", {}) for lib in LIBRARIES]
    out += [(lib, "matched", MATCHED[lib]) for lib in LIBRARIES]
    out += [(f"boosters:{name}", "candidate", params) for name, params in candidates.items()]
    return out


def run(datasets, seeds, max_rows, candidates, cache, only: set[str] | None, plain: bool = False) -> None:
    for name in datasets:
        X, y, spec = load(name, max_rows=max_rows)
        k = n_classes(y, spec)
        for seed in seeds:
            parts = split(X, y, spec.task, seed)
            for library, config, params in jobs(candidates, plain):
                if only and library not in only and config not in only:
                    continue
                path = cache_path(cache, name, seed, library, config)
                if path.exists() and json.loads(path.read_text()).get("params") == params:
                    continue
                result = run_one(parts, spec, k, library, config, params, seed)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(result))
                print(f"{name:16s} seed {seed} {library:24s} {config:9s} loss {result['loss']:.5f} "
                      f"rounds {result['rounds']} {result['fit_seconds']:.2f} s", flush=True)


# --- report ----------------------------------------------------------------------------

def read_results(cache: pathlib.Path) -> pd.DataFrame:
    rows = [json.loads(p.read_text()) for p in sorted(cache.glob("*/seed*/*.json"))]
    df = pd.DataFrame(rows)
    df["entry"] = df["library"] + " " + df["config"]
    df.loc[df["config"] == "candidate", "entry"] = df["library"]
    df.loc[df["config"] == "plain-candidate", "entry"] = df["library"] + " (plain)"
    return df


def compare(df: pd.DataFrame, entries: list[str], datasets: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-dataset mean loss over seeds of `entries` (only seeds every entry has), and the
    summary: mean rank, wins, mean relative loss, median fit seconds, mean rounds."""
    sub = df[df["entry"].isin(entries) & df["dataset"].isin(datasets)]
    complete = sub.groupby(["dataset", "seed"])["entry"].nunique() == len(entries)
    keep = complete[complete].index
    sub = sub.set_index(["dataset", "seed"]).loc[lambda d: d.index.isin(keep)].reset_index()
    if sub.empty:
        return pd.DataFrame(), pd.DataFrame()
    loss = sub.pivot_table(index="dataset", columns="entry", values="loss", aggfunc="mean")[entries]
    loss = loss.reindex([d for d in datasets if d in loss.index])
    ranks = loss.rank(axis=1, method="average")
    summary = pd.DataFrame({
        "mean rank": ranks.mean(),
        "wins": (ranks == 1).sum(),
        "relative loss": loss.div(loss.min(axis=1), axis=0).mean(),
        "fit s (median)": sub.groupby("entry")["fit_seconds"].median(),
        "fit s (total)": sub.groupby("entry")["fit_seconds"].sum(),
        "rounds (mean)": sub.groupby("entry")["rounds"].mean(),
    }).loc[entries].sort_values("mean rank")
    return loss, summary


def markdown(frame: pd.DataFrame, fmt: str = "{:.4f}", index_name: str = "") -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join([index_name] + [str(c) for c in cols]) + " |",
             "|" + "---|" * (len(cols) + 1)]
    for idx, row in frame.iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if isinstance(v, (float, np.floating)):
                cells.append("" if np.isnan(v) else fmt.format(v))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join([str(idx)] + cells) + " |")
    return "\n".join(lines)


def summary_markdown(summary: pd.DataFrame) -> str:
    s = summary.copy()
    s["mean rank"] = s["mean rank"].map("{:.2f}".format)
    s["wins"] = s["wins"].astype(int)
    s["relative loss"] = s["relative loss"].map("{:.3f}".format)
    s["fit s (median)"] = s["fit s (median)"].map("{:.2f}".format)
    s["fit s (total)"] = s["fit s (total)"].map("{:.0f}".format)
    s["rounds (mean)"] = s["rounds (mean)"].map("{:.0f}".format)
    return markdown(s, index_name="entry")


def dataset_table(df: pd.DataFrame, datasets: list[str]) -> str:
    rows = {}
    for name in datasets:
        if name not in set(df["dataset"]):
            continue
        spec = DATASETS[name]
        X, y, _ = load(name, max_rows=10**9)
        n_train = int(df.loc[df["dataset"] == name, "n_train"].iloc[0])
        cats = X.select_dtypes("category").columns
        rows[name] = {"source": spec.source.split(":")[1], "task": spec.task, "rows in table": len(X),
                      "train rows": n_train, "features": X.shape[1], "categorical": len(cats),
                      "classes": n_classes(y, spec) if spec.task != REGRESSION else "",
                      "target": spec.target + (" (log)" if spec.log_target else "")}
    return markdown(pd.DataFrame(rows).T, fmt="{}", index_name="dataset")


def candidates_section(df: pd.DataFrame, candidates: list[str], others: list[str], datasets: list[str],
                       title: str) -> list[str]:
    """Each candidate ranked against `others` (the four other libraries), with how many
    datasets it beats LightGBM's and XGBoost's entry on."""
    base, _ = compare(df, others, datasets)
    rows, losses = [], {}
    for cand in candidates:
        loss, summary = compare(df, [cand] + others, datasets)
        if loss.empty:
            continue
        row = summary.loc[cand].rename(f"{cand} ({len(loss)} datasets)")
        for lib in ("lightgbm", "xgboost"):
            theirs = base[[o for o in others if o.startswith(lib)][0]].reindex(loss.index)
            row[f"beats {lib}"] = f"{int((loss[cand] < theirs).sum())}/{len(loss)}"
        rows.append(row)
        losses[cand] = loss[cand]
    if not rows:
        return []
    losses_frame = pd.DataFrame(losses)
    return [f"### {title}", summary_markdown(pd.DataFrame(rows).sort_values("mean rank")),
            f"#### {title}: test loss per dataset (mean of the seeds)",
            markdown(losses_frame.reindex([d for d in datasets if d in losses_frame.index])
                     .rename(columns=lambda c: c.replace("boosters:", "").replace("boosters ", "")),
                     index_name="dataset")]


def report(cache: pathlib.Path, out: pathlib.Path, datasets: list[str]) -> None:
    df = read_results(cache)
    sections = [f"<!-- written by benchmarks/defaults_study.py --report; {len(df)} fits; "
                f"{platform.machine()} {platform.python_version()} -->",
                "### Datasets", dataset_table(df, datasets)]
    for title, config in [("Each library's defaults, early stopping", "defaults"),
                          ("Matched settings, early stopping", "matched"),
                          ("Each library's defaults, plain fit (no validation data)", "plain")]:
        loss, summary = compare(df, [f"{lib} {config}" for lib in LIBRARIES], datasets)
        if loss.empty:
            continue
        sections += [f"### {title}: mean rank over {len(loss)} datasets", summary_markdown(summary),
                     f"#### {title}: test loss per dataset (mean of the seeds)",
                     markdown(loss.rename(columns=lambda c: c.split()[0]), index_name="dataset")]
    entries = set(df["entry"])
    for title, config, suffix in [("boosters candidates against the other libraries' defaults, early stopping",
                                   "defaults", ""),
                                  ("boosters candidates against the other libraries' defaults, plain fit",
                                   "plain", " (plain)")]:
        others = [f"{lib} {config}" for lib in LIBRARIES[1:]]
        fixed = [e for e in (f"boosters {config}", "boosters matched" if config == "defaults" else "") if e]
        candidates = fixed + sorted(e for e in entries if e.startswith("boosters:") and e.endswith(suffix)
                                    and (suffix or not e.endswith(" (plain)")))
        sections += candidates_section(df, candidates, others, datasets, title)
    params = df[df["library"].str.startswith("boosters:")].drop_duplicates("entry").set_index("entry")["params"]
    if len(params):
        sections += ["Candidate parameters (`\"learning_rate\": \"catboost\"` is CatBoost's rule for its "
                     "automatic rate):\n\n" + "\n".join(f"- `{e}`: `{json.dumps(p)}`" for e, p in params.items())]
    out.write_text("\n\n".join(sections) + "\n")
    print(out.read_text())


def gap_report(cache: pathlib.Path, out: pathlib.Path, datasets: list[str], entries: list[str],
               reference: str) -> None:
    """Per dataset: the test loss (mean of the seeds every entry has) of `reference` and of
    each of `entries`, each entry's gap to the reference (loss / reference's - 1) with its
    mean over the datasets, and the mean fit seconds."""
    df = read_results(cache)
    names = [reference] + entries
    loss, _ = compare(df, names, datasets)
    sub = df[df["entry"].isin(names) & df["dataset"].isin(loss.index)]
    seconds = sub.pivot_table(index="dataset", columns="entry", values="fit_seconds", aggfunc="mean")
    seconds = seconds.reindex(index=loss.index, columns=names)
    gap = loss[entries].div(loss[reference], axis=0) - 1
    short = {e: e.replace("boosters:", "") for e in names}
    gap_table = (100 * gap).rename(columns=short)
    gap_table.loc["mean"] = gap_table.mean()
    gap_table = gap_table.map("{:+.2f}".format)
    gap_table.loc["datasets within 1%"] = [f"{n}/{len(gap)}" for n in (gap < 0.01).sum()]
    seconds_table = seconds.rename(columns=short)
    seconds_table.loc["total"] = seconds_table.sum()
    seeds = sub.groupby("dataset")["seed"].nunique()
    text = [f"<!-- written by benchmarks/defaults_study.py --gap-report; reference: {reference}; "
            f"seeds per dataset: {seeds.to_dict()} -->",
            "#### Test loss (mean of the seeds)", markdown(loss.rename(columns=short), index_name="dataset"),
            f"#### Gap to {reference}, % (loss / reference's - 1; negative: better)",
            markdown(gap_table, index_name="dataset"),
            "#### Fit seconds (mean of the seeds, one thread)",
            markdown(seconds_table, fmt="{:.2f}", index_name="dataset")]
    out.write_text("\n\n".join(text) + "\n")
    print(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--report", type=pathlib.Path, help="write the markdown tables to this file")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-rows", type=int, default=50_000)
    parser.add_argument("--boosters-params", default="{}", help='{"name": {GBDTConfig parameters}, ...}')
    parser.add_argument("--plain", action="store_true",
                        help="the plain protocol: each library's own n_estimators, no validation data")
    parser.add_argument("--only", nargs="+", help="libraries or configurations to run (default: all)")
    parser.add_argument("--cache", type=pathlib.Path, default=CACHE)
    parser.add_argument("--gap-report", type=pathlib.Path,
                        help="write each of --entries' loss gap to --reference per dataset to this file")
    parser.add_argument("--entries", nargs="+", default=[], help='entries for --gap-report ("boosters:name")')
    parser.add_argument("--reference", default="catboost defaults", help="the reference entry of --gap-report")
    args = parser.parse_args()
    if args.run:
        run(args.datasets, args.seeds, args.max_rows, json.loads(args.boosters_params), args.cache,
            set(args.only) if args.only else None, plain=args.plain)
    if args.report:
        report(args.cache, args.report, args.datasets)
    if args.gap_report:
        gap_report(args.cache, args.gap_report, args.datasets, args.entries, args.reference)


if __name__ == "__main__":
    main()
