#!/usr/bin/env bash
# Set up the development environment for GPU Particles:
#   .venv/ (CPython 3.13) with bpy==5.2.3, numpy, pytest, hypothesis,
#   fake-bpy-module, ruff, moderngl and openjd-cli (runs farm/openjd's job template),
#   plus Mesa's EGL so `gpu.init()` works headless.
#
# Idempotent: a stamp in the venv makes a second run a one-line no-op.
#
# Environment:
#   GPU_PARTICLES_VENV=DIR              venv location (default: .venv at the repo root)
#   GPU_PARTICLES_FORCE_BUILD_PYTHON=1  ignore python3.13 on PATH / pyenv and use
#                                       (or build) CPython from Debian trixie's source
#   XDG_CACHE_HOME                      cache root for built CPython (default ~/.cache)
set -euo pipefail
set -E  # ERR trap also fires inside functions and subshells

PACKAGES=(bpy==5.2.3 numpy pytest hypothesis fake-bpy-module ruff moderngl openjd-cli flip-evaluator)
PY_SERIES=3.13

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$SCRIPT")/.." && pwd)"
cd "$ROOT"

VENV="${GPU_PARTICLES_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
STAMP="$VENV/.setup-stamp"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/gpu-particles"

STEP="start"
TMPDIRS=()

step() { STEP="$1"; echo "setup: $STEP..."; }
fail() { echo "setup: FAILED at step '$STEP': $*" >&2; exit 1; }
on_err() {
    local rc=$? line=$1 cmd=$2
    trap - ERR
    # In a subshell / command substitution: leave the report to the main shell.
    [ "$BASHPID" = "$$" ] || exit "$rc"
    echo "setup: FAILED at step '$STEP': command \`$cmd\` exited with status $rc (tools/setup.sh line $line)" >&2
    exit "$rc"
}
trap 'on_err "$LINENO" "$BASH_COMMAND"' ERR
cleanup() { local d; for d in "${TMPDIRS[@]+"${TMPDIRS[@]}"}"; do rm -rf "$d"; done; }
trap cleanup EXIT
# Print the paths matching a glob, highest version first (nothing when none match).
glob_sorted() {
    local IFS= m was=0
    shopt -q nullglob && was=1
    shopt -s nullglob
    # shellcheck disable=SC2206
    m=($1)
    [ "$was" = 1 ] || shopt -u nullglob
    if [ "${#m[@]}" -gt 0 ]; then printf '%s\n' "${m[@]}" | sort -rV; fi
}
# Make a temp dir, removed on exit; its path goes to the variable named $1.
mktmp() { local d; d="$(mktemp -d "${TMPDIR:-/tmp}/gpu-particles-setup.XXXXXX")"; TMPDIRS+=("$d"); printf -v "$1" '%s' "$d"; }

# Run a command as root: directly, through sudo, or fail with a clear message.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        fail "need root to run '$*' (not root and no sudo); run it as root, then re-run make setup"
    fi
}
apt_install() {
    echo "setup:   apt-get install $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
}
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# True when $1 is a working CPython 3.13 with venv/ensurepip.
good_python() {
    [ -x "$1" ] || return 1
    "$1" -c "import sys; assert sys.version_info[:2] == (${PY_SERIES/./, })
import venv, ensurepip" >/dev/null 2>&1
}

stamp_value() {
    { cat "$SCRIPT"; printf '%s\n' "${PACKAGES[@]}"; } | sha256sum | cut -d' ' -f1
}
# The stamp is written only after the last step imported bpy and initialised the GPU; here the packages are
# found without importing them (importing bpy takes 1-2.5 s, and every `make` target runs this first).
stamp_ok() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(stamp_value)" ] &&
        "$VENV/bin/python" -c 'import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ("bpy", "numpy", "pytest")))' >/dev/null 2>&1
}

# ---------------------------------------------------------------------------
# Fast path: everything already set up by this exact script.
STEP="check stamp"
if stamp_ok; then
    echo "setup: ${VENV#"$ROOT/"} is up to date (stamp ok)"
    exit 0
fi

# Serialise concurrent runs (e.g. parallel `make test` from two shells).
mkdir -p "$CACHE_ROOT/locks"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_ROOT/locks/$(printf '%s' "$VENV" | sha256sum | cut -c1-16).lock"
    flock 9
    if stamp_ok; then
        echo "setup: ${VENV#"$ROOT/"} is up to date (set up by a concurrent run)"
        exit 0
    fi
fi

