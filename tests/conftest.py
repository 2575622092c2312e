"""Shared pytest setup. Keep this file small; add fixtures in the test folders' own conftest files."""

pytest_plugins = ["atlas_sync.emulator.testing"]
