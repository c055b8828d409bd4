#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, doc, golden, parity,
# shaders, CLI), then the Python package built into .venv and its pytest suite.
# Arguments go to `cargo test` (e.g. `./test.sh golden`).
set -euo pipefail
cd "$(dirname "$0")"
# The GPU half of the tests skips quietly without an adapter (CI=true makes
# that a failure); say so up front on a Linux machine with no Vulkan driver.
if [ "$(uname)" = Linux ] && ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then
    echo "note: no Vulkan driver here, so the GPU tests will be skipped" \
        "(apt-get install mesa-vulkan-drivers gives the software adapter)" >&2
fi
cargo test --workspace "$@"
# The integration tests again with the CPU's loops in their AVX2 form
# (`sinew_core::simd::form`), which a CPU with AVX-512 otherwise never runs.
if [ $# -eq 0 ] && grep -q avx512f /proc/cpuinfo 2>/dev/null; then
    SINEW_SIMD=avx2 cargo test --test integration
fi

# The Python side: a venv with maturin, numpy and pytest; the extension is
# built in debug into the same target/ (cargo reuses what the Rust tests
# built). torch and mjlab are not installed: their tests print why they skip.
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
export VIRTUAL_ENV="$PWD/.venv"
.venv/bin/python -m pip install -q --disable-pip-version-check "maturin==1.16.0" numpy pytest
.venv/bin/maturin develop -q --locked
.venv/bin/python -m pytest -q -rs --doctest-modules python/sinew python/tests
