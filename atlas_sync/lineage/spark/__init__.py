"""Spark logical plans: text and JSON parsers, the operator tree, column lineage and projections.

Entry points: :func:`atlas_sync.lineage.spark.text.parse_text`,
:func:`atlas_sync.lineage.spark.jsonplan.parse_json_plans` and
:func:`atlas_sync.lineage.spark.build.build_graph`; the readers ``spark-plan`` / ``spark-json`` live in
:mod:`atlas_sync.lineage.readers.spark_plan`.
"""