# ---------------------------------------------------------------------------
# Step 1: find a CPython 3.13.
step "find Python $PY_SERIES"
PYTHON=""
if good_python "$VENV/bin/python"; then
    PYTHON="$VENV/bin/python"
    echo "setup:   reusing the existing venv's Python ($("$PYTHON" -c 'import sys; print(sys.version.split()[0])'))"
fi
if [ -z "$PYTHON" ] && [ "${GPU_PARTICLES_FORCE_BUILD_PYTHON:-0}" != 1 ]; then
    # python3.13 on PATH (a pyenv shim that fails without PYENV_VERSION counts as absent).
    while IFS= read -r cand; do
        if good_python "$cand"; then PYTHON="$cand"; break; fi
        echo "setup:   ignoring $cand (does not run as Python $PY_SERIES with venv)"
    done < <(type -aP "python$PY_SERIES" 2>/dev/null || true)
    # pyenv-installed versions.
    if [ -z "$PYTHON" ]; then
        pyenv_root=""
        if command -v pyenv >/dev/null 2>&1; then pyenv_root="$(pyenv root 2>/dev/null || true)"; fi
        [ -n "$pyenv_root" ] || pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
        if [ -d "$pyenv_root/versions" ]; then
            while IFS= read -r cand; do
                if good_python "$cand"; then PYTHON="$cand"; break; fi
            done < <(glob_sorted "$pyenv_root/versions/$PY_SERIES*/bin/python$PY_SERIES")
        fi
    fi
fi
# Previously built CPython in the cache.
if [ -z "$PYTHON" ]; then
    while IFS= read -r marker; do
        cand="$(dirname "$marker")/bin/python$PY_SERIES"
        if good_python "$cand"; then PYTHON="$cand"; echo "setup:   using cached build $(dirname "$marker")"; break; fi
    done < <(glob_sorted "$CACHE_ROOT/cpython-$PY_SERIES.*/.build-ok")
fi
[ -z "$PYTHON" ] || echo "setup:   Python $PY_SERIES: $PYTHON"

# ---------------------------------------------------------------------------
# Step 2: build CPython 3.13 from Debian trixie's source package.
if [ -z "$PYTHON" ]; then
    step "build deps for CPython $PY_SERIES"
    missing=()
    for p in zlib1g-dev libssl-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev; do
        pkg_installed "$p" || missing+=("$p")
    done
    { command -v gcc && command -v make; } >/dev/null 2>&1 || missing+=(build-essential)
    command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
    command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: this needs a Debian-based system, or install python$PY_SERIES yourself and put it on PATH"
    if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; else echo "setup:   all present"; fi

    step "fetch python$PY_SERIES source from Debian trixie"
    # Same mirror host as the system's own sources (not the security archive).
    mirror_uri="$( {
        grep -hE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -E 's/^[[:space:]]*URIs:[[:space:]]*//' | tr ' ' '\n'
        grep -hE '^[[:space:]]*deb(-src)?[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -E 's/\[[^]]*\]//' | awk '{print $2}'
    } | grep -E '^[a-z+]+://[^/]+/debian/?$' | head -n1 || true)"
    mirror_host="$(printf '%s' "$mirror_uri" | sed -E 's#^[a-z+]+://([^/]+)/.*#\1#')"
    [ -n "$mirror_host" ] || { mirror_host=deb.debian.org; echo "setup:   no Debian mirror in the apt sources, using $mirror_host"; }
    mktmp work
    mkdir -p "$work/apt/lists/partial" "$work/src"
    echo "deb-src http://$mirror_host/debian trixie main" >"$work/apt/sources.list"
    apt_opts=(-q "-oDir::Etc::SourceList=$work/apt/sources.list" -oDir::Etc::SourceParts=/dev/null
        "-oDir::State::Lists=$work/apt/lists" -oDir::Cache::pkgcache= -oDir::Cache::srcpkgcache=
        -oAPT::Sandbox::User=root)
    echo "setup:   deb-src http://$mirror_host/debian trixie main"
    apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log" >&2; fail "apt-get update of the private trixie source list failed"; }
    (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "python$PY_SERIES") >>"$work/apt.log" 2>&1 ||
        { tail -n 20 "$work/apt.log" >&2; fail "apt-get source --download-only python$PY_SERIES failed"; }
    tarball="$(glob_sorted "$work/src/python${PY_SERIES}_$PY_SERIES.*.orig.tar.xz" | head -n1)"
    [ -n "$tarball" ] || fail "no python${PY_SERIES}_*.orig.tar.xz among the downloaded files: $(ls "$work/src")"
    version="$(basename "$tarball" | sed -E "s/^python${PY_SERIES}_([0-9.]+[a-z0-9]*)\.orig\.tar\.xz$/\1/")"
    echo "setup:   got $(basename "$tarball") (CPython $version)"

    prefix="$CACHE_ROOT/cpython-$version"
    step "build CPython $version into $prefix"
    log="$CACHE_ROOT/build-cpython-$version.log"
    rm -rf "$prefix"
    mkdir -p "$work/build"
    tar -xJf "$tarball" -C "$work/build" --strip-components=1
    echo "setup:   configure && make -j$(nproc) && make altinstall (log: $log)"
    (
        cd "$work/build"
        ./configure --prefix="$prefix" && make -j"$(nproc)" && make altinstall
    ) >"$log" 2>&1 || { tail -n 30 "$log" >&2; fail "CPython build failed, full log in $log"; }

    step "verify CPython $version"
    "$prefix/bin/python$PY_SERIES" -c 'import ssl, zlib, ctypes, lzma, bz2, sqlite3, venv, ensurepip' ||
        fail "the built Python lacks a module bpy needs (missing -dev package at build time?); see $log"
    touch "$prefix/.build-ok"
    ln -sfn "cpython-$version" "$CACHE_ROOT/cpython-$PY_SERIES"
    PYTHON="$prefix/bin/python$PY_SERIES"
    echo "setup:   Python $PY_SERIES: $PYTHON"
