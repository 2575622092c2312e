"""A malformed facet costs that facet, not the event; ``strict`` keeps the whole-event rejection.

The events are written in the shape of OpenLineage's own integration-test events (Spark, Hive, Flink,
dbt), each breaking one facet rule.
"""

import contextlib
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.openlineage import drop_bad_facets, events_to_graph, validate_event

DATA = Path(__file__).parents[2] / "data" / "openlineage" / "lenient"
SPARK_SYMLINK = DATA / "spark_symlink_without_namespace.json"
SPARK_TRANSFORMATION = DATA / "spark_transformation_without_type.json"
HIVE = DATA / "hive_column_lineage_without_fields.json"
FLINK = DATA / "flink_schema_field_without_name.jsonl"
DBT = DATA / "dbt_malformed_job_facets.json"


def read(*paths, **options):
    return registry.get("openlineage").read([str(p) for p in paths], **options)


def bad_facets(graph):
    return [p for p in graph.problems if p.code == "openlineage-bad-facet"]


def edges(graph):
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_symlink_identifier_without_namespace_drops_only_the_symlinks_facet():
    g = read(SPARK_SYMLINK)
    (warning,) = bad_facets(g)
    assert warning.severity == "warning" and warning.file == str(SPARK_SYMLINK)
    assert "$.inputs[0].facets.symlinks dropped" in warning.message
    assert "identifiers[0]: 'namespace' is required, SymlinksDatasetFacet" in warning.message
    # the input is named by its location; its schema and the output's valid symlink are kept
    src = g.dataset("file:///tmp/spark-warehouse/raw_customers")
    assert src is not None and src.column_names() == ["cust_id", "email"]
    assert g.dataset("default.stage_customers") is not None
    assert edges(g) == {
        ("file:///tmp/spark-warehouse/raw_customers.cust_id", "default.stage_customers.cust_id", "IDENTITY"),
        (
            "file:///tmp/spark-warehouse/raw_customers.email",
            "default.stage_customers.domain",
            "TRANSFORMATION",
        ),
    }
    (proc,) = g.processes
    assert proc.inputs == ["file:///tmp/spark-warehouse/raw_customers"]
    assert proc.outputs == ["default.stage_customers"]


def test_column_lineage_without_fields_is_dropped_and_the_run_keeps_datasets_and_schema():
    g = read(HIVE)
    (warning,) = bad_facets(g)
    assert (
        "$.outputs[0].facets.columnLineage dropped ('fields' is required, ColumnLineageDatasetFacet)"
        in str(warning)
    )
    (proc,) = g.processes
    assert (proc.inputs, proc.outputs) == (["default.sales"], ["default.monthly_sales"])
    assert proc.attributes["sql"].startswith("CREATE TABLE default.monthly_sales")
    assert g.dataset("default.monthly_sales").column_names() == ["month", "amount"]
    assert g.edges == []


def test_transformation_without_type_drops_that_input_field_not_the_facet_or_the_outputs():
    g = read(SPARK_TRANSFORMATION)
    (warning,) = bad_facets(g)
    assert "$.outputs[0].facets.columnLineage.fields.k.inputFields[0] dropped" in warning.message
    assert "fields.k.inputFields[0].transformations[0]: 'type' is required" in warning.message
    # the facet's other entry (b.k -> union.k) is kept
    assert edges(g) == {("file:///tmp/data/b.k", "file:///tmp/data/union.k", "IDENTITY")}
    (proc,) = g.processes
    assert proc.inputs == ["file:///tmp/data/a", "file:///tmp/data/b"]
    assert proc.outputs == ["file:///tmp/data/union"]
    assert g.dataset("file:///tmp/data/union").column_names() == ["k"]


def test_schema_field_without_name_drops_that_schema_and_keeps_later_events_of_the_run():
    g = read(FLINK)
    (warning,) = bad_facets(g)
    assert warning.line == 1
    assert "$.outputs[0].facets.schema dropped ($.outputs[0].facets.schema.fields[1]: 'name' is required" in (
        warning.message
    )
    # line 2 (RUNNING) is whole: its schema and column lineage are read
    out = g.dataset("io.openlineage.flink.kafka.output")
    assert out.kind == "topic" and out.column_names() == ["id", "version"]
    assert edges(g) == {
        ("io.openlineage.flink.kafka.input1.id", "io.openlineage.flink.kafka.output.id", "TRANSFORMATION")
    }
    (proc,) = g.processes
    assert proc.attributes["eventType"] == "RUNNING"


