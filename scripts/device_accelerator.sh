#!/usr/bin/env bash
# The accelerator benchmark on a lent GPU machine, in one call of about
# 5 minutes (at most 7.5): scripts/bench_accelerator.py in full (the risk
# at n = 1e5, 1e6 against numba on all the machine's threads; run_smc at
# 1e5 and 1e6), then the backend's tests on the GPU.
#
# The machine's image has python3 with a CUDA build of JAX, numpy 2,
# numba, scipy, scikit-learn, pandas, joblib, tqdm and matplotlib, no
# network and no `particles`: its wheel travels in .whl/ (ignored by git:
# `echo /.whl/ >> .git/info/exclude`, then `pip download --no-deps
# --only-binary=:all: --python-version 3.12 -d .whl particles==0.4`).
# The log goes to $OUT/log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/bench_accelerator}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
{
    python3 -c "import sys, numpy, numba, scipy, sklearn, jax, particles
print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba',
      numba.__version__, 'scipy', scipy.__version__, 'sklearn',
      sklearn.__version__, 'jax', jax.__version__, 'particles',
      particles.__version__, jax.devices())"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    echo "cores: $(nproc)"
    timeout 360 python3 scripts/bench_accelerator.py "$@"
    echo "exit status of the benchmark: $? (124 if cut at its time limit)"
    # the exactness checks, on the GPU this time (after the benchmark,
    # whose figures come first; numba's kernels are compiled by then)
    timeout 90 python3 -m pytest -q -p no:cacheprovider \
        tests/problem/test_accelerated_risk.py tests/smc/test_accelerated_smc.py
} 2>&1 | tee "$OUT/log"
