"""A corpus of Power Query M expressions (written by hand after Microsoft's connector documentation and
the navigation Power Query writes) and the warehouse tables each reads, by hand: every connector and
navigation form the `powerbi` reader resolves, with parameters, shared expressions and native queries;
and the expressions it must not guess at (a warning naming the step)."""

from __future__ import annotations

import pytest

from atlas_sync.lineage.powerbi.mparse import MSyntaxError, parse
from atlas_sync.lineage.powerbi.mresolve import Native, Resolver, TableRef, Tables, Unresolved

PARAMS = {
    "Server": '"sql.example.com" meta [IsParameterQuery=true, Type="Text"]',
    "Db": '"sales" meta [IsParameterQuery=true, Type="Text"]',
    "SchemaName": '"dbo"',
    "Account": '"acme.snowflakecomputing.com"',
    "Host": '"adb-123.azuredatabricks.net"',
    "Shared": 'let Source = Sql.Database("sql.example.com", "sales") in Source',
    "SnowDb": 'let S = Snowflake.Databases(Account, "WH"), D = S{[Name="ANALYTICS",Kind="Database"]}[Data] in D',
    "MinYear": "2020",
}


def T(connector: str, server: str, db: str | None, schema: str | None, table: str) -> TableRef:  # noqa: N802
    return TableRef(connector, server, db, schema, table)


def N(connector: str, server: str, db: str | None, sql: str) -> Native:  # noqa: N802
    return Native(connector, server, db, sql)


