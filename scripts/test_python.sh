#!/usr/bin/env bash
# The Python package as a user gets it: a fresh venv over Debian's python3 (--system-site-packages:
# it sees python3-numpy), `pip install .` from this checkout (scikit-build-core compiles
# libencrt.so alone, in its own build tree build/python-<wheel tag>, never from build/), then
# pytest on python/tests/ against the installed package.
# The tests convert fixtures with the CLI (ENCRT_CLI, default BUILD_DIR/bin/encrt, built if
# missing) and compare with reference packages from the repository's .venv (transformers,
# sentence-transformers, the all-MiniLM-L6-v2 package, pytest itself), which the fresh venv sees
# through a .pth file appended after its own site-packages (ENCRT_REFERENCE_PYTHON: another
# such venv's python).
#   scripts/test_python.sh [BUILD_DIR]       KEEP=1 keeps the venv.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc)
[[ $jobs -gt 2 ]] && jobs=2
started=$SECONDS

export ENCRT_CLI=${ENCRT_CLI:-$PWD/$build/bin/encrt}
if [[ ! -x "$ENCRT_CLI" ]]; then
  [[ -f "$build/CMakeCache.txt" ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" --target encrt_cli -j "$jobs"
fi
reference=${ENCRT_REFERENCE_PYTHON:-.venv/bin/python}
if [[ ! -x "$reference" ]] || ! "$reference" -c "import pytest" 2>/dev/null; then
  echo "test_python: $reference with pytest is missing (run scripts/setup_debian.sh)"
  exit 1
fi

venv=$(mktemp -d /tmp/encrt-python-test.XXXXXX)
if [[ "${KEEP:-0}" != 1 ]]; then trap 'rm -rf "$venv"' EXIT; fi
/usr/bin/python3 -m venv --system-site-packages "$venv"
purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
purelib "$reference" > "$(purelib "$venv/bin/python")/encrt-reference-packages.pth"

# A developer's compiler cache, when there is one (CI needs none).
if command -v ccache >/dev/null; then
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs
echo "== pip install . (into $venv)"
pip_started=$SECONDS
"$venv/bin/pip" install --disable-pip-version-check -q .
echo "== installed in $((SECONDS - pip_started)) s:"
ENCRT_TEST_VENV=$venv "$venv/bin/python" - <<'PY'
import os, encrt
here = os.path.realpath(os.path.dirname(encrt.__file__))
print(f"  encrt {encrt.__version__} (libencrt {encrt.version()}) from {here}:")
for name in sorted(os.listdir(here)):
    if not name.startswith("__pycache__"):
        print(f"    {name} {os.path.getsize(os.path.join(here, name))} bytes")
if not here.startswith(os.path.realpath(os.environ["ENCRT_TEST_VENV"]) + os.sep):
    raise SystemExit("test_python: encrt was not imported from the fresh venv")
PY

echo "== pytest python/tests"
cd python/tests
# From the test folder, so that the checkout's python/encrt is not on the path: the installed
# package is what runs. No cache folder is written into the checkout.
"$venv/bin/python" -m pytest -p no:cacheprovider -rs -q .
echo "test_python: done in $((SECONDS - started)) s"