def test_malformed_job_facets_are_dropped_one_by_one_and_the_documentation_kept():
    g = read(DBT)
    paths = sorted(p.message.split(" dropped")[0] for p in bad_facets(g))
    assert paths == ["$.job.facets.jobType", "$.job.facets.sql"]
    (proc,) = g.processes
    assert "sql" not in proc.attributes and "jobType" not in proc.attributes
    assert proc.attributes["description"] == "One row per order"
    assert (proc.inputs, proc.outputs) == (["dbt_test.main.stg_orders"], ["dbt_test.main.orders"])


def test_facets_that_are_not_an_object_are_dropped_and_the_dataset_kept():
    ev = json.loads(DBT.read_text())
    ev["job"]["facets"] = {}
    ev["outputs"][0]["facets"] = ["schema"]
    g = events_to_graph([ev])
    (warning,) = bad_facets(g)
    assert warning.message.startswith("$.outputs[0].facets dropped (facets must be an object, not list)")
    assert g.processes[0].outputs == ["dbt_test.main.orders"]


def test_the_event_given_is_not_changed_by_dropping_its_facets():
    ev = json.loads(SPARK_SYMLINK.read_text())
    before = copy.deepcopy(ev)
    cleaned, issues = drop_bad_facets(ev)
    assert ev == before
    assert [i.path for i in issues] == ["$.inputs[0].facets.symlinks"]
    assert "symlinks" not in cleaned["inputs"][0]["facets"]
    assert cleaned["outputs"] is ev["outputs"]  # what was good is shared, not copied


def test_a_good_event_comes_back_as_the_same_object():
    ev = json.loads((DATA.parent / "spark_complete.json").read_text())
    cleaned, issues = drop_bad_facets(ev)
    assert cleaned is ev and issues == []


@pytest.mark.parametrize("path", [SPARK_SYMLINK, HIVE, SPARK_TRANSFORMATION, FLINK, DBT])
def test_strict_option_rejects_the_whole_event_naming_the_facet_path(path):
    with pytest.raises(InputError) as exc:
        read(path, strict="true")
    assert exc.value.file == str(path)
    assert ".facets." in exc.value.path


@pytest.mark.parametrize(
    ("event", "where"),
    [
        ({"eventType": "COMPLETE", "run": {"runId": "r"}, "job": {"namespace": "n"}}, "$.job"),
        ({"eventType": "DONE", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}}, "$.eventType"),
        ({"eventType": "COMPLETE", "job": {"namespace": "n", "name": "j"}}, "$"),
        (
            {"run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}, "inputs": [{"name": "t"}]},
            "$.inputs[0]",
        ),
        (
            {
                "run": {"runId": "r"},
                "job": {"namespace": "n", "name": "j"},
                "outputs": [{"namespace": "x", "name": ""}],
            },
            "$.outputs[0].name",
        ),
    ],
)
def test_an_unusable_core_still_rejects_the_event(event, where):
    with pytest.raises(InputError) as exc:
        validate_event(event)
    assert exc.value.path == where
    with pytest.raises(InputError):
        events_to_graph([event])


