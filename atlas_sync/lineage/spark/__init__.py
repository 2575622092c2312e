"""Spark logical plans: text and JSON parsers, the operator tree, column lineage and projections.

Entry points: :func:`atlas_sync.lineage.spark.text.parse_text`,
:func:`atlas_sync.lineage.spark.jsonplan.parse_json_plans` and
:func:`atlas_sync.lineage.spark.build.build_graph`, and for text plans read in memory that follows the
result :func:`atlas_sync.lineage.spark.stream.build_graph_streaming`; the readers ``spark-plan`` / ``spark-json`` live in
:mod:`atlas_sync.lineage.readers.spark_plan`.
"""
