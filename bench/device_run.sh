#!/usr/bin/env bash
# The device run: bench/gpu_splat.py on a lent NVIDIA GPU under moderngl + EGL.
# Hand it to the device tool as `bash bench/device_run.sh` with carry [".gl", ".whl"];
# see bench/device.md for fetching those two folders here first.
# Extra arguments go to bench/gpu_splat.py (e.g. --no-extras, --repeats 50).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# GL loaders (libglvnd, libEGL, libOpenGL) from the carried debs; the NVIDIA driver is already there.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# moderngl + glcontext wheels (cp312) into a private site folder.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "device_run: wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export PYTHONUNBUFFERED=1
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
