"""Writes the JSON forms (``LogicalPlan.toJSON``) of two plans of this folder, in Spark's layout.

Written by hand for the tests (no Spark run): nodes and expressions are flattened in pre-order, a
field naming a child holds its index, expression lists are lists of flattened trees.
    python tests/data/spark/setdiff/make_json.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

JVM = "0f6c1d2e-5a4b-4c3d-9e8f-7a6b5c4d3e2f"
P = "org.apache.spark.sql.catalyst.plans.logical."
E = "org.apache.spark.sql.catalyst.expressions."


def attr(name: str, i: int, dtype: str = "integer") -> list[dict[str, Any]]:
    return [
        {
            "class": E + "AttributeReference",
            "num-children": 0,
            "name": name,
            "dataType": dtype,
            "nullable": True,
            "metadata": {},
            "exprId": {"product-class": E + "ExprId", "id": i, "jvmId": JVM},
            "qualifier": [],
        }
    ]


def binary(cls: str, left: list[dict[str, Any]], right: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"class": E + cls, "num-children": 2, "left": 0, "right": 1}, *left, *right]


def relation(db: str, table: str, cols: list[tuple[str, int, str]]) -> list[dict[str, Any]]:
    return [
        {
            "class": "org.apache.spark.sql.execution.datasources.LogicalRelation",
            "num-children": 0,
            "relation": None,
            "output": [attr(n, i, t) for n, i, t in cols],
            "catalogTable": {
                "product-class": "org.apache.spark.sql.catalyst.catalog.CatalogTable",
                "identifier": {
                    "product-class": "org.apache.spark.sql.catalyst.TableIdentifier",
                    "table": table,
                    "database": db,
                    "catalog": "spark_catalog",
                },
                "provider": "parquet",
            },
            "isStreaming": False,
        }
    ]


def project(items: list[list[dict[str, Any]]], child: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"class": P + "Project", "num-children": 1, "projectList": items, "child": 0}, *child]


def alias(child: list[dict[str, Any]], name: str, i: int) -> list[dict[str, Any]]:
    return [
        {
            "class": E + "Alias",
            "num-children": 1,
            "child": 0,
            "name": name,
            "exprId": {"product-class": E + "ExprId", "id": i, "jvmId": JVM},
            "qualifier": [],
            "nonInheritableMetadataKeys": "[__dataset_id, __col_position]",
        },
        *child,
    ]


def subquery_alias(db: str, table: str, child: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ident = {
        "product-class": "org.apache.spark.sql.catalyst.AliasIdentifier",
        "name": table,
        "qualifier": f"[spark_catalog, {db}]",
    }
    return [{"class": P + "SubqueryAlias", "num-children": 1, "identifier": ident, "child": 0}, *child]


def except_all() -> list[dict[str, Any]]:
    cart = [("cust_id", 1, "integer"), ("sku", 2, "string"), ("qty", 3, "integer")]
    purchases = [("cust_id", 5, "integer"), ("sku", 6, "string"), ("ts", 7, "timestamp")]
    return [
        {"class": P + "Except", "num-children": 2, "left": 0, "right": 1, "isAll": True},
        *project(
            [attr("cust_id", 1), attr("sku", 2, "string")],
            subquery_alias("shop", "cart", relation("shop", "cart", cart)),
        ),
        *project(
            [attr("cust_id", 5), attr("sku", 6, "string")],
            subquery_alias("shop", "purchases", relation("shop", "purchases", purchases)),
        ),
    ]


def exists_in_select() -> list[dict[str, Any]]:
    orders = [
        ("order_id", 0, "integer"),
        ("cust_id", 1, "integer"),
        ("amount", 2, "double"),
        ("status", 3, "string"),
    ]
    returns = [
        ("return_id", 19, "integer"),
        ("order_id", 20, "integer"),
        ("ret_ts", 21, "timestamp"),
        ("reason", 22, "string"),
    ]
    reason = binary(
        "And",
        [{"class": E + "IsNotNull", "num-children": 1, "child": 0}, *attr("reason", 22, "string")],
        binary(
            "EqualTo",
            attr("reason", 22, "string"),
            [{"class": E + "Literal", "num-children": 0, "value": "damaged", "dataType": "string"}],
        ),
    )
    join = {
        "class": P + "Join",
        "num-children": 2,
        "left": 0,
        "right": 1,
        "joinType": {
            "product-class": "org.apache.spark.sql.catalyst.plans.ExistenceJoin",
            "exists": attr("exists", 40, "boolean"),
        },
        "condition": binary("EqualTo", attr("order_id", 20), attr("order_id", 0)),
        "hint": None,
    }
    return project(
        [attr("order_id", 0), alias(attr("exists", 40, "boolean"), "returned", 41)],
        [
            join,
            *project([attr("order_id", 0)], relation("shop", "orders", orders)),
            *project(
                [attr("order_id", 20)],
                [
                    {"class": P + "Filter", "num-children": 1, "condition": reason, "child": 0},
                    *relation("shop", "returns", returns),
                ],
            ),
        ],
    )


if __name__ == "__main__":
    here = Path(__file__).parent
    for name, plan in (
        ("except_all.analyzed.json", except_all()),
        ("exists_in_select.optimized.json", exists_in_select()),
    ):
        (here / name).write_text(json.dumps(plan) + "\n", encoding="utf-8")
