"""dpsk quickstart (placeholder until the estimators land): checks the kernels load."""

import dpsk

print(f"dpsk {dpsk.__version__}: kernels loaded")
