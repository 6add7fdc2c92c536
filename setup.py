"""Builds the Python module with CMake (the same target as the C++ build):
`pip install --no-build-isolation .` in a venv made with --system-site-packages
(Debian's numpy, pybind11-dev and python3-dev; nothing comes from PyPI).

KESTREL_BUILD_DIR reuses a CMake build directory (e.g. the tests' `build`);
by default `build-wheel` is configured without the tests."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.environ.get("KESTREL_BUILD_DIR", os.path.join(ROOT, "build-wheel")))
        # The interpreter the module is for: the venv's base Python (its headers and ABI).
        python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DKESTREL_BUILD_TESTS=OFF", f"-DPython3_EXECUTABLE={python}"])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_kestrel", "-j", str(os.cpu_count() or 1)])
        built = glob.glob(os.path.join(build_dir, "python", "kestrel", "_kestrel*.so"))
        if not built:
            raise RuntimeError(f"the CMake build in {build_dir} made no _kestrel module (is pybind11-dev installed?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(ext_modules=[CMakeExtension("kestrel._kestrel")], cmdclass={"build_ext": CMakeBuild})
