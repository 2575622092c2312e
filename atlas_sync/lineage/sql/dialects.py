"""SQL dialect names: sqlglot's own plus the connection-type mapping of OpenMetadata's lineage standard.

``resolve_dialect`` accepts a sqlglot dialect name (``spark``, ``tsql``, ...) or a database
connection type (``Doris``, ``Greenplum``, ``AzureSQL``, ...) and returns the sqlglot dialect to parse
with. Connection types are matched case-insensitively, so ``doris`` means OpenMetadata's ``Doris``
connection type and parses as MySQL, exactly as that mapping says.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialects

from atlas_sync.errors import InputError

# Connection type -> sqlglot dialect, after OpenMetadata's MAP_CONNECTION_TYPE_DIALECT. Where
# OpenMetadata names a dialect sqlglot does not have, the closest sqlglot dialect stands in:
# Impala -> hive, MariaDB -> mysql, Vertica -> postgres, Db2/Informix/ANSI -> sqlglot's generic
# dialect ("").
CONNECTION_TYPE_DIALECT: dict[str, str] = {
    "athena": "athena",
    "bigquery": "bigquery",
    "clickhouse": "clickhouse",
    "databricks": "databricks",
    "unitycatalog": "databricks",
    "db2": "",
    "hive": "hive",
    "impala": "hive",
    "mysql": "mysql",
    "oracle": "oracle",
    "postgres": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "deltalake": "spark",
    "sqlite": "sqlite",
    "mssql": "tsql",
    "azuresql": "tsql",
    "teradata": "teradata",
    "mariadb": "mysql",
    "singlestore": "mysql",
    "exasol": "exasol",
    "trino": "trino",
    "vertica": "postgres",
    "greenplum": "postgres",
    "doris": "mysql",
    "starrocks": "starrocks",
    "microsoftfabric": "fabric",
    "informix": "",
    # Aliases people type for dialects (OpenMetadata's Dialect enum names).
    "ansi": "",
    "sparksql": "spark",
    "sqlserver": "tsql",
    "postgresql": "postgres",
    "presto": "presto",
}

SQLGLOT_DIALECTS: tuple[str, ...] = tuple(d.value for d in Dialects if d.value)


def resolve_dialect(name: str | None) -> str:
    """The sqlglot dialect for a sqlglot dialect name or a connection type (None/'' = generic SQL)."""
    if name is None or name.strip() == "":
        return ""
    key = name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key in CONNECTION_TYPE_DIALECT:
        return CONNECTION_TYPE_DIALECT[key]
    if name.strip().lower() in SQLGLOT_DIALECTS:
        return name.strip().lower()
    raise InputError(
        f"unknown SQL dialect {name!r}",
        hint="use a sqlglot dialect ("
        + ", ".join(sorted(SQLGLOT_DIALECTS))
        + ") or a connection type such as doris, greenplum, azuresql",
    )