SQL = "sqlserver"
CASES: list[tuple[str, str, list[TableRef], list[Native]]] = [
    # --- Sql.Database / Sql.Databases
    (
        "sql-item",
        'let Source = Sql.Database("srv", "db"), t = Source{[Schema="dbo",Item="orders"]}[Data] in t',
        [T(SQL, "srv", "db", "dbo", "orders")],
        [],
    ),
    (
        "sql-params",
        'let Source = Sql.Database(Server, Db), t = Source{[Schema=SchemaName,Item="orders"]}[Data] in t',
        [T(SQL, "sql.example.com", "sales", "dbo", "orders")],
        [],
    ),
    (
        "sql-shared",
        'let t = Shared{[Schema="dbo",Item="customers"]}[Data] in t',
        [T(SQL, "sql.example.com", "sales", "dbo", "customers")],
        [],
    ),
    (
        "sql-databases",
        'let S = Sql.Databases("srv"), d = S{[Name="db"]}[Data], t = d{[Schema="dbo",Item="x"]}[Data] in t',
        [T(SQL, "srv", "db", "dbo", "x")],
        [],
    ),
    (
        "sql-query-option",
        'Sql.Database("srv", "db", [Query="SELECT id FROM dbo.orders"])',
        [],
        [N(SQL, "srv", "db", "SELECT id FROM dbo.orders")],
    ),
    (
        "sql-query-escapes",
        'Sql.Database("srv", "db", [Query="SELECT ""id"" FROM dbo.orders#(lf)WHERE 1=1", CommandTimeout=#duration(0,0,5,0)])',
        [],
        [N(SQL, "srv", "db", 'SELECT "id" FROM dbo.orders\nWHERE 1=1')],
    ),
    (
        "sql-nativequery",
        'let S = Sql.Database("srv", "db"), q = Value.NativeQuery(S, "SELECT * FROM dbo.t", null, [EnableFolding=true]) in q',
        [],
        [N(SQL, "srv", "db", "SELECT * FROM dbo.t")],
    ),
    (
        "sql-nativequery-concat",
        'let S = Sql.Database(Server, Db), q = Value.NativeQuery(S, "SELECT * FROM " & SchemaName & ".t") in q',
        [],
        [N(SQL, "sql.example.com", "sales", "SELECT * FROM dbo.t")],
    ),
    (
        "sql-quoted-steps",
        'let Source = Sql.Database("srv", "db"), #"dbo orders" = Source{[Schema="dbo",Item="orders"]}[Data], #"Changed Type" = Table.TransformColumnTypes(#"dbo orders",{{"id", Int64.Type}}) in #"Changed Type"',
        [T(SQL, "srv", "db", "dbo", "orders")],
        [],
    ),
    (
        "sql-steps-chain",
        'let S = Sql.Database("srv","db"), a = S{[Schema="s",Item="t"]}[Data], b = Table.SelectRows(a, each [x] > 1), c = Table.RemoveColumns(b, {"y"}), d = Table.Sort(c, {{"x", Order.Ascending}}) in d',
        [T(SQL, "srv", "db", "s", "t")],
        [],
    ),
    # --- Snowflake
    (
        "snowflake-kinds",
        'let S = Snowflake.Databases("acme.snowflakecomputing.com","WH"), D = S{[Name="ANALYTICS",Kind="Database"]}[Data], Sc = D{[Name="MART",Kind="Schema"]}[Data], T = Sc{[Name="ORDERS",Kind="Table"]}[Data] in T',
        [T("snowflake", "acme.snowflakecomputing.com", "ANALYTICS", "MART", "ORDERS")],
        [],
    ),
    (
        "snowflake-view",
        'let S = Snowflake.Databases(Account,"WH",[Role="BI"]), D = S{[Name="ANALYTICS",Kind="Database"]}[Data], Sc = D{[Name="MART",Kind="Schema"]}[Data], V = Sc{[Name="V_ORDERS",Kind="View"]}[Data] in V',
        [T("snowflake", "acme.snowflakecomputing.com", "ANALYTICS", "MART", "V_ORDERS")],
        [],
    ),
    (
        "snowflake-chained",
        'Snowflake.Databases("a.snowflakecomputing.com","WH"){[Name="DB",Kind="Database"]}[Data]{[Name="S",Kind="Schema"]}[Data]{[Name="T",Kind="Table"]}[Data]',
        [T("snowflake", "a.snowflakecomputing.com", "DB", "S", "T")],
        [],
    ),
    (
        "snowflake-shared-db",
        'let Sc = SnowDb{[Name="MART",Kind="Schema"]}[Data], T = Sc{[Name="CUSTOMERS",Kind="Table"]}[Data] in T',
        [T("snowflake", "acme.snowflakecomputing.com", "ANALYTICS", "MART", "CUSTOMERS")],
        [],
    ),
    (
        "snowflake-nokind",
        'let S = Snowflake.Databases("a","WH"), D = S{[Name="DB"]}[Data], Sc = D{[Name="S"]}[Data], T = Sc{[Name="T"]}[Data] in T',
        [T("snowflake", "a", "DB", "S", "T")],
        [],
    ),
    (
        "snowflake-native",
        'let S = Snowflake.Databases("a","WH"), D = S{[Name="DB",Kind="Database"]}[Data], Q = Value.NativeQuery(D, "select * from MART.ORDERS", null, [EnableFolding=true]) in Q',
        [],
        [N("snowflake", "a", "DB", "select * from MART.ORDERS")],
    ),
    # --- PostgreSQL
    (
        "postgres-item",
        'let S = PostgreSQL.Database("pg.example.com", "jaffle"), t = S{[Schema="main_marts",Item="customers"]}[Data] in t',
        [T("postgres", "pg.example.com", "jaffle", "main_marts", "customers")],
        [],
    ),
    (
        "postgres-port",
        'let S = PostgreSQL.Database("pg.example.com:5433", "jaffle"), t = S{[Schema="public",Item="orders"]}[Data] in t',
        [T("postgres", "pg.example.com:5433", "jaffle", "public", "orders")],
        [],
    ),
    (
        "postgres-native",
        'let S = PostgreSQL.Database("pg", "jaffle"), q = Value.NativeQuery(S, "select id from public.orders where status = \'x\'") in q',
        [],
        [N("postgres", "pg", "jaffle", "select id from public.orders where status = 'x'")],
    ),
    (
        "postgres-query-option",
        'PostgreSQL.Database("pg", "jaffle", [Query="select * from public.t"])',
        [],
        [N("postgres", "pg", "jaffle", "select * from public.t")],
    ),
    # --- Oracle
    (
        "oracle-item",
        'let S = Oracle.Database("ora:1521/ORCL", [HierarchicalNavigation=true]), t = S{[Schema="HR",Item="EMPLOYEES"]}[Data] in t',
        [T("oracle", "ora:1521/ORCL", None, "HR", "EMPLOYEES")],
        [],
    ),
    (
        "oracle-names",
        'let S = Oracle.Database("ora"), sc = S{[Name="HR"]}[Data], t = sc{[Name="JOBS"]}[Data] in t',
        [T("oracle", "ora", None, "HR", "JOBS")],
        [],
    ),
    (
        "oracle-query",
        'Oracle.Database("ora", [Query="SELECT * FROM HR.JOBS"])',
        [],
        [N("oracle", "ora", None, "SELECT * FROM HR.JOBS")],
    ),
    # --- BigQuery
    (
        "bigquery",
        'let S = GoogleBigQuery.Database(), P = S{[Name="my-project"]}[Data], D = P{[Name="mart",Kind="Schema"]}[Data], T = D{[Name="orders",Kind="Table"]}[Data] in T',
        [T("bigquery", "", "my-project", "mart", "orders")],
        [],
    ),
    (
        "bigquery-options",
        'let S = GoogleBigQuery.Database([BillingProject="bill"]), P = S{[Name="proj"]}[Data], D = P{[Name="ds"]}[Data], T = D{[Name="t"]}[Data] in T',
        [T("bigquery", "", "proj", "ds", "t")],
        [],
    ),
    (
        "bigquery-native",
        'let S = GoogleBigQuery.Database(), P = S{[Name="proj"]}[Data], Q = Value.NativeQuery(P, "SELECT * FROM `proj.ds.t`") in Q',
        [],
        [N("bigquery", "", "proj", "SELECT * FROM `proj.ds.t`")],
    ),
    # --- Databricks
    (
        "databricks",
        'let S = Databricks.Catalogs("adb-1.azuredatabricks.net", "/sql/1.0/warehouses/abc", [Catalog=null, Database=null]), C = S{[Name="main",Kind="Database"]}[Data], Sc = C{[Name="sales",Kind="Schema"]}[Data], T = Sc{[Name="orders",Kind="Table"]}[Data] in T',
        [T("databricks", "adb-1.azuredatabricks.net", "main", "sales", "orders")],
        [],
    ),
    (
        "databricks-multicloud",
        'let S = DatabricksMultiCloud.Catalogs(Host, "/sql/1.0/warehouses/x", []), C = S{[Name="hive_metastore",Kind="Database"]}[Data], Sc = C{[Name="default",Kind="Schema"]}[Data], T = Sc{[Name="events",Kind="Table"]}[Data] in T',
        [T("databricks", "adb-123.azuredatabricks.net", "hive_metastore", "default", "events")],
        [],
    ),
    (
        "databricks-native",
        'let S = Databricks.Catalogs("h", "/p"), C = S{[Name="main",Kind="Database"]}[Data], Q = Value.NativeQuery(C, "select * from sales.orders") in Q',
        [],
        [N("databricks", "h", "main", "select * from sales.orders")],
    ),
    # --- Redshift
    (
        "redshift-names",
        'let S = AmazonRedshift.Database("rs.example.com:5439", "dev"), sc = S{[Name="public"]}[Data], t = sc{[Name="orders"]}[Data] in t',
        [T("redshift", "rs.example.com:5439", "dev", "public", "orders")],
        [],
    ),
    (
        "redshift-item",
        'let S = AmazonRedshift.Database("rs", "dev"), t = S{[Schema="mart",Item="sales"]}[Data] in t',
        [T("redshift", "rs", "dev", "mart", "sales")],
        [],
    ),
    (
        "redshift-native",
        'let S = AmazonRedshift.Database("rs", "dev"), q = Value.NativeQuery(S, "select * from mart.sales") in q',
        [],
        [N("redshift", "rs", "dev", "select * from mart.sales")],
    ),
    # --- ODBC
    (
        "odbc-nav",
        'let S = Odbc.DataSource("dsn=Warehouse", [HierarchicalNavigation=true]), D = S{[Name="WH",Kind="Database"]}[Data], Sc = D{[Name="MART",Kind="Schema"]}[Data], T = Sc{[Name="ORDERS",Kind="Table"]}[Data] in T',
        [T("odbc", "dsn=Warehouse", "WH", "MART", "ORDERS")],
        [],
    ),
    (
        "odbc-query",
        'Odbc.Query("dsn=Warehouse", "SELECT * FROM mart.orders")',
        [],
        [N("odbc", "dsn=Warehouse", None, "SELECT * FROM mart.orders")],
    ),
    (
        "odbc-query-steps",
        'let Source = Odbc.Query("dsn=W", "select a from s.t"), r = Table.RenameColumns(Source, {{"a", "A"}}) in r',
        [],
        [N("odbc", "dsn=W", None, "select a from s.t")],
    ),
    # --- combining
    (
        "combine",
        'let S = Sql.Database("srv","db"), a = S{[Schema="s",Item="eu"]}[Data], b = S{[Schema="s",Item="us"]}[Data], c = Table.Combine({a, b}) in c',
        [T(SQL, "srv", "db", "s", "eu"), T(SQL, "srv", "db", "s", "us")],
        [],
    ),
    (
        "combine-across-connectors",
        'let a = Sql.Database("srv","db"){[Schema="s",Item="t"]}[Data], b = PostgreSQL.Database("pg","j"){[Schema="p",Item="u"]}[Data] in Table.Combine({a, b})',
        [T(SQL, "srv", "db", "s", "t"), T("postgres", "pg", "j", "p", "u")],
        [],
    ),
    (
        "nestedjoin",
        'let S = Sql.Database("srv","db"), o = S{[Schema="s",Item="orders"]}[Data], c = S{[Schema="s",Item="customers"]}[Data], j = Table.NestedJoin(o, {"cid"}, c, {"id"}, "c", JoinKind.LeftOuter), e = Table.ExpandTableColumn(j, "c", {"name"}, {"c.name"}) in e',
        [T(SQL, "srv", "db", "s", "orders"), T(SQL, "srv", "db", "s", "customers")],
        [],
    ),
    (
        "join",
        'let S = Sql.Database("srv","db"), o = S{[Schema="s",Item="o"]}[Data], c = S{[Schema="s",Item="c"]}[Data] in Table.Join(o, "k", c, "k")',
        [T(SQL, "srv", "db", "s", "o"), T(SQL, "srv", "db", "s", "c")],
        [],
    ),
    (
        "native-and-table",
        'let S = Sql.Database("srv","db"), q = Value.NativeQuery(S, "select 1 as x"), t = S{[Schema="s",Item="t"]}[Data] in Table.Combine({q, t})',
        [T(SQL, "srv", "db", "s", "t")],
        [N(SQL, "srv", "db", "select 1 as x")],
    ),
    # --- odd but valid M
    (
        "comments-and-meta",
        '// the orders\nlet /* source */ S = Sql.Database("srv", "db") meta [x=1], t = S{[Schema="s",Item="t"]}?[Data] in t',
        [T(SQL, "srv", "db", "s", "t")],
        [],
    ),
    (
        "function-step",
        'let f = (x as table) as table => Table.FirstN(x, 10), S = Sql.Database("srv","db"), t = S{[Schema="s",Item="t"]}[Data] in t',
        [T(SQL, "srv", "db", "s", "t")],
        [],
    ),
    (
        "text-combine-sql",
        'let S = Sql.Database("srv","db"), q = Value.NativeQuery(S, Text.Combine({"select * ", "from s.t"}, "")) in q',
        [],
        [N(SQL, "srv", "db", "select * from s.t")],
    ),
    (
        "literal-table",
        'let Source = Table.FromRows(Json.Document(Binary.Decompress(Binary.FromText("i45W", BinaryEncoding.Base64), Compression.Deflate))) in Source',
        [],
        [],
    ),
]

