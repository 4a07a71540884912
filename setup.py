# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Build script: compiles the Cython kernels in ``dpsk/_core``.

Every ``dpsk/_core/*.pyx`` file becomes the extension ``dpsk._core.<name>`` (full dotted
name, so extension types pickle). All kernels link numpy's static ``npyrandom`` and
``npymath`` libraries so they can call the samplers declared in
``numpy/random/c_distributions.pxd`` on a Generator's ``bitgen_t``. C sources under
``dpsk/_core/src`` are compiled into the extensions named in ``C_SOURCES``.

Set ``DPSK_ENABLE_DEBUG_CYTHON_DIRECTIVES=1`` to compile with bounds checking on.
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
NUMPY_DIR = Path(numpy.__file__).parent

# One place for the Cython directives (scikit-learn's set).
DEBUG = os.environ.get("DPSK_ENABLE_DEBUG_CYTHON_DIRECTIVES", "0") not in ("", "0")
COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": True,
    "profile": False,
    "embedsignature": True,
}


# Hand-written C compiled into an extension, next to its generated .c file.
C_SOURCES = {
    "_exact_sums": ["dpsk/_core/src/block_gram.c"],
    "_random": ["dpsk/_core/src/chacha20.c"],
}


def core_extensions():
    """One Extension per ``dpsk/_core/*.pyx``, linked against numpy's random library."""
    extensions = []
    for pyx in sorted((HERE / "dpsk" / "_core").glob("*.pyx")):
        extensions.append(
            Extension(
                f"dpsk._core.{pyx.stem}",
                [str(pyx.relative_to(HERE)), *C_SOURCES.get(pyx.stem, [])],
                include_dirs=[numpy.get_include()],
                library_dirs=[
                    str(NUMPY_DIR / "random" / "lib"),
                    str(NUMPY_DIR / "_core" / "lib"),
                ],
                libraries=["npyrandom", "npymath"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION")],
                extra_compile_args=["-O3"],
            )
        )
    return extensions


setup(
    ext_modules=cythonize(
        core_extensions(),
        compiler_directives=COMPILER_DIRECTIVES,
        nthreads=int(os.environ.get("DPSK_BUILD_JOBS", "0")) or None,
    ),
)
