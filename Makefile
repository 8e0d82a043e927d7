# Quick start on a fresh machine:   make demo   then   make test
#
# Variables: PYTHON (interpreter that creates .venv), MAX_JOBS (parallel compile
# jobs, default nproc), TORCH_CUDA_ARCH_LIST (default 9.0), FORCE_CUDA=1 /
# FORCE_ONLY_CPU=1 (override CUDA detection), BENCH_ARGS (for `make bench`),
# CPP_WITH_CUDA=ON (build the C++ example's library with the CUDA kernels).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
MAX_JOBS ?= $(shell nproc)
TORCH_CUDA_ARCH_LIST ?= 9.0
CMAKE_BUILD_DIR ?= cmake-build
CPP_WITH_CUDA ?= OFF
BENCH_ARGS ?=
export MAX_JOBS TORCH_CUDA_ARCH_LIST

# torch derives CUDA_HOME from `which nvcc`; a wrapper script outside the toolkit
# misleads it, so point at the toolkit when the usual one exists.
ifeq ($(origin CUDA_HOME),undefined)
ifneq ($(wildcard /usr/local/cuda/bin/nvcc),)
export CUDA_HOME := /usr/local/cuda
endif
endif

DEPS_STAMP := $(VENV)/.batchchol-deps
BUILD_STAMP := $(VENV)/.batchchol-build
BUILD_LOG := $(VENV)/build.log
SOURCES := $(shell find csrc -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null)

.PHONY: demo test sass-check cpp-example bench clean distclean setup device-wheels

demo: $(BUILD_STAMP)
	$(PY) -m torch_batchchol.demo

test: $(BUILD_STAMP)
	$(PY) -m pytest tests -q

# tools/check_sass_descriptors.py on the built CUDA kernels that can hold cache-hinted
# copies (ptxas 13.0 encoded some into a faulting instruction: csrc/cuda/l2_hints.cuh; the
# units that include it, ~30 s of CI instead of ~75 for all); skipped when no CUDA
# kernels were built. cuobjdump and nvdisasm come from PyPI into the venv.
sass-check: $(BUILD_STAMP)
	@if $(PY) -c "import sys, torch_batchchol as tb; sys.exit(0 if tb.cuda_kernels_built() else 1)"; then \
	  $(PY) -m pip install -q 'nvidia-cuda-cuobjdump>=13' 'nvidia-cuda-nvdisasm>=13' && \
	  PATH="$$($(PY) tools/check_sass_descriptors.py --tool-path):$$PATH" \
	    $(PY) tools/check_sass_descriptors.py --including csrc/cuda/l2_hints.cuh; \
	else echo "sass-check: no CUDA kernels built, nothing to scan"; fi

bench: $(BUILD_STAMP)
	$(PY) benchmarks/bench_fixed.py $(BENCH_ARGS)

setup: $(BUILD_STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Re-run only when the requirements change.
$(DEPS_STAMP): requirements-dev.txt | $(PY)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements-dev.txt
	touch $@

# Rebuilds the extension when a source or the build script changes; ninja keeps
# the rebuild incremental (build/ holds its objects).
# Progress shows one line per compiled file; the full log stays in BUILD_LOG.
$(BUILD_STAMP): $(DEPS_STAMP) setup.py pyproject.toml $(SOURCES)
	@echo "Building torch_batchchol (MAX_JOBS=$(MAX_JOBS), full log: $(BUILD_LOG))"
	@{ $(PY) -m pip install --no-build-isolation --no-deps -v -e . 2>&1; echo "pip exit $$?"; } \
	  | tee $(BUILD_LOG) | grep -E --line-buffered '^ *\[[0-9]+/[0-9]+\]|^pip exit' \
	  | sed -u -E 's#^ *(\[[0-9]+/[0-9]+\]) .* -c [^ ]*(csrc/[^ ]+) .*#\1 \2#'
	@grep -q '^pip exit 0$$' $(BUILD_LOG) || { tail -n 80 $(BUILD_LOG); exit 1; }
	$(PY) -c "import torch_batchchol as tb; print('torch_batchchol built, CUDA kernels:', tb.cuda_kernels_built())"
	touch $@

# Wheels for a GPU machine without a package index (tools/gpu_session.sh installs .whl/
# there): the parallel / timeout pytest plugins its test mode uses, and expecttest, which
# torch.testing._internal (tests/test_pytorch_samples.py) imports and a bare torch
# environment may lack.
device-wheels: $(DEPS_STAMP)
	$(PY) -m pip download -q --no-deps -d .whl pytest-xdist execnet pytest-timeout expecttest

# The C++ example, against a CMake build of the same sources (CPU unless
# CPP_WITH_CUDA=ON), run on the CPU.
cpp-example: $(DEPS_STAMP)
	cmake -S . -B $(CMAKE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DBATCHCHOL_BUILD_EXAMPLES=ON -DBATCHCHOL_WITH_CUDA=$(CPP_WITH_CUDA) \
	  -DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch;print(torch.utils.cmake_prefix_path)')"
	cmake --build $(CMAKE_BUILD_DIR) -j $(MAX_JOBS)
	$(CMAKE_BUILD_DIR)/examples/cpp/batchchol_example cpu

clean:
	rm -rf build $(CMAKE_BUILD_DIR) torch_batchchol.egg-info *.egg-info
	rm -f torch_batchchol/_C*.so $(BUILD_STAMP)
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# Also removes the virtual environment (the next `make demo` reinstalls torch).
distclean: clean
	rm -rf $(VENV)
