#!/usr/bin/env bash
# The device run: bench/gpu_splat.py on a lent NVIDIA GPU under moderngl + EGL.
# Hand it to the device tool as `bash bench/device_run.sh` with carry [".gl", ".whl"];
# see "Device recipe" in bench/README.md for fetching those two folders here first.
# Extra arguments go to bench/gpu_splat.py, e.g.:
#   --no-extras                 everything but the other targets and counts
#   --only splat                the one-pixel splat and GL_POINTS on the three main cases (about a minute)
#   --only splat,footprint      the same and the footprints (2x2, streak, disc, bokeh) on them
#   --batch 8 --repeats 30      frames a query for ms, timed repeats
# Without a carried .gl folder (this machine: Mesa llvmpipe) it runs .venv/bin/python instead,
# with no GL set-up: `bash bench/device_run.sh --quick --only splat` checks the path before device time.
# --help prints gpu_splat.py's options and sets nothing up.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python=python3
[ -d .gl ] || python="${PYTHON:-.venv/bin/python}"
for arg in "$@"; do
    if [ "$arg" = "-h" ] || [ "$arg" = "--help" ]; then
        sed -n '2,12s/^# \{0,1\}//p' "$0"
        exec "$python" bench/gpu_splat.py --help
    fi
done
if [ -d .gl ]; then
    source bench/moderngl_env.sh || exit 1
fi
export BENCH_COMMAND="bash bench/device_run.sh${*:+ $*}"

out="${OUT:-bench/results}"
mkdir -p "$out"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
fi
"$python" bench/gpu_splat.py --out "$out" "$@" 2>&1 | tee "$out/gpu_splat.log"
rc=${PIPESTATUS[0]}
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 \
        | sed 's/^/after: /' | tee -a "$out/nvidia-smi.txt"
fi
exit "$rc"
