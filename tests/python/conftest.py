"""Paths for the Python tests: ../shared beside the checkout (KESTREL_SHARED_DIR overrides)."""
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("KESTREL_SHARED_DIR", os.path.join(ROOT, "..", "shared"))


def shared_model(name, file):
    path = os.path.join(SHARED, "models", name, file)
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing")
    return path


def assert_close_to_reference(got, ref, rel=1e-4):
    """|got - ref| <= rel * max|ref| everywhere, shapes equal (as the C++ tests' expect_close_to_reference)."""
    assert got.shape == ref.shape
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    worst = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max()) if ref.size else 0.0
    assert worst <= rel * scale, f"worst error {worst} over {rel} * max|ref| {scale}"
