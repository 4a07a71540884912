# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Access to a numpy Generator's ``bitgen_t`` for the other kernels.

Usage in a kernel (hold the bit generator's lock whenever the GIL is released, as numpy does):

    cdef bitgen_t* state = get_bitgen(rng)
    with rng.bit_generator.lock, nogil:
        ... random_standard_normal(state) ...
"""

from numpy.random cimport bitgen_t

cdef bitgen_t* get_bitgen(object rng) except NULL
