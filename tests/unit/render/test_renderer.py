"""Rendering a LineageGraph into a profile's desired entities (issue 5: profiles and rendering)."""

from pathlib import Path

import pytest

from atlas_sync.errors import ConfigError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.render import load_profile, render
from atlas_sync.render.renderer import DesiredEntity, DesiredState, RenderError, _assign_tiers

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["total"]},
    ],
    "processes": [
        {"id": "daily", "name": "daily revenue", "inputs": ["raw.orders"], "outputs": ["mart.revenue"]}
    ],
    "edges": [
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "daily",
        },
        {"source": "raw.orders.id", "target": "mart.revenue.*", "kind": "FILTER", "process": "daily"},
    ],
}


def lineage_state(doc=DOC, domain="demo", job="daily"):
    return render(LineageGraph.from_document(doc), load_profile("lineage"), domain=domain, job=job)


def test_lineage_profile_names_follow_atlas_hooks():
    state = lineage_state()
    names = {(e.type_name, e.qualified_name) for e in state.entities.values()}
    assert ("lineage_dataset", "raw.orders@demo") in names
    assert ("lineage_column", "raw.orders.amount@demo") in names
    assert ("lineage_process", "daily@demo") in names
    assert ("lineage_column_lineage", "daily:mart.revenue.total@demo") in names
    assert ("lineage_column_lineage", "daily:mart.revenue.*:FILTER@demo") in names
    # 2 datasets + 3 columns + 1 process + 2 column-lineage processes
    assert len(state) == 8


def test_references_point_at_rendered_entities_and_order_puts_them_first():
    state = lineage_state()
    proc = state.entities[("lineage_process", "daily@demo")]
    assert proc.refs["inputs"] == [("lineage_dataset", "raw.orders@demo")]
    assert proc.refs["outputs"] == [("lineage_dataset", "mart.revenue@demo")]
    order = [e.key for e in state.ordered()]
    for e in state.entities.values():
        for v in e.refs.values():
            for k in v if isinstance(v, list) else [v]:
                assert order.index(k) < order.index(e.key)


def test_column_lineage_carries_kind_and_ownership_is_create_only():
    state = lineage_state()
    cl = state.entities[("lineage_column_lineage", "daily:mart.revenue.total@demo")]
    assert cl.attributes["dependencyType"] == "AGGREGATION"
    assert cl.refs["inputs"] == [("lineage_column", "raw.orders.amount@demo")]
    assert cl.refs["process"] == ("lineage_process", "daily@demo")
    assert "process" in cl.rel_attrs
    assert cl.create_only == {"atlasSyncJob": "daily"}
    assert "atlasSyncJob" not in cl.attributes


@pytest.mark.parametrize(
    "name",
    [
        'we"ird',
        "back\\slash",
        "new\nline",
        "at@sign",
        "ünï😀",
        "{{ 7*7 }}",
        "%s",
        "</script>&'<",
        '", "x": "1',
    ],
)
def test_hostile_names_round_trip_unchanged(name):
    doc = {
        "datasets": [{"id": f"db.{name}", "namespace": "db", "name": name, "columns": [name]}],
        "processes": [{"id": "p", "name": name, "outputs": [f"db.{name}"]}],
    }
    state = lineage_state(doc)
    ds = next(e for e in state.entities.values() if e.type_name == "lineage_dataset")
    assert ds.attributes["name"] == name
    assert ds.qualified_name == f"db.{name}@demo"
    col = next(e for e in state.entities.values() if e.type_name == "lineage_column")
    assert col.attributes["name"] == name


def test_pico_profile_reproduces_seed_names():
    doc = {
        "datasets": [
            {"id": "input", "name": "input", "kind": "intermediate"},
            {"id": "output", "name": "output", "kind": "intermediate"},
            {"id": "d1", "name": "d1", "kind": "intermediate", "facets": {"levels": ["1_0", "2_0"]}},
        ],
        "processes": [
            {
                "id": "1_0",
                "name": "Project",
                "kind": "operator",
                "operator": "Project",
                "level": "1_0",
                "inputs": ["d1"],
                "outputs": ["output"],
                "attributes": {"columns": ["model#17"], "bogus": 1},
            },
            {
                "id": "2_0",
                "name": "LocalRelation",
                "kind": "operator",
                "operator": "LocalRelation",
                "level": "2_0",
                "inputs": ["input"],
                "outputs": ["d1"],
                "attributes": {"columns": ["_1#23"]},
            },
        ],
    }
    state = render(LineageGraph.from_document(doc), load_profile("pico"), domain="picoDomain", job="cars")
    keys = set(state.entities)
    assert ("pico_spark_data_type", "pico_spark_data_input@picoDomain") in keys
    assert ("pico_spark_data_type", "pico_spark_data_output@picoDomain") in keys
    assert ("pico_spark_data_type", "pico_spark_data_1_0-2_0@picoDomain") in keys
    proj = state.entities[("pico_spark_project_type", "pico_project_1_0@picoDomain")]
    assert proj.attributes["name"] == "pico_project_1_0"
    assert proj.attributes["columns"] == ["model#17"]
    assert "bogus" not in proj.attributes  # undeclared reader attributes are not sent
    assert ("pico_spark_local_relation_type", "pico_local_relation_2_0@picoDomain") in keys


