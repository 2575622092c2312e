"""Launchers of the real servers the tests, benches and CI use (Atlas, Kafka, PostgreSQL, MariaDB,
Superset) and the OpenLineage load producers. Not part of the installed package: run them from the
checkout's root, e.g. ``python -m tests.support.real_atlas start`` (docs/real-atlas.md)."""