fi

# ---------------------------------------------------------------------------
# Step 3: Mesa EGL for headless gpu.init().
step "Mesa EGL"
egl_ok=1
ldconfig -p 2>/dev/null | grep -q 'libEGL\.so\.1 ' || egl_ok=0
ldconfig -p 2>/dev/null | grep -q 'libEGL_mesa\.so\.0 ' || egl_ok=0
if [ ! -e /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so ] && ! ls /usr/lib/x86_64-linux-gnu/libgallium* >/dev/null 2>&1; then
    egl_ok=0
fi
if [ "$egl_ok" = 1 ]; then
    echo "setup:   libEGL, libEGL_mesa and the software rasteriser are present"
else
    apt_install libegl1 libegl-mesa0 libgl1-mesa-dri
fi

# ---------------------------------------------------------------------------
# Step 4: venv and packages.
step "venv ${VENV#"$ROOT/"}"
if [ "$PYTHON" != "$VENV/bin/python" ]; then
    if [ -e "$VENV" ]; then
        echo "setup:   recreating ${VENV#"$ROOT/"} (its Python is missing or not $PY_SERIES)"
        "$PYTHON" -m venv --clear "$VENV"
    else
        "$PYTHON" -m venv "$VENV"
    fi
fi

step "pip install ${PACKAGES[*]}"
piplog="$VENV/.setup-pip.log"
rm -f "$STAMP"
# Uses the machine's pip configuration (index URLs, find-links) as it is.
"$VENV/bin/python" -m pip install --progress-bar off "${PACKAGES[@]}" >"$piplog" 2>&1 ||
    { grep -v '^WARNING: Location' "$piplog" | tail -n 30 >&2; fail "pip install failed, full log in $piplog"; }
grep -E '^Successfully installed' "$piplog" | sed 's/^/setup:   /' || echo "setup:   all requirements already satisfied"

# ---------------------------------------------------------------------------
# Step 5: final check: bpy imports and the GPU module initialises headless.
step "GPU/EGL check"
gpu_out="$("$VENV/bin/python" -c "import bpy, gpu; gpu.init(); print('RENDERER:', gpu.platform.renderer_get())" 2>&1)" ||
    fail "bpy/GPU/EGL step failed (is Mesa EGL usable?): $(printf '%s\n' "$gpu_out" | grep -v EGL_BAD_MATCH | tail -n 20)"
renderer="$(printf '%s\n' "$gpu_out" | sed -n 's/^RENDERER: //p' | tail -n1)"
[ -n "$renderer" ] || fail "GPU/EGL step failed, no renderer reported: $(printf '%s\n' "$gpu_out" | grep -v EGL_BAD_MATCH | tail -n 20)"
echo "setup:   GPU renderer: $renderer"

stamp_value >"$STAMP"
echo "setup: done (${VENV#"$ROOT/"} ready, Python $("$VENV/bin/python" -c 'import sys; print(sys.version.split()[0])'))"