def test_two_nodes_with_one_qualified_name_is_an_error():
    doc = {
        "datasets": [{"id": "a", "name": "a"}],
        "processes": [
            {
                "id": "x",
                "name": "x",
                "kind": "operator",
                "operator": "Filter",
                "level": "2_0",
                "outputs": ["a"],
            },
            {
                "id": "y",
                "name": "y",
                "kind": "operator",
                "operator": "Filter",
                "level": "2_0",
                "outputs": ["a"],
            },
        ],
    }
    with pytest.raises(RenderError, match="name collision"):
        render(LineageGraph.from_document(doc), load_profile("pico"), domain="d", job="j")


def _user_profile(tmp_path: Path, process_template: str) -> Path:
    prof = tmp_path / "prof"
    prof.mkdir()
    (prof / "profile.toml").write_text('typedefs = ["lineage"]\n')
    src = load_profile("lineage").template_dir
    (prof / "dataset.json.j2").write_text((src / "dataset.json.j2").read_text())
    (prof / "process.json.j2").write_text(process_template)
    return prof


def test_template_with_unknown_attribute_names_template_and_entity(tmp_path):
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ domain) | tojson }},'
        ' "name": "x", "nonsense": 1}}',
    )
    with pytest.raises(RenderError, match=r"process.json.j2 \(process 'daily'\).*no attribute 'nonsense'"):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


def test_template_missing_mandatory_name_is_an_error(tmp_path):
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ domain) | tojson }}}}',
    )
    with pytest.raises(RenderError, match="mandatory attribute 'name'"):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


def test_template_wrong_type_is_an_error(tmp_path):
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ domain) | tojson }},'
        ' "name": "x", "queryText": 5}}',
    )
    with pytest.raises(RenderError, match="queryText.*expected string"):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


@pytest.mark.parametrize(
    "expr",
    ["process.__class__.__mro__", "''.__class__.__subclasses__()", "lipsum.__globals__"],
)
def test_templates_are_sandboxed(tmp_path, expr):
    prof = _user_profile(tmp_path, "{{ " + expr + " | tojson }}")
    with pytest.raises(RenderError):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


def test_unknown_profile_lists_builtins():
    with pytest.raises(ConfigError, match="unknown profile") as exc:
        load_profile("nope")
    assert "lineage" in (exc.value.hint or "")


def test_values_are_type_checked_for_every_entity_not_once_per_shape(tmp_path):
    # Both processes render the same shape; only the second one's queryText is not a string.
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ domain) | tojson }},'
        ' "name": "x", "queryText": {{ process.attributes.q | tojson }}}}',
    )
    doc = {
        "datasets": [{"id": "db.t", "name": "t"}],
        "processes": [
            {"id": "a", "name": "a", "outputs": ["db.t"], "attributes": {"q": "select 1"}},
            {"id": "b", "name": "b", "outputs": ["db.t"], "attributes": {"q": 5}},
        ],
    }
    with pytest.raises(RenderError, match=r"process 'b'.*queryText.*expected string"):
        render(LineageGraph.from_document(doc), load_profile(prof), domain="demo", job="daily")


def _render_both(graph, profile, monkeypatch):
    """Render with value slots (the fast path) and with Jinja text + json.loads."""
    from atlas_sync.render import renderer

    fast = render(graph, profile, domain="demo", job="daily")
    env = renderer._Renderer(profile, "demo", "daily").env
    monkeypatch.setitem(env.__dict__, "atlas_sync_fillers", {})
    monkeypatch.setattr(renderer, "compile_slots", lambda *a: None)
    slow = render(graph, profile, domain="demo", job="daily")
    return fast, slow


@pytest.mark.parametrize("profile_name", ["lineage", "pico"])
def test_value_slot_rendering_gives_the_entities_text_rendering_gives(profile_name, monkeypatch):
    doc = {
        "datasets": [
            {"id": 'db.we"ird', "namespace": "db", "name": "</script>&'<", "columns": ["a", "ünï😀"]},
            {"id": "db.out", "name": "out", "columns": ["x"], "facets": {"format": "parquet"}},
        ],
        "processes": [
            {
                "id": "p",
                "name": "p",
                "inputs": ['db.we"ird'],
                "outputs": ["db.out"],
                "attributes": {"queryText": "q"},
            },
            {"id": "q", "name": "{{ 7*7 }}", "inputs": ["db.out"], "outputs": []},
        ],
        "edges": [
            {"source": 'db.we"ird.a', "target": "db.out.x", "kind": "AGGREGATION", "expression": "sum(a)"},
            {"source": 'db.we"ird.ünï😀', "target": "db.out.*", "kind": "FILTER"},
        ],
    }
    graph = LineageGraph.from_document(doc)
    fast, slow = _render_both(graph, load_profile(profile_name), monkeypatch)
    assert fast.entities.keys() == slow.entities.keys()
    for key, e in fast.entities.items():
        assert e.__dict__ == slow.entities[key].__dict__


