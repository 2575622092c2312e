"""Search endpoints (contract §6): basic search (POST and GET), attribute search, a small DSL subset.

Rows are selected in SQL by type and state (and by qualifiedName prefix/suffix when the filter allows);
attribute filters are then re-checked in memory, case-sensitively, as Atlas's in-memory predicate does.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.entities import header
from atlas_sync.emulator.errors import AtlasApiError, BadJsonError
from atlas_sync.emulator.repo import SYSTEM_FIELDS, Repo, Row
from atlas_sync.emulator.tags import all_classification_names, classification_text, label_text

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

DEFAULT_LIMIT = 100
MAX_LIMIT = 10000

# SearchParameters.Operator symbols accepted by Atlas 2.4 (exact spelling); anything else reads as null.
OPERATORS: dict[str, str] = {}
for _op, _symbols in {
    "LT": ("<", "lt"),
    "GT": (">", "gt"),
    "LTE": ("<=", "lte"),
    "GTE": (">=", "gte"),
    "EQ": ("=", "eq"),
    "NEQ": ("!=", "neq"),
    "IN": ("in", "IN"),
    "LIKE": ("like", "LIKE"),
    "STARTS_WITH": ("startsWith", "STARTSWITH", "begins_with", "BEGINS_WITH"),
    "ENDS_WITH": ("endsWith", "ENDSWITH", "ends_with", "ENDS_WITH"),
    "CONTAINS": ("contains", "CONTAINS"),
    "NOT_CONTAINS": ("not_contains", "NOT_CONTAINS"),
    "CONTAINS_ANY": ("containsAny", "CONTAINSANY", "contains_any", "CONTAINS_ANY"),
    "CONTAINS_ALL": ("containsAll", "CONTAINSALL", "contains_all", "CONTAINS_ALL"),
    "IS_NULL": ("isNull", "ISNULL", "is_null", "IS_NULL"),
    "NOT_NULL": ("notNull", "NOTNULL", "not_null", "NOT_NULL"),
    "TIME_RANGE": ("timerange", "TIMERANGE", "time_range", "TIME_RANGE"),
    "NOT_EMPTY": ("notEmpty", "NOTEMPTY", "not_empty", "NOT_EMPTY"),
}.items():
    for _s in _symbols:
        OPERATORS[_s] = _op
SYMBOL = {
    "LT": "<",
    "GT": ">",
    "LTE": "<=",
    "GTE": ">=",
    "EQ": "=",
    "NEQ": "!=",
    "IN": "in",
    "LIKE": "like",
    "STARTS_WITH": "startsWith",
    "ENDS_WITH": "endsWith",
    "CONTAINS": "contains",
    "NOT_CONTAINS": "not_contains",
    "CONTAINS_ANY": "containsAny",
    "CONTAINS_ALL": "containsAll",
    "IS_NULL": "isNull",
    "NOT_NULL": "notNull",
    "TIME_RANGE": "timerange",
    "NOT_EMPTY": "notEmpty",
}
SYSTEM_ATTRS = {*SYSTEM_FIELDS, "__labels", "__classificationNames"}

Predicate = Callable[[Row], bool]


def _int_field(params: dict[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadJsonError(f'Cannot deserialize value of type `int` from Boolean value (field "{key}")')
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise BadJsonError(
        f'Cannot deserialize value of type `int` from String "{value}": not a valid `int` value'
    )


def normalize_limit(limit: int | None) -> int:
    return limit if limit is not None and 0 < limit <= MAX_LIMIT else DEFAULT_LIMIT


def basic_search(state: State, params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise BadJsonError("Cannot deserialize value of type `SearchParameters` from non-object value")
    limit = _int_field(params, "limit")
    offset = _int_field(params, "offset")
    if (limit is not None and limit < 0) or (offset is not None and offset < 0):
        raise AtlasApiError("ATLAS-400-00-029", "Limit/offset should be non-negative")
    type_param = params.get("typeName")
    if params.get("entityFilters") and not type_param:
        raise AtlasApiError("ATLAS-400-00-029", "EntityFilters specified without Type name")
    if not any(params.get(k) for k in ("typeName", "classification", "query", "termName")):
        raise AtlasApiError("ATLAS-400-00-047")
    if params.get("marker") and offset:
        raise AtlasApiError("ATLAS-400-00-029", "Marker can be used only if offset=0.")
    reg = state.registry
    repo = Repo(state)
    type_names: list[str] = []
    if type_param:
        if type_param == "_ALL_ENTITY_TYPES":
            type_names = sorted(reg.entities)
        else:
            requested = [t.strip() for t in str(type_param).split(",") if t.strip()]
            known = [t for t in requested if reg.entity(t) is not None]
            if not known:
                raise AtlasApiError("ATLAS-400-00-00A", type_param)
            type_names = known
    elif params.get("classification"):
        type_names = sorted(reg.entities)
    elif params.get("termName"):
        type_names = []  # the emulator stores no glossary terms
    else:
        type_names = sorted(reg.entities)
    include_subs = params.get("includeSubTypes", True) is not False
    first = reg.entity(type_names[0]) if type_names and type_param != "_ALL_ENTITY_TYPES" else None
    known_attrs = set(first.attrs) | set(first.rels) if first else set()

    def check_attr(name: Any) -> None:
        if first is not None and name not in known_attrs and name not in SYSTEM_ATTRS:
            raise AtlasApiError("ATLAS-400-00-023", name, first.name)

    for a in params.get("attributes") or []:
        check_attr(a)
    if params.get("sortBy"):
        check_attr(params["sortBy"])
    all_types: set[str] = set()
    for t in type_names:
        et = reg.entity(t)
        if et is not None:
            all_types |= et.subs if include_subs else {t}
    predicate, sql_hint = _criteria(params.get("entityFilters"), check_attr)
    tag = params.get("classification")
    if tag:
        if tag != "*" and reg.defs.get(tag, {}).get("category") != "CLASSIFICATION":
            raise AtlasApiError("ATLAS-400-00-00A", tag)
        by_filters = predicate

        def predicate(r: Row) -> bool:
            names = all_classification_names(r)
            return (bool(names) if tag == "*" else tag in names) and by_filters(r)

    exclude_deleted = bool(params.get("excludeDeletedEntities", False))
    norm_limit = normalize_limit(limit)
    start = offset or 0
    text = params.get("query")
    attr_types = (
        {n: a.type_name for n, a in first.attrs.items() if a.kind in ("primitive", "enum")} if first else {}
    )
    sql_filter = None if tag else _sql_criteria(params.get("entityFilters"), attr_types)
    if sql_filter is not None and first is not None:
        _index_attributes(repo, first, params.get("entityFilters"))
        sql_filter = _most_selective_first(repo, params.get("entityFilters"), attr_types) or sql_filter
    sort_by = params.get("sortBy")
    sortable = not sort_by or _column(str(sort_by), attr_types) is not None
    if sql_filter is not None and sortable and not (text and text != "*"):
        # the whole filter runs in SQL: count, then fetch only the page
        total, page = _sql_page(
            repo,
            sorted(all_types),
            exclude_deleted,
            sql_filter,
            params,
            attr_types,
            norm_limit,
            start,
            by_index=_on_attribute_index(repo, params.get("entityFilters")),
        )
    else:
        rows = _select(repo, sorted(all_types), exclude_deleted, sql_hint)
        if text and text != "*":
            needle = str(text).strip("*").lower()
            rows = [
                r
                for r in rows
                if any(needle in str(v).lower() for v in r.attrs.values() if isinstance(v, str))
            ]
        matches = [r for r in rows if predicate(r)]
        if sort_by:
            key = str(sort_by)
            present = [r for r in matches if r.attrs.get(key) is not None]
            missing = [r for r in matches if r.attrs.get(key) is None]
            present.sort(
                key=lambda r: _sort_key(r.attrs.get(key)), reverse=params.get("sortOrder") == "DESCENDING"
            )
            matches = present + missing
        total = len(matches)
        page = matches[start : start + norm_limit]
    echo = dict(params)
    if isinstance(params.get("entityFilters"), dict):
        echo["entityFilters"] = _echo_criteria(params["entityFilters"])
    echo["limit"] = norm_limit
    echo["offset"] = start
    echo.setdefault("excludeDeletedEntities", exclude_deleted)
    echo.setdefault("includeSubTypes", include_subs)
    # SearchParameters' primitive booleans are always serialised
    echo.setdefault("includeClassificationAttributes", False)
    echo.setdefault("includeSubClassifications", True)
    echo.setdefault("excludeHeaderAttributes", False)
    out: dict[str, Any] = {"queryType": "BASIC", "searchParameters": echo}
    extra = [str(a) for a in params.get("attributes") or []]
    if page:
        # includeClassificationAttributes: Atlas's toAtlasEntityHeaderWithClassifications (own and propagated)
        with_tags = params.get("includeClassificationAttributes") is True
        out["entities"] = [header(repo, r, extra, classifications=with_tags) for r in page]
    out["approximateCount"] = total
    return out


def _echo_criteria(spec: dict[str, Any]) -> dict[str, Any]:
    """FilterCriteria as Atlas writes it back: an operator is serialised as its first symbol (``eq`` -> ``=``)
    and an unknown spelling, read as null, is left out."""
    out = dict(spec)
    if "operator" in out:
        op = OPERATORS.get(str(out["operator"]))
        if op is None:
            del out["operator"]
        else:
            out["operator"] = SYMBOL[op]
    if isinstance(out.get("criterion"), list):
        out["criterion"] = [_echo_criteria(c) if isinstance(c, dict) else c for c in out["criterion"]]
    return out


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value))


def _select(repo: Repo, types: list[str], exclude_deleted: bool, hint: tuple[str, str] | None) -> list[Row]:
    if not types:
        return []
    marks = ",".join("?" * len(types))
    sql = f"SELECT * FROM entities WHERE type_name IN ({marks})"
    args: list[Any] = list(types)
    if exclude_deleted:
        sql += " AND status='ACTIVE'"
    if hint is not None:
        op, value = hint
        if op == "STARTS_WITH":
            sql += " AND substr(qualified_name, 1, ?) = ?"
            args += [len(value), value]
        elif op == "ENDS_WITH":
            sql += " AND substr(qualified_name, -?) = ?"
            args += [len(value), value]
        elif op == "EQ":
            sql += " AND qualified_name = ?"
            args.append(value)
    sql += " ORDER BY seq"
    out = []
    for r in repo.conn.execute(sql, args):
        cached = repo.rows.get(r["guid"])
        out.append(cached if cached is not None else repo._row(r))
    return out


def _criteria(spec: Any, check_attr: Callable[[Any], None]) -> tuple[Predicate, tuple[str, str] | None]:
    """Build the in-memory predicate and, when possible, a qualifiedName hint for SQL."""
    if not spec or not isinstance(spec, dict):
        return (lambda r: True), None
    if spec.get("criterion") is not None:
        if not spec.get("condition"):
            return (lambda r: True), None  # Atlas 2.4 ignores a composite filter without condition
        parts = [_criteria(c, check_attr) for c in spec.get("criterion") or []]
        preds = [p for p, _ in parts]
        if str(spec["condition"]).upper() == "OR":
            return (lambda r: any(p(r) for p in preds)), None
        hint = next((h for _, h in parts if h is not None), None)
        return (lambda r: all(p(r) for p in preds)), hint
    name = spec.get("attributeName")
    check_attr(name)
    op = OPERATORS.get(str(spec.get("operator")))
    if op is None:
        return (
            lambda r: True
        ), None  # unknown spelling: the operator reads as null and the filter is dropped
    value = spec.get("attributeValue")
    test = _op_test(op, value)
    attr = str(name)

    def pred(r: Row) -> bool:
        return test(_attr_value(r, attr))

    hint = (
        (op, str(value))
        if attr == "qualifiedName" and op in ("STARTS_WITH", "ENDS_WITH", "EQ") and value
        else None
    )
    return pred, hint


def _attr_value(r: Row, name: str) -> Any:
    if name in SYSTEM_FIELDS:
        return getattr(r, SYSTEM_FIELDS[name])
    if name == "__labels":
        return label_text(r)
    if name == "__classificationNames":
        return classification_text(r)
    return r.attrs.get(name)


def _coerce(sample: Any, value: Any) -> Any:
    if isinstance(sample, bool):
        return str(value).lower() == "true"
    if isinstance(sample, int | float):
        try:
            return type(sample)(float(value)) if isinstance(sample, float) else int(float(value))
        except (TypeError, ValueError):
            return value
    return value if isinstance(value, str) else str(value)


def _op_test(op: str, value: Any) -> Callable[[Any], bool]:
    s = "" if value is None else str(value)

    def cmp(f: Callable[[Any, Any], bool]) -> Callable[[Any], bool]:
        def test(v: Any) -> bool:
            if v is None:
                return False
            try:
                return f(v, _coerce(v, value))
            except TypeError:
                return False

        return test

    if op == "EQ":
        return cmp(lambda a, b: a == b)
    if op == "NEQ":
        return lambda v: v is None or _coerce(v, value) != v
    if op == "LT":
        return cmp(lambda a, b: a < b)
    if op == "GT":
        return cmp(lambda a, b: a > b)
    if op == "LTE":
        return cmp(lambda a, b: a <= b)
    if op == "GTE":
        return cmp(lambda a, b: a >= b)
    if op == "STARTS_WITH":
        return lambda v: isinstance(v, str) and v.startswith(s)
    if op == "ENDS_WITH":
        return lambda v: isinstance(v, str) and v.endswith(s)
    if op == "CONTAINS":
        return lambda v: (s in v) if isinstance(v, str) else (isinstance(v, list) and value in v)
    if op == "NOT_CONTAINS":
        return lambda v: not ((s in v) if isinstance(v, str) else (isinstance(v, list) and value in v))
    if op == "LIKE":
        return lambda v: isinstance(v, str) and fnmatch.fnmatchcase(v, s)
    if op == "IN":
        options = value if isinstance(value, list) else [x.strip() for x in s.strip("()[]").split(",")]
        return lambda v: v is not None and (v in options or str(v) in [str(o) for o in options])
    if op == "IS_NULL":
        return lambda v: v is None or v == ""
    if op in ("NOT_NULL", "NOT_EMPTY"):
        return lambda v: v is not None and v != "" and v != []
    if op in ("CONTAINS_ANY", "CONTAINS_ALL"):
        wanted = value if isinstance(value, list) else [x.strip() for x in s.split(",")]
        if op == "CONTAINS_ANY":
            return lambda v: isinstance(v, list) and any(w in v for w in wanted)
        return lambda v: isinstance(v, list) and all(w in v for w in wanted)
    return lambda v: True


def basic_search_get(state: State, query: dict[str, list[str]]) -> dict[str, Any]:
    q = {k: v[0] for k, v in query.items() if v}
    params: dict[str, Any] = {}
    for key in ("typeName", "classification", "query", "termName", "sortBy", "sortOrder", "marker"):
        if key in q:
            params[key] = q[key]
    for key in ("excludeDeletedEntities", "includeSubTypes"):
        if key in q:
            params[key] = q[key].lower() == "true"
    for key in ("limit", "offset"):
        if key in q:
            params[key] = q[key]
    return basic_search(state, params)


def attribute_search(state: State, query: dict[str, list[str]]) -> dict[str, Any]:
    q = {k: v[0] for k, v in query.items() if v}
    attr = q.get("attrName")
    prefix = q.get("attrValuePrefix")
    if not attr and not prefix:
        raise AtlasApiError("ATLAS-400-00-01A", "attrName or attrValuePrefix required")
    type_name = q.get("typeName")
    if not attr:
        et = state.registry.entity(type_name) if type_name else None
        attr = "qualifiedName" if et is None or "qualifiedName" in et.attrs else "name"
    params: dict[str, Any] = {
        "typeName": type_name or "_ALL_ENTITY_TYPES",
        "entityFilters": {"attributeName": attr, "operator": "startsWith", "attributeValue": prefix or ""},
        "limit": q.get("limit"),
        "offset": q.get("offset"),
    }
    return basic_search(state, params)


_DSL = re.compile(
    r"^\s*(?P<type>[A-Za-z_][\w ]*?)\s*(?:where\s+(?P<attr>\w+)\s*(?P<op>=|like|!=)\s*['\"](?P<val>[^'\"]*)['\"])?"
    r"\s*(?:limit\s+(?P<limit>\d+))?\s*(?:offset\s+(?P<offset>\d+))?\s*$",
    re.IGNORECASE,
)


def dsl_search(state: State, query: dict[str, list[str]]) -> dict[str, Any]:
    """A small DSL subset: ``<type> [where <attr> =|like|!= '<v>'] [limit n] [offset m]``."""
    q = {k: v[0] for k, v in query.items() if v}
    text = " ".join(x for x in (q.get("typeName"), q.get("query")) if x)
    # DiscoveryREST.validateDSLSearchParameters: typeName/classification by the query-param limit, the
    # query itself by atlas.graph.dsl-max-query-str-length
    for param in ("typeName", "classification"):
        if len(q.get(param) or "") > 4096:
            raise AtlasApiError("ATLAS-400-00-057", param)
    if len(q.get("query") or "") > 4096:
        raise AtlasApiError("ATLAS-400-00-058", "atlas.graph.dsl-max-query-str-length")
    m = _DSL.match(text)
    if not m:
        raise AtlasApiError("ATLAS-400-00-059", text, "the emulator understands only a small DSL subset")
    type_name = m.group("type").strip()
    if state.registry.entity(type_name) is None:
        # semantic errors are collected and re-raised as INVALID_DSL_QUERY (AtlasDSL.processErrorList)
        raise AtlasApiError("ATLAS-400-00-059", text, f"DSL Semantic Error - {type_name} type not found")
    params: dict[str, Any] = {"typeName": type_name}
    if m.group("attr"):
        op = {"=": "=", "like": "like", "!=": "!="}[m.group("op").lower()]
        params["entityFilters"] = {"attributeName": m.group("attr"), "operator": op,
                                   "attributeValue": m.group("val")}  # fmt: skip
    params["limit"] = int(m.group("limit")) if m.group("limit") else q.get("limit")
    params["offset"] = int(m.group("offset")) if m.group("offset") else q.get("offset")
    result = basic_search(state, params)
    out: dict[str, Any] = {"queryType": "DSL", "queryText": text}
    if "entities" in result:
        out["entities"] = result["entities"]
    return out


# ---------------------------------------------------------------------- SQL push-down
COLUMNS = {"qualifiedName": "qualified_name", **SYSTEM_FIELDS}
NUMERIC = {"byte", "short", "int", "long", "biginteger", "float", "double", "bigdecimal", "date"}


def _column(name: str, attr_types: dict[str, str]) -> tuple[str, list[Any], str] | None:
    """SQL expression for an attribute, its parameters and its type; None if not expressible."""
    if name in COLUMNS:
        return COLUMNS[name], [], "long" if name in ("__timestamp", "__modificationTimestamp") else "string"
    t = attr_types.get(name)
    if t is None or '"' in name or "'" in name:
        return None
    # the path is written out (not a parameter) so that an index on the expression serves it
    return f"""json_extract(attrs, '$."{name}"')""", [], t


def _index_attributes(repo: Repo, et: Any, spec: Any) -> None:
    """Index the indexable attributes a filter names, as Atlas's index holds them (an expression index,
    made on first use): a search by one then costs what it finds, not what the types hold."""
    names: list[str] = []

    def walk(s: Any) -> None:
        if isinstance(s, dict):
            if isinstance(s.get("criterion"), list):
                for c in s["criterion"]:
                    walk(c)
            elif isinstance(s.get("attributeName"), str):
                names.append(s["attributeName"])

    walk(spec)
    done = repo.state.indexed_attributes
    for name in names:
        attr = et.attrs.get(name)
        if name in done or attr is None or not attr.indexable or attr.kind != "primitive":
            continue
        col = _column(name, {name: attr.type_name})
        if col is None:
            continue
        ident = "entities_attr_" + "".join(ch if ch.isalnum() else "_" for ch in name)
        repo.conn.execute(f"CREATE INDEX IF NOT EXISTS {ident} ON entities ({col[0]})")
        done.add(name)
        repo.state.store.analyze_if_big()  # the planner weighs the new index against the others


PROBE_ROWS = 2000


def _on_attribute_index(repo: Repo, spec: Any) -> bool:
    """Whether ``spec`` (or a criterion of its AND) is an ``=`` or a ``startsWith`` on an attribute the
    emulator has indexed (:func:`_index_attributes`)."""
    if not isinstance(spec, dict):
        return False
    if str(spec.get("condition", "")).upper() == "AND":
        return any(_on_attribute_index(repo, c) for c in spec.get("criterion") or [])
    return (
        OPERATORS.get(str(spec.get("operator"))) in ("EQ", "STARTS_WITH")
        and spec.get("attributeName") in repo.state.indexed_attributes
        and bool(spec.get("attributeValue"))
    )


def _most_selective_first(repo: Repo, spec: Any, attr_types: dict[str, str]) -> tuple[str, list[Any]] | None:
    """An AND of two or more equalities on indexed attributes, as SQL that walks the index of the one
    matching fewest entities (each counted up to ``PROBE_ROWS`` on its index) and checks the others on
    those rows; ``None`` for any other filter. Atlas's index intersects its terms, whatever their
    spread; SQLite's planner knows only each index's average rows per value (no STAT4 in Python's
    build), so under skew (a domain key every entity of a big domain holds, a job name only the bulk
    job's entities hold) it could walk the whole domain for a job that owns nothing (0.35 s at 125,000)."""
    if not isinstance(spec, dict) or str(spec.get("condition", "")).upper() != "AND":
        return None
    criteria = spec.get("criterion") or []
    maybe = [_sql_criteria(c, attr_types) for c in criteria]
    parts = [p for p in maybe if p is not None]
    if len(parts) != len(maybe):
        return None
    indexed = repo.state.indexed_attributes
    equal = [
        i
        for i, c in enumerate(criteria)
        if isinstance(c, dict)
        and OPERATORS.get(str(c.get("operator"))) == "EQ"
        and c.get("attributeName") in indexed
        and c.get("attributeValue") is not None
    ]
    if len(equal) < 2:
        return None
    found = {
        i: repo.conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM entities WHERE {parts[i][0]} LIMIT {PROBE_ROWS})",
            parts[i][1],
        ).fetchone()[0]
        for i in equal
    }
    best = min(equal, key=lambda i: found[i])
    # a unary + keeps SQLite from using an index for a term (a no-op on the value)
    sql = [p[0] if i not in equal or i == best else "+" + p[0] for i, p in enumerate(parts)]
    return "(" + " AND ".join(sql) + ")", [a for p in parts for a in p[1]]


