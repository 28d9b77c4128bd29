"""Docstrings written once and shared: `fill_doc` puts named parts (the description of a
parameter that several methods take, a section that several functions end with) into the
docstrings that name them, as LightGBM's `_lgbmmodel_doc_*` templates. The parts live
beside the code they document, one place per family."""

from __future__ import annotations

import re
import textwrap

# a field: "%(name)s" alone on its line (after the line's indentation)
_FIELD = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(**parts: str):
    """A decorator that fills the fields of a function's docstring, or of a class's and
    its methods'.

    A field is ``%(name)s`` alone on a line; it is replaced by ``parts[name]``
    (dedented, so a part may be written indented or not), every line of the part
    indented as the field's line. Nothing else in the docstring changes, so braces and
    percent signs need no escaping; a field that no part names raises a KeyError.

    Parameters
    ----------
    **parts : str
        The texts of the fields, by name.

    Returns
    -------
    callable
        The decorator, returning the function or class it is given.

    Examples
    --------
    >>> from boosters._lib.docstrings import fill_doc
    >>> @fill_doc(x="x : float\\n    The value.")
    ... def f(x):
    ...     '''Twice `x`.
    ...
    ...     Parameters
    ...     ----------
    ...     %(x)s
    ...     '''
    >>> print(f.__doc__)
    Twice `x`.
    <BLANKLINE>
        Parameters
        ----------
        x : float
            The value.
    <BLANKLINE>
    """
    def decorate(obj):
        obj.__doc__ = filled(obj.__doc__, parts)
        if isinstance(obj, type):  # and the docstrings of the methods it defines
            for attr in vars(obj).values():
                function = getattr(attr, "__func__", attr)  # a staticmethod's or classmethod's
                if callable(function) and function.__doc__:
                    function.__doc__ = filled(function.__doc__, parts)
        return obj
    return decorate


def filled(doc: str, parts: dict) -> str:
    """`doc` with its fields replaced by `parts` (see `fill_doc`)."""
    def part(match: re.Match) -> str:
        indent, name = match.groups()
        return textwrap.indent(textwrap.dedent(parts[name]).strip("\n"), indent)
    return _FIELD.sub(part, doc)
