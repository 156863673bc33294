# Source on the GPU machine (carry [".gl", ".whl"]) to run the moderngl benches with the device's python3:
#   source bench/moderngl_env.sh && python3 bench/binning_bench.py
# GL loaders (libglvnd, libEGL, libOpenGL) from the carried debs (the NVIDIA driver is already there),
# moderngl + glcontext wheels (cp312) into a private site folder; see "Device recipe" in bench/README.md.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "moderngl_env: wheel install failed"; return 1; }
export PYTHONPATH=/tmp/site
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export PYTHONUNBUFFERED=1
