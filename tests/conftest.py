"""Shared test set-up: the repository root on ``sys.path`` (so ``from tests.strategies import
problems`` works however pytest is started) and hypothesis profiles.

The default profile is small and deterministic (CI). To hunt for bugs by hand, run for example
``python -m pytest tests/test_plan.py --hypothesis-profile=thorough`` (random, 2000 examples).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Modest and deterministic by default: the whole suite has a CI budget of minutes, not hours.
settings.register_profile(
    "cpplan", max_examples=60, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cpplan")
