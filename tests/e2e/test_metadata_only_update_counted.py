"""An update that only changes metadata (a label a removed rule had added) is counted as applied.

`sync` printed "Plan: 0 to create, 1 to update, ..." then "Applied: 0 created, 0 updated, 0 deleted in
2 requests": the label's removal went out as a metadata request, which the summary did not count.
"""

from __future__ import annotations

from pathlib import Path

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client


def test_removing_a_rule_s_label_counts_the_entity_as_updated(tmp_path: Path) -> None:
    sql = tmp_path / "job.sql"
    sql.write_text("INSERT INTO m.t SELECT id FROM raw.c;\n", encoding="utf-8")
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rules]]\ndatasets = ["raw.*"]\nlabels = ["gold"]\n', encoding="utf-8")
    client = embedded_client(emulator=Emulator(None))
    with_rule = Publisher(client, domain="md", metadata_rules=rules)
    with_rule.sync(with_rule.read("sql", [str(sql)]), job="j")

    without = Publisher(client, domain="md")
    result = without.sync(without.read("sql", [str(sql)]), job="j")

    assert [(i.action, i.qualified_name) for i in result.plan.items if i.action != "unchanged"] == [
        ("update", "raw.c@md")
    ]
    assert result.applied is not None
    assert (result.applied.created, result.applied.updated, result.applied.deleted) == (0, 1, 0)
    held = client.get_entity_by_unique("lineage_dataset", "raw.c@md")
    assert not held.get("entity", held).get("labels")
