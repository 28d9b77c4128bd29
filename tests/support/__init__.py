"""The tests' shared helpers (not tests; pytest puts tests/ on sys.path, see pyproject.toml):

- tree_compare: the tree comparisons (assert_same_trees, assert_same_model, ... and
  against naive_grower, LightGBM and XGBoost);
- naive: naive NumPy twins of the optimized kernels;
- naive_grower: a plain NumPy gradient boosting trainer, the reference for the growth loop;
- matched_params: one training setting in boosters', LightGBM's and XGBoost's terms;
- prebinned: pre-binned data for exact tree comparisons;
- child_python: fresh interpreters started outside the repository;
- helpers several test files share: dask_clusters (the clients fixture, Dask data and
  training), model_files (the model-file tests' models, reference checker and strategies),
  numpy_references, threads, constraint_checks, random_forests, lightgbm_models.
"""
