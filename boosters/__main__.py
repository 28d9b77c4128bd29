"""Command line: `python -m boosters demo | compare | config`."""

from __future__ import annotations

import argparse
import sys


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m boosters", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="train on a built-in covertype-shaped dataset")
    demo.add_argument("--rows", type=_positive_int, default=100_000, help="rows to generate (default 100000)")
    demo.add_argument("--binary", action="store_true", help="lodgepole pine vs rest instead of 7 classes")
    demo.add_argument("--rounds", type=_positive_int, default=100, help="boosting rounds (default 100)")
    demo.add_argument("--threads", type=int, default=0, help="threads (default 0 = all cores)")
    demo.add_argument("--no-compare", action="store_true", help="skip LightGBM/XGBoost even if installed")

    compare = sub.add_parser("compare", help="boosters vs LightGBM, XGBoost, scikit-learn (matched settings)")
    compare.add_argument("--task", choices=["covertype", "covertype-multiclass", "higgs", "small", "categorical",
                                            "sparse", "higgs-subsample", "higgs-goss"], default="covertype")
    compare.add_argument("--rows", type=_positive_int, default=None, help="override the task's row count")
    compare.add_argument("--threads", type=_positive_int, nargs="+", default=[1, 2])
    compare.add_argument("--libraries", nargs="+", default=None)
    compare.add_argument("--repeats", type=_positive_int, default=1, help="keep the fastest of N fits")
    compare.add_argument("--histogram-mode", default="auto")
    compare.add_argument("--no-prefetch", action="store_true")

    sub.add_parser("config", help="print build and runtime configuration")

    args = parser.parse_args(argv)
    if args.command == "demo":
        from boosters.bench.demo import run_demo

        return run_demo(args.rows, args.binary, args.rounds, args.threads, compare=not args.no_compare)
    if args.command == "compare":
        from boosters.bench.compare import run_compare

        return run_compare(args.task, args.rows, args.threads, args.libraries, args.repeats,
                           args.histogram_mode, not args.no_prefetch)
    from boosters import show_config

    show_config()
    return 0


if __name__ == "__main__":
    sys.exit(main())
