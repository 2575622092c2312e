"""Lineage pictures: text trees (and DOT/SVG/HTML)."""
