#!/usr/bin/env bash
# Times the GPU kernels of credence::backend (issue #7) against their bytes-moved / FLOP floors
# (arithmetic in the credence::backend module docs and benches/README.md). Needs an NVIDIA GPU
# with a driver, and NVRTC: the pip wheel nvidia-cuda-nvrtc-cu12 in .venv is found through
# NVRTC_LIB_DIR (set here when unset). Arguments go to the example:
#   benches/gpu.sh [S N K] [M POINTS] [REPEATS]     (defaults 16 50000 1000 10 1000000 3)
# Kernel 4 runs at fixed sizes: 100 MLPs (d = 10) over 10^5 points, then its stochastic
# passes on the same points: 50 MC-dropout passes (p = 0.1), 50 SWAG weight samples (rank 20)
# with their forward passes, and 1000 SWAG draws alone.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${NVRTC_LIB_DIR:-}" ] && [ -x .venv/bin/python ]; then
  NVRTC_LIB_DIR=$(.venv/bin/python -c "import nvidia.cuda_nvrtc, os; print(os.path.join(list(nvidia.cuda_nvrtc.__path__)[0], 'lib'))" 2>/dev/null || true)
  export NVRTC_LIB_DIR
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cargo run --release --locked -p credence --example gpu_timing -- "$@"
# Kernel 3 (batched ChEES): 1000 designs of 10 methods x 50 realizations, GPU against CPU.
cargo run --release --locked -p credence --example gpu_chees_timing -- ${CHEES_ARGS:-1000 10 50}