def _sql_value(type_name: str, value: Any) -> Any:
    if type_name in NUMERIC:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return str(value)
        return int(number) if number.is_integer() else number
    if type_name == "boolean":
        return 1 if str(value).lower() == "true" else 0
    return value if isinstance(value, str) else str(value)


def _sql_criteria(spec: Any, attr_types: dict[str, str]) -> tuple[str, list[Any]] | None:
    """Translate entityFilters to a SQL condition with the same semantics, or None (use the Python path)."""
    if not spec or not isinstance(spec, dict):
        return "1", []
    if spec.get("criterion") is not None:
        if not spec.get("condition"):
            return "1", []
        parts = [_sql_criteria(c, attr_types) for c in spec.get("criterion") or []]
        done = [p for p in parts if p is not None]
        if len(done) != len(parts):
            return None
        if not done:
            return "1", []
        joiner = " OR " if str(spec["condition"]).upper() == "OR" else " AND "
        return "(" + joiner.join(p[0] for p in done) + ")", [a for p in done for a in p[1]]
    op = OPERATORS.get(str(spec.get("operator")))
    if op is None:
        return "1", []
    col = _column(str(spec.get("attributeName")), attr_types)
    if col is None:
        return None
    expr, cargs, type_name = col
    value = spec.get("attributeValue")
    if op in ("EQ", "NEQ", "LT", "GT", "LTE", "GTE"):
        if value is None:
            return None
        v = _sql_value(type_name, value)
        if op == "NEQ":
            return f"({expr} IS NULL OR {expr} != ?)", [*cargs, *cargs, v]
        sql_op = {"EQ": "=", "LT": "<", "GT": ">", "LTE": "<=", "GTE": ">="}[op]
        return f"{expr} {sql_op} ?", [*cargs, v]
    if type_name in NUMERIC or type_name == "boolean":
        return None
    text = "" if value is None else str(value)
    if op in ("STARTS_WITH", "ENDS_WITH"):
        if not text:
            return f"{expr} IS NOT NULL", cargs
        if op == "STARTS_WITH":
            if ord(text[-1]) < 0x10FFFF:
                # a range on the value, as Atlas's index answers a prefix (``value*`` on Solr): the
                # expression index of an indexed attribute serves it (SQLite compares text bytewise,
                # and UTF-8 keeps code point order), so a prefix search costs what it finds
                upper = text[:-1] + chr(ord(text[-1]) + 1)
                return f"({expr} >= ? AND {expr} < ?)", [*cargs, text, *cargs, upper]
            return f"substr({expr}, 1, ?) = ?", [*cargs, len(text), text]
        return f"substr({expr}, -?) = ?", [*cargs, len(text), text]
    if op == "CONTAINS":
        return f"instr({expr}, ?) > 0", [*cargs, text]
    if op == "NOT_CONTAINS":
        return f"({expr} IS NULL OR instr({expr}, ?) = 0)", [*cargs, *cargs, text]
    if op == "LIKE":
        return f"{expr} GLOB ?", [*cargs, text]
    if op == "IS_NULL":
        return f"({expr} IS NULL OR {expr} = '')", [*cargs, *cargs]
    if op in ("NOT_NULL", "NOT_EMPTY"):
        return f"({expr} IS NOT NULL AND {expr} != '')", [*cargs, *cargs]
    return None