UNRESOLVED: list[tuple[str, str, str | None, str]] = [
    (
        "excel",
        'let Source = Excel.Workbook(File.Contents("x.xlsx")), s = Source{[Item="S",Kind="Sheet"]}[Data] in s',
        "Source",
        "unknown connector Excel.Workbook",
    ),
    ("web", 'let Source = Json.Document(Web.Contents("https://x")) in Source', "Source", "unknown connector"),
    ("unknown-name", 'let t = Missing{[Schema="s",Item="t"]}[Data] in t', "t", "unknown name 'Missing'"),
    ("positional", 'let S = Sql.Database("s","d"), t = S{0}[Data] in t', "t", "by position"),
    ("if", 'let S = if true then Sql.Database("a","b") else Sql.Database("c","d") in S', "S", "conditional"),
    (
        "number-concat",
        'let S = Sql.Database(Server, Db), q = Value.NativeQuery(S, "SELECT * FROM dbo.t WHERE y >= " & MinYear) in q',
        "q",
        "operator '&'",
    ),
    ("ends-at-source", 'let S = Sql.Database("a","b") in S', None, "not at a table"),
]


@pytest.mark.parametrize(("name", "m", "tables", "natives"), CASES, ids=[c[0] for c in CASES])
def test_m_expression_resolves_to_its_warehouse_tables(
    name: str, m: str, tables: list[TableRef], natives: list[Native]
) -> None:
    resolver = Resolver({k: parse(v) for k, v in PARAMS.items()})
    got = resolver.resolve(parse(m))
    assert isinstance(got, Tables), got
    assert got.tables == tables
    assert got.natives == natives


