"""Not the library: the demo, the side-by-side comparison with LightGBM / XGBoost /
scikit-learn, the synthetic benchmark datasets and their helpers
(`python -m boosters demo | compare`)."""