def _sql_page(
    repo: Repo,
    types: list[str],
    exclude_deleted: bool,
    sql_filter: tuple[str, list[Any]],
    params: dict[str, Any],
    attr_types: dict[str, str],
    limit: int,
    offset: int,
    *,
    by_index: bool = False,
) -> tuple[int, list[Row]]:
    """``by_index``: the filter holds an ``=`` or a prefix on an indexed attribute, which Atlas's index
    answers: the type and state are checked on what that finds (a unary ``+`` keeps SQLite's planner
    from walking the state's index instead, which it prefers to a range it has no statistics for)."""
    if not types:
        return 0, []
    marks = ",".join("?" * len(types))
    plus = "+" if by_index else ""
    where = (
        f"{plus}type_name IN ({marks})"
        + (f" AND {plus}status='ACTIVE'" if exclude_deleted else "")
        + f" AND {sql_filter[0]}"
    )
    args: list[Any] = [*types, *sql_filter[1]]
    if params.get("sortBy"):
        col = _column(str(params["sortBy"]), attr_types)
        assert col is not None
        direction = "DESC" if params.get("sortOrder") == "DESCENDING" else "ASC"
        total = int(repo.conn.execute(f"SELECT COUNT(*) FROM entities WHERE {where}", args).fetchone()[0])
        sql = (
            f"SELECT * FROM entities WHERE {where} ORDER BY ({col[0]} IS NULL), {col[0]} {direction}, seq "
            "LIMIT ? OFFSET ?"
        )
        return total, _rows(repo, repo.conn.execute(sql, [*args, *col[1], *col[1], limit, offset]))
    # Paging through a result in order of seq: the count and where each page ended are kept until
    # the next write, so page k neither re-counts the result nor skips k pages (OFFSET): linear.
    pages = _paging(repo, where, args)
    if pages.total < 0:
        pages.total = int(
            repo.conn.execute(f"SELECT COUNT(*) FROM entities WHERE {where}", args).fetchone()[0]
        )
    after = pages.ends.get(offset, -1 if offset == 0 else None)
    if after is not None:
        cur = repo.conn.execute(
            f"SELECT * FROM entities WHERE {where} AND {plus}seq > ? ORDER BY seq LIMIT ?",
            [*args, after, limit],
        )
    else:
        cur = repo.conn.execute(
            f"SELECT * FROM entities WHERE {where} ORDER BY seq LIMIT ? OFFSET ?", [*args, limit, offset]
        )
    raw = cur.fetchall()
    if raw:
        pages.ends[offset + len(raw)] = int(raw[-1]["seq"])
    return pages.total, _rows(repo, raw)


def _rows(repo: Repo, raw: Any) -> list[Row]:
    rows = []
    for r in raw:
        cached = repo.rows.get(r["guid"])
        rows.append(cached if cached is not None else repo._row(r))
    return rows


@dataclass
class _Pages:
    generation: tuple[int, int]
    total: int = -1
    ends: dict[int, int] = field(default_factory=dict)  # offset of the next page -> seq it starts after


_PAGINGS = 16  # queries remembered per emulator


def _paging(repo: Repo, where: str, args: list[Any]) -> _Pages:
    """What is known of one query's result since the last write (own or another process's)."""
    cache = repo.state.search_pages
    generation = (repo.conn.total_changes, repo.state.store.data_version())
    key = (where, tuple(args))
    pages = cache.get(key)
    if pages is None or pages.generation != generation:
        if len(cache) >= _PAGINGS:
            cache.pop(next(iter(cache)))
        pages = cache[key] = _Pages(generation)
    return pages