@pytest.mark.parametrize(("name", "m", "step", "reason"), UNRESOLVED, ids=[c[0] for c in UNRESOLVED])
def test_m_expression_it_cannot_resolve_names_the_step(
    name: str, m: str, step: str | None, reason: str
) -> None:
    got = Resolver({k: parse(v) for k, v in PARAMS.items()}).resolve(parse(m))
    assert isinstance(got, Unresolved)
    assert got.step == step
    assert reason in got.reason


def test_corpus_is_large_enough_and_covers_every_connector() -> None:
    assert len(CASES) + len(UNRESOLVED) >= 40
    text = " ".join(c[1] for c in CASES)
    for fn in ("Sql.Database(", "Sql.Databases(", "Snowflake.Databases(", "PostgreSQL.Database(", "Oracle.Database(",
               "GoogleBigQuery.Database(", "Databricks.Catalogs(", "DatabricksMultiCloud.Catalogs(",
               "AmazonRedshift.Database(", "Odbc.DataSource(", "Odbc.Query(", "Value.NativeQuery(",
               "Table.Combine(", "Table.NestedJoin(", "Item=", "Kind=\"Table\""):  # fmt: skip
        assert fn in text, fn


@pytest.mark.parametrize(
    "m",
    [
        'let S = Sql.Database("a", "b"  in S',
        'let S = "unterminated in S',
        "let S = 1, in S",
        'let S = Sql.Database("a",) in S x',
    ],
)
def test_m_syntax_errors_are_errors_with_a_line(m: str) -> None:
    with pytest.raises(MSyntaxError) as err:
        parse(m)
    assert "(line 1)" in str(err.value)


