# import nbody on the GPU: the pytest suite against the bundle's CLI, the overhead and the CLI comparison.
#
# The wheel (built here for the GPU machine's Python 3.12: PYTHON=python3.12 with CMAKE_ARGS=-DCMAKE_CUDA_
# ARCHITECTURES=90) and pytest's wheels are carried in .whl/ and installed into /tmp/site; numpy is
# the machine's own. The module loads the bundle's libraries (GLEW, HDF5) from its lib/.
# Usage: bash scripts/gpu.sh python [bundle-dir]
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site NBODY_CLI="$PWD/$N"
section "nbody.info()"
python3 -c "import nbody, json; i = nbody.info(); print(i['version'], i['cuda'], i['fp64_engine']); print({k: v['available'] for k, v in i['pipelines'].items()})"
section "pytest python/tests"
(cd /tmp && python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1 | tail -n 15)
section "overhead: step(1) and positions"
python3 python/benchmarks/overhead.py 64 1048576
section "nbody.compare and nbody.bench beside the CLI"
python3 python/benchmarks/against_cli.py 16384 100
