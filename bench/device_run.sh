#!/usr/bin/env bash
# The device run: bench/gpu_splat.py on a lent NVIDIA GPU under moderngl + EGL.
# Hand it to the device tool as `bash bench/device_run.sh` with carry [".gl", ".whl"];
# see bench/device.md for fetching those two folders here first.
# Extra arguments go to bench/gpu_splat.py (e.g. --no-extras, --repeats 50).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source bench/moderngl_env.sh || exit 1
export BENCH_COMMAND="bash bench/device_run.sh${*:+ $*}"

out="${OUT:-bench/results}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
python3 bench/gpu_splat.py --out "$out" "$@" 2>&1 | tee "$out/gpu_splat.log"
rc=${PIPESTATUS[0]}
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 \
    | sed 's/^/after: /' | tee -a "$out/nvidia-smi.txt"
exit "$rc"
