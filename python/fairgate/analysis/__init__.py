"""Closed-form and numerical analysis helpers (no simulation): delay bounds, false-positive
probabilities, control-law poles and the like, each in its own module."""
