# GPU Particles: developer entry points. `make setup` builds .venv (CPython 3.13 + bpy 5.2.3).
PY := .venv/bin/python
PRESET ?= default
FRAMES ?=
RES ?=
OUT ?=
SEED ?=
COUNT ?=
SHOT ?=
CACHE ?=
TIMINGS ?=
PYTEST_ARGS ?=
KERNEL ?= simulate
HOST ?= blender
VARIANT ?= 0
BENCH_ARGS ?=
PRESETS ?=

.DEFAULT_GOAL := help
.PHONY: help setup test demo bake presets package bench bench-gpu lint module-map contact-sheet previews kernel kernels \
        features clean

help:
	@echo "GPU Particles targets:"
	@echo "  make setup     create .venv (Python 3.13, bpy 5.2.3, numpy, pytest, ...) and Mesa EGL"
	@echo "  make test      run the test suite (PYTEST_ARGS=... passed to pytest)"
	@echo "  make demo      bake the default preset, frames 1-48 at 960x540 into out/demo (or OUT=...)"
	@echo "  make bake      bake PRESET=$(PRESET) [FRAMES=1-48] [RES=WxH] [OUT=dir] [SEED=n] [COUNT=n]"
	@echo "                 [SHOT=1-240 CACHE=dir]: render FRAMES of the shot from the simulation cache's checkpoints"
	@echo "                 [TIMINGS=file.json]: seconds per start-up and bake stage (bench/startup.py reads them)"
	@echo "  make presets   list the available presets"
	@echo "  make package   build the extension zip into dist/"
	@echo "  make bench     run the CPU benchmark"
	@echo "  make bench-gpu the GPU host's benchmark in Blender: tests, bake, viewport, end-to-end (BENCH_ARGS=--skip-tests ...)"
	@echo "  make lint      ruff check addon tests bench tools farm"
	@echo "  make module-map  rewrite docs/features.md's module map from the modules' docstrings"
	@echo "  make contact-sheet  render every preset at 1080p into docs/presets.jpg (crops)"
	@echo "                 [PRESETS=\"fire snow\"]: only those presets' cells, the others kept"
	@echo "  make previews  render a short MP4 of every preset into docs/previews/ [PRESETS=\"fire snow\"]"
	@echo "  make kernel    print KERNEL=$(KERNEL) as HOST=blender|moderngl compiles it [VARIANT=n]"
	@echo "  make kernels   list every declared kernel (addon/engine/registry.py)"
	@echo "  make features  list what KERNEL=$(KERNEL) can become: its features and every variant"
	@echo "  make clean     remove dist/ and out/ (keeps .venv)"

setup:
	@bash tools/setup.sh >&2

test: setup
	$(PY) -m pytest tests -q -ra $(PYTEST_ARGS)

demo: setup
	$(PY) -m addon.cli bake --preset default --frames 1-48 --res 960x540 --out $(or $(OUT),out/demo)

bake: setup
	$(PY) -m addon.cli bake --preset $(PRESET)$(if $(FRAMES), --frames $(FRAMES))$(if $(RES), --res $(RES))$(if $(OUT), --out $(OUT))$(if $(SEED), --seed $(SEED))$(if $(COUNT), --count $(COUNT))$(if $(SHOT), --shot $(SHOT))$(if $(CACHE), --cache $(CACHE))$(if $(TIMINGS), --timings $(TIMINGS))

presets: setup
	@$(PY) -m addon.cli presets

package: setup
	$(PY) tools/package.py

bench: setup
	$(PY) bench/run_cpu.py

bench-gpu: setup
	$(PY) bench/blender_gpu.py $(BENCH_ARGS)

lint: setup
	$(PY) -m ruff check addon tests bench tools farm

module-map: setup
	$(PY) tools/module_map.py

contact-sheet: setup
	$(PY) tools/contact_sheet.py --out docs/presets.jpg$(if $(PRESETS), --update --presets $(PRESETS))

previews: setup
	$(PY) tools/previews.py --out docs/previews$(if $(PRESETS), --presets $(PRESETS))

kernel: setup
	@$(PY) -m addon.hosts show $(KERNEL) --host $(HOST) --variant $(VARIANT)

kernels: setup
	@$(PY) -m addon.hosts list

features: setup
	@$(PY) -m addon.hosts features $(KERNEL)

clean:
	rm -rf dist/ out/
