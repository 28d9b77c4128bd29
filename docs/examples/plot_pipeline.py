"""
scikit-learn pipelines and grid search
======================================

``boosters.sklearn.GBDTClassifier`` is a scikit-learn estimator: it goes into a
``Pipeline``, and ``GridSearchCV`` tunes it through the pipeline's parameter names. Here
a ``ColumnTransformer`` scales the numeric columns of a pandas frame and passes a
``category`` column through unchanged; the classifier takes that column as a categorical
feature, with no one-hot encoding, and missing values (NaN) need no imputer.
"""

# %%
# Data: scikit-learn's ``make_classification`` (no download), a categorical column
# ``region`` that decides the class of 30% of the rows, and 5% of one column missing.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from boosters.sklearn import GBDTClassifier

X_num, y = make_classification(n_samples=1200, n_features=6, n_informative=4, random_state=0)
rng = np.random.default_rng(0)
X = pd.DataFrame(X_num, columns=[f"x{i}" for i in range(6)])
region = rng.choice(["north", "south", "east", "west"], size=len(X))
y = np.where(rng.random(len(X)) < 0.3, region == "north", y).astype(int)  # 30% of rows: class 1 iff north
X["region"] = pd.Categorical(region)
X.loc[rng.random(len(X)) < 0.05, "x0"] = np.nan
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

# %%
# The pipeline: the scaler does not change what a tree can split (it is monotone); it
# stands for any preprocessing step. ``set_output(transform="pandas")`` keeps a frame,
# so the ``category`` dtype of ``region`` reaches the classifier.
numeric = [c for c in X.columns if c != "region"]
prep = ColumnTransformer([("scale", StandardScaler(), numeric), ("cat", "passthrough", ["region"])],
                         verbose_feature_names_out=False).set_output(transform="pandas")
pipe = Pipeline([("prep", prep), ("gbdt", GBDTClassifier(n_estimators=50, n_threads=1))])

# %%
# Grid search over two of the classifier's parameters, 3-fold cross-validation.
grid = GridSearchCV(pipe, {"gbdt__max_depth": [2, 4], "gbdt__learning_rate": [0.05, 0.2]}, cv=3)
grid.fit(X_train, y_train)
print("best parameters:", grid.best_params_)
print(f"cross-validated accuracy {grid.best_score_:.3f}, test accuracy {grid.score(X_test, y_test):.3f}")
booster = grid.best_estimator_.named_steps["gbdt"].booster_
print("categorical features:", [booster.feature_names[i] for i in booster.categorical_features])

# %%
# Mean cross-validated accuracy of each parameter pair.
results = pd.DataFrame(grid.cv_results_)
labels = [f"depth {p['gbdt__max_depth']}, lr {p['gbdt__learning_rate']}" for p in results["params"]]
fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(labels, results["mean_test_score"], xerr=results["std_test_score"])
ax.set_xlim(results["mean_test_score"].min() - 0.05, 1.0)
ax.set_xlabel("mean cross-validated accuracy")
fig.tight_layout()
