"""Sphinx configuration: `pip install ".[docs]" && sphinx-build docs docs/_build`."""

project = "boosters"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
