"""Test helpers that are not part of the publishing API (e.g. the real-Atlas launcher)."""
