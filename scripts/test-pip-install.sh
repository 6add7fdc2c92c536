#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh venv made with
# --system-site-packages (nothing from PyPI: --no-index), reusing the CMake
# build directory BUILD_DIR; then the installed module runs a model from
# outside the source tree. Usage: test-pip-install.sh BUILD_DIR PYTHON
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
python=${2:-/usr/bin/python3}
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv --system-site-packages "$venv"
KESTREL_BUILD_DIR=$build "$venv/bin/pip" install -q --no-build-isolation --no-index "$root"
cd "$venv"
VENV=$venv "$venv/bin/python" - <<'PY'
import os
import numpy as np
import kestrel

assert kestrel.__file__.startswith(os.environ["VENV"]), kestrel.__file__
net = kestrel.Net()
net.load_param_mem("7767517\n2 2\nInput in 0 1 data 0=5\nSigmoid s 1 1 data y\n")
net.load_model_mem(b"")
session = net.create_session()
x = np.linspace(-3, 3, 5, dtype=np.float32)
session.set_input("data", x)
np.testing.assert_allclose(session.get("y"), 1 / (1 + np.exp(-x)), rtol=1e-6)
print("installed", kestrel.__file__)
PY