BROKEN = {"BadServer": "unterminated string (line 1)", "BadShared": "expected 'in' (line 3)"}


@pytest.mark.parametrize(
    ("m", "step", "name"),
    [
        # navigated: the name itself is the missing table
        ('let t = BadShared{[Schema="s",Item="t"]}[Data] in t', "t", "BadShared"),
        # a connector's argument: said as the broken parameter, not as a server that is not text
        ('let S = Sql.Database(BadServer, "db"), t = S{[Schema="s",Item="t"]}[Data] in t', "S", "BadServer"),
        # a Table.* step's argument: not "reads no table"
        ("let t = Table.SelectRows(BadShared, each true) in t", "t", "BadShared"),
        # through a shared expression that itself names it
        ('let t = Uses{[Schema="s",Item="t"]}[Data] in t', "x", "BadServer"),  # its step in Uses
    ],
)
def test_a_shared_expression_that_does_not_parse_is_said_wherever_it_is_used(
    m: str, step: str, name: str
) -> None:
    good = {
        **{k: parse(v) for k, v in PARAMS.items()},
        "Uses": parse('let x = Sql.Database(BadServer, "d") in x'),
    }
    got = Resolver(good, broken=BROKEN).resolve(parse(m))
    assert isinstance(got, Unresolved)
    assert got.step == step
    assert got.reason == f"shared expression {name!r} does not parse: {BROKEN[name]}"