def test_lineage_cli_lists_the_warning_and_strict_flag_fails(tmp_path):
    cmd = [sys.executable, "-m", "atlas_sync.cli.main", "lineage", "openlineage", str(HIVE)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [p["code"] for p in doc["problems"]] == ["openlineage-bad-facet"]
    strict = subprocess.run([*cmd, "--strict"], capture_output=True, text=True, check=False)
    assert strict.returncode == 1
    assert "$.outputs[0].facets.columnLineage" in strict.stderr and "'fields' is required" in strict.stderr


def test_sync_prints_the_dropped_facet_on_stderr_and_publishes_the_run(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "atlas_sync.cli.main",
        "sync",
        "-d",
        "demo",
        "--from",
        "openlineage",
        str(HIVE),
    ]
    env = {"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "warning:" in done.stderr and "$.outputs[0].facets.columnLineage dropped" in done.stderr
    assert "+ lineage_process hive-it/createtable_as_select.default.monthly_sales@demo" in done.stdout
    assert "+ lineage_dataset default.monthly_sales@demo" in done.stdout
    strict = subprocess.run(
        [*cmd, "--strict"], capture_output=True, text=True, check=False, cwd=tmp_path, env=env
    )
    assert strict.returncode != 0 and "'fields' is required" in strict.stderr


_facet_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
_facets = (
    st.dictionaries(
        st.sampled_from(["schema", "columnLineage", "symlinks", "other"]), _facet_values, max_size=3
    )
    | _facet_values
)
_dataset = st.fixed_dictionaries(
    {
        "namespace": st.sampled_from(["hive://h:9083", "file", "kafka://k"]),
        "name": st.text(min_size=1, max_size=8),
    },
    optional={"facets": _facets},
)


@settings(max_examples=150, deadline=None)
@given(
    inputs=st.lists(_dataset, max_size=3),
    outputs=st.lists(_dataset, max_size=3),
    job_facets=st.dictionaries(
        st.sampled_from(["sql", "documentation", "jobType"]), _facet_values, max_size=3
    ),
)
def test_any_facets_give_a_sound_graph_with_every_dataset(inputs, outputs, job_facets):
    ev = {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "run": {"runId": "00000000-0000-4000-8000-000000000001"},
        "job": {"namespace": "n", "name": "j", "facets": job_facets},
        "inputs": inputs,
        "outputs": outputs,
    }
    g = events_to_graph([ev])
    assert g.check() == []
    (proc,) = g.processes
    assert bool(proc.outputs) == bool(outputs) and bool(proc.inputs) >= bool(inputs)
    with contextlib.suppress(InputError):
        events_to_graph([ev], strict=True)


def test_endpoint_accepts_an_event_with_a_bad_facet_and_syncs_its_datasets(tmp_path):
    import threading

    import requests

    from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, serve

    synced = []
    done = threading.Event()

    def sync(graph, job):
        synced.append((job, graph))
        done.set()

    cfg = EndpointConfig(
        journal_path=tmp_path / "journal.sqlite", dead_letter_path=tmp_path / "dead.jsonl", linger=0.01
    )
    server = serve(LineageEndpoint(sync, cfg), port=0)
    try:
        r = requests.post(server.url + "/api/v1/lineage", data=SPARK_SYMLINK.read_bytes(), timeout=10)
        assert r.status_code == 201, r.text
        assert done.wait(30), "the event was not synced"
    finally:
        server.shutdown(timeout=2)
    ((job, graph),) = synced
    assert job.startswith("spark-it/ctas_job")
    assert graph.processes[0].inputs == ["file:///tmp/spark-warehouse/raw_customers"]
    assert graph.processes[0].outputs == ["default.stage_customers"]
    assert [p.code for p in graph.problems] == ["openlineage-bad-facet"]
    assert not (tmp_path / "dead.jsonl").exists()


def test_serve_prints_the_dropped_facet_and_publishes_the_run(tmp_path):
    import re
    import signal
    import time

    import requests

    env = {"PATH": "/usr/bin:/bin", "ATLAS_SYNC_DATA_DIR": str(tmp_path / "data")}
    cmd = [
        sys.executable,
        "-m",
        "atlas_sync.cli.main",
        "openlineage",
        "serve",
        "--port",
        "0",
        "--domain",
        "demo",
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        line = proc.stderr.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/api/v1/lineage", line)
        assert m, line
        r = requests.post(m.group(1) + "/api/v1/lineage", data=HIVE.read_bytes(), timeout=10)
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 30
        while requests.get(m.group(1) + "/api/v1/metrics", timeout=10).json()["synced"] < 1:
            assert time.monotonic() < deadline, "event not synced"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "warning: job hive-it/createtable_as_select.default.monthly_sales:" in err
    assert "$.outputs[0].facets.columnLineage dropped ('fields' is required" in err
