"""Shared test settings: hypothesis profiles (the first call of a numba kernel compiles it, so no
per-example deadline)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=2000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