@pytest.mark.parametrize(
    "source",
    [
        '{"a": "x{{ v | tojson }}"}',  # a slot inside a string
        '{"a": {{ v | tojson }}, "a": 1}',  # a slot lost to a duplicate key
        '{"a": {{ v | tojson(indent=2) }}}',  # tojson with arguments
        '{% if v %}{"a": 1}{% endif %}',  # control flow
        '{"a": {{ v }}}',  # a value not passed through tojson
    ],
)
def test_templates_outside_the_value_slot_form_render_as_text(source):
    import jinja2

    from atlas_sync.render.slots import compile_slots

    assert compile_slots(jinja2.Environment(), source, str) is None


def test_value_slots_keep_the_sandbox_and_strict_undefined(tmp_path):
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ process.nope | tojson }}}}',
    )
    with pytest.raises(RenderError, match=r"process.json.j2 \(process 'daily'\)"):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


def test_a_rendered_state_is_freed_by_reference_counting_alone():
    """One-shot commands run without the cyclic collector: a state held in a reference cycle (a
    recursive closure over it) would stay in memory for the whole sync."""
    import gc
    import weakref

    graph = LineageGraph.from_document(DOC)
    gc.disable()
    try:
        state = render(graph, load_profile("lineage"), domain="d", job="j")
        assert {e.tier for e in state.entities.values()} >= {0, 1, 2}
        freed = weakref.ref(state)
        del state
        assert freed() is None
    finally:
        gc.enable()


def _entity(name: str, *refs: str) -> DesiredEntity:
    return DesiredEntity(
        type_name="t",
        qualified_name=name,
        attributes={"qualifiedName": name},
        refs={"r": [("t", r) for r in refs]},
        origin=f"node {name}",
    )


def test_tiers_put_each_entity_after_everything_it_refers_to() -> None:
    entities = [
        _entity("d"),
        _entity("c1", "d"),
        _entity("c2", "d"),
        _entity("p", "c1", "c2", "d"),
        _entity("l", "p"),
    ]
    state = DesiredState("demo", "daily", {e.key: e for e in reversed(entities)})
    _assign_tiers(state, {("t", "elsewhere"): 5})
    assert [state.entities[("t", n)].tier for n in ("d", "c1", "c2", "p", "l")] == [0, 1, 1, 2, 3]
    later = DesiredState(
        "demo", "daily", {("t", "x"): _entity("x", "elsewhere", "d2"), ("t", "d2"): _entity("d2")}
    )
    _assign_tiers(later, {("t", "elsewhere"): 5})
    assert later.entities[("t", "x")].tier == 6  # after an entity of an earlier part


def test_a_reference_cycle_or_an_unrendered_reference_is_an_error() -> None:
    cycle = DesiredState(
        "demo", "daily", {("t", n): _entity(n, r) for n, r in (("a", "b"), ("b", "c"), ("c", "a"))}
    )
    with pytest.raises(RenderError, match="reference cycle through t"):
        _assign_tiers(cycle, {})
    dangling = DesiredState(
        "demo", "daily", {("t", "a"): _entity("a", "b"), ("t", "b"): _entity("b", "nowhere")}
    )
    with pytest.raises(
        RenderError, match="node b: references t 'nowhere', which the profile does not render"
    ):
        _assign_tiers(dangling, {})