# After Table.NestedJoin + Table.ExpandTableColumn: each column -> (the warehouse table it comes from,
# its column there), by hand; the expanded columns come from the joined table, the others from the
# first. "keys": the join's key columns (table, column).
NAV = 'S = Sql.Database("srv","db"), o = S{[Schema="s",Item="orders"]}[Data], c = S{[Schema="s",Item="customers"]}[Data]'
ORDERS, CUSTOMERS = T(SQL, "srv", "db", "s", "orders"), T(SQL, "srv", "db", "s", "customers")
JOIN_CASES: list[tuple[str, str, dict[str, tuple[TableRef | Native, str]], list[tuple[TableRef | Native, str]]]] = [
    (
        "expand-with-new-names",
        f'let {NAV}, j = Table.NestedJoin(o, {{"cid"}}, c, {{"id"}}, "c", JoinKind.LeftOuter), '
        'e = Table.ExpandTableColumn(j, "c", {"name", "city"}, {"c.name", "city"}) in e',
        {"c.name": (CUSTOMERS, "name"), "city": (CUSTOMERS, "city"), "amount": (ORDERS, "amount"),
         "cid": (ORDERS, "cid")},
        [(ORDERS, "cid"), (CUSTOMERS, "id")],
    ),
    (
        "expand-keeping-names-one-key-as-text",
        f'let {NAV}, j = Table.NestedJoin(o, "cid", c, "id", "cust"), '
        'e = Table.ExpandTableColumn(j, "cust", {"name"}) in e',
        {"name": (CUSTOMERS, "name"), "amount": (ORDERS, "amount")},
        [(ORDERS, "cid"), (CUSTOMERS, "id")],
    ),
    (
        "renamed-after-expand",
        f'let {NAV}, j = Table.NestedJoin(o, {{"cid"}}, c, {{"id"}}, "c", JoinKind.Inner), '
        'e = Table.ExpandTableColumn(j, "c", {"name"}, {"c.name"}), '
        'r = Table.RenameColumns(e, {{"c.name", "buyer"}, {"amount", "total"}}) in r',
        {"buyer": (CUSTOMERS, "name"), "total": (ORDERS, "amount")},
        [(ORDERS, "cid"), (CUSTOMERS, "id")],
    ),
    (
        "renamed-before-join-on-both-sides",
        f'let {NAV}, o2 = Table.RenameColumns(o, {{"amount", "total"}}), '
        'c2 = Table.RenameColumns(c, {{"name", "full_name"}}), '
        'j = Table.NestedJoin(o2, {"cid"}, c2, {"id"}, "c"), e = Table.ExpandTableColumn(j, "c", {"full_name"}) in e',
        {"full_name": (CUSTOMERS, "name"), "total": (ORDERS, "amount")},
        [(ORDERS, "cid"), (CUSTOMERS, "id")],
    ),
    (
        "steps-after-expand-keep-columns",
        f'let {NAV}, j = Table.NestedJoin(o, {{"cid"}}, c, {{"id"}}, "c"), '
        'e = Table.ExpandTableColumn(j, "c", {"name"}), '
        't = Table.TransformColumnTypes(e, {{"amount", type number}}), f = Table.SelectRows(t, each [amount] > 0) in f',
        {"name": (CUSTOMERS, "name"), "amount": (ORDERS, "amount")},
        [(ORDERS, "cid"), (CUSTOMERS, "id")],
    ),
    (
        "joined-native-query",
        'let S = Sql.Database("srv","db"), o = S{[Schema="s",Item="orders"]}[Data], '
        'q = Value.NativeQuery(S, "select id, name from s.customers"), '
        'j = Table.NestedJoin(o, {"cid"}, q, {"id"}, "q"), e = Table.ExpandTableColumn(j, "q", {"name"}, {"q.name"}) in e',
        {"q.name": (N(SQL, "srv", "db", "select id, name from s.customers"), "name"), "amount": (ORDERS, "amount")},
        [(ORDERS, "cid"), (N(SQL, "srv", "db", "select id, name from s.customers"), "id")],
    ),
    (
        "two-joins-chained",
        'let S = Sql.Database("srv","db"), o = S{[Schema="s",Item="orders"]}[Data], '
        'c = S{[Schema="s",Item="customers"]}[Data], p = S{[Schema="s",Item="products"]}[Data], '
        'j1 = Table.NestedJoin(o, {"cid"}, c, {"id"}, "c"), e1 = Table.ExpandTableColumn(j1, "c", {"name"}, {"customer"}), '
        'j2 = Table.NestedJoin(e1, {"pid"}, p, {"id"}, "p"), e2 = Table.ExpandTableColumn(j2, "p", {"name"}, {"product"}) in e2',
        {"customer": (CUSTOMERS, "name"), "product": (T(SQL, "srv", "db", "s", "products"), "name"),
         "amount": (ORDERS, "amount")},
        [(ORDERS, "cid"), (CUSTOMERS, "id"), (ORDERS, "pid"), (T(SQL, "srv", "db", "s", "products"), "id")],
    ),
    (
        "self-join",
        'let S = Sql.Database("srv","db"), e = S{[Schema="hr",Item="employees"]}[Data], '
        'j = Table.NestedJoin(e, {"manager_id"}, e, {"id"}, "m"), x = Table.ExpandTableColumn(j, "m", {"name"}, {"manager"}) in x',
        {"manager": (T(SQL, "srv", "db", "hr", "employees"), "name"), "name": (T(SQL, "srv", "db", "hr", "employees"), "name")},
        [(T(SQL, "srv", "db", "hr", "employees"), "manager_id"), (T(SQL, "srv", "db", "hr", "employees"), "id")],
    ),
]  # fmt: skip


def _read(part: Tables) -> TableRef | Native:
    (only,) = part.tables + part.natives  # type: ignore[operator]
    return only


@pytest.mark.parametrize(("name", "m", "columns", "keys"), JOIN_CASES, ids=[c[0] for c in JOIN_CASES])
def test_nested_join_gives_each_column_its_source_table_and_column(
    name: str,
    m: str,
    columns: dict[str, tuple[TableRef | Native, str]],
    keys: list[tuple[TableRef | Native, str]],
) -> None:
    got = Resolver({}).resolve(parse(m))
    assert isinstance(got, Tables), got
    assert got.exact  # no table-level fallback
    for column, (table, source_column) in columns.items():
        part, there = got.source(column)
        assert (_read(part), there) == (table, source_column), column
    assert [(_read(p), c) for p, c in (kt.source(kc) for kt, kc in got.keys)] == keys


def test_a_flat_table_join_stays_table_level() -> None:
    got = Resolver({}).resolve(parse(f'let {NAV} in Table.Join(o, "cid", c, "id")'))
    assert isinstance(got, Tables) and not got.exact and got.tables == [ORDERS, CUSTOMERS]