def test_a_profile_names_one_key_attribute_and_the_two_old_ones_are_refused(tmp_path):
    lineage = load_profile("lineage")
    assert (lineage.bookkeeping.key, lineage.bookkeeping.digest) == ("atlasSyncKey", "atlasSyncDigest")
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "dataset.json.j2").write_text("{}", encoding="utf-8")
    (folder / "process.json.j2").write_text("{}", encoding="utf-8")
    (folder / "profile.toml").write_text('scope_attribute = "atlasSyncScope"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="scope_attribute is gone") as exc:
        load_profile(folder)
    assert "key_attribute" in (exc.value.hint or "")


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ({"id": "a"}, "id"),  # an item
        ({"items": "x"}, "items"),  # a dict method wins over an item of that name, as in Jinja
        ({"get": 1}, "get"),
        ({}, "missing"),  # undefined: StrictUndefined's error
        ({"__class__": 1}, "__class__"),  # the sandbox's unsafe attribute
        ({"__init__": 1}, "__init__"),
        ({"_private": 2}, "_private"),  # an item whose name the sandbox refuses as an attribute
        ({1: "int key"}, "missing"),
    ],
)
def test_a_dict_attribute_in_a_template_is_what_jinjas_sandbox_gives(value, name):
    """The renderer's sandbox looks ``x.name`` up on a plain dict without a failed ``getattr`` first:
    the same value, or the same error, as Jinja's immutable sandbox."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from atlas_sync.render.renderer import _Sandbox

    def outcome(env_type: type) -> tuple[str, str]:
        env = env_type(undefined=jinja2.StrictUndefined)
        try:
            source = "{{ x.NAME }}|{{ x.NAME is defined }}".replace("NAME", name)
            return "ok", env.from_string(source).render(x=value)
        except Exception as exc:  # the error is part of the behaviour compared
            return type(exc).__name__, str(exc)

    assert outcome(_Sandbox) == outcome(ImmutableSandboxedEnvironment)


@pytest.mark.parametrize(
    ("value", "is_json"),
    [
        ("s", True),
        (None, True),
        (True, True),
        (3, True),
        (1.5, True),
        (float("nan"), False),
        ([{"typeName": "t", "uniqueAttributes": {"qualifiedName": "q"}}, None, 1], True),
        ([{"a": [1, float("inf")]}], False),  # deep inside: still found
        ([{"a": (1, 2)}], False),  # a tuple is not JSON (tojson makes it a list)
        ({"a": {1: "x"}}, False),  # a key that is not a string
        ([[["x"]]], True),
        ({"a": object()}, False),
    ],
)
def test_a_slot_value_is_taken_as_it_is_only_when_it_is_json_already(value, is_json):
    from atlas_sync.render.slots import _is_json

    assert _is_json(value) is is_json


@pytest.mark.parametrize(
    ("value", "why"),
    [("true", "expected string, got bool"), ("1.5", "expected string, got float"), ('["a"]', "")],
)
def test_a_scalar_value_of_another_type_than_its_attribute_is_an_error(tmp_path, value, why):
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ domain) | tojson }},'
        ' "name": "x", "queryText": ' + value + "}}",
    )
    with pytest.raises(RenderError, match=f"queryText.*{why or 'expected string, got list'}"):
        render(LineageGraph.from_document(DOC), load_profile(prof), domain="demo", job="daily")


def test_a_qualified_name_outside_the_domain_is_an_error_for_every_entity(tmp_path):
    # the first process's name is in the domain, the second's is not: checked per entity, not per shape
    prof = _user_profile(
        tmp_path,
        '{"typeName": "lineage_process", "attributes": {"qualifiedName": {{ (process.id ~ "@" ~ '
        '(domain if process.id == "a" else "elsewhere")) | tojson }}, "name": "x"}}',
    )
    doc = {
        "datasets": [{"id": "db.t", "name": "t"}],
        "processes": [
            {"id": "a", "name": "a", "outputs": ["db.t"]},
            {"id": "b", "name": "b", "outputs": ["db.t"]},
        ],
    }
    with pytest.raises(RenderError, match=r"process 'b'.*'b@elsewhere' must end with @demo"):
        render(LineageGraph.from_document(doc), load_profile(prof), domain="demo", job="daily")


def test_a_compiled_slot_builder_makes_fresh_copies_of_the_skeleton_as_the_walked_one_does():
    from atlas_sync.render.slots import _builder, _compiled_builder

    marks = {"\x00s0\x00": "slot_0", "\x00s1\x00": "slot_1"}
    skeleton = {
        "typeName": "t",
        "n": [1, 2.5, None, True, {"deep": ["\x00s0\x00"]}],
        "": {},
        "list": [],
        "v": "\x00s1\x00",
        'we"ird\\key': "x",
    }
    values = {"slot_0": ("a", 1), "slot_1": {"k": [1]}}
    compiled = _compiled_builder(skeleton, marks, lambda v: __import__("json").dumps(v))
    walked = _builder(skeleton, marks, lambda v: __import__("json").dumps(v))
    assert compiled is not None
    first = compiled(values)
    assert first == walked(values)
    assert first["n"][4]["deep"] == [["a", 1]]  # (a tuple is not JSON: through tojson, a list)
    first["n"].append("changed")
    first["n"][4]["deep"].clear()
    assert compiled(values) == walked(values)  # nothing of one entity is shared with the next


def test_a_skeleton_too_deep_to_compile_is_built_by_walking_it():
    from atlas_sync.render.slots import _compiled_builder

    deep: object = "\x00s0\x00"
    for _ in range(400):
        deep = [deep]
    assert _compiled_builder(deep, {"\x00s0\x00": "slot_0"}, str) is None
