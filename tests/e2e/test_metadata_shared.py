"""Two jobs, different metadata rules, one shared dataset (over HTTP: the emulator; a real Atlas when
``ATLAS_URL`` is set).

Job A (``customers``) and job B (``emails``) both read raw.customers. A's rules tag
``raw.customers.email`` PII and label it ``gdpr``; B's tag it Sensitive and label it ``gdpr`` too.
Each job's claims are its own: alternating syncs are stable (nothing sent), a job's rule removed
removes its tag only when no other job wants it. Request counts are written from the design in
docs/metadata.md ("Shared entities"), per sync, by call kind.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient

SQL_A = "INSERT INTO stage.customers SELECT id, email FROM raw.customers;\n"
SQL_B = "INSERT INTO mart.emails SELECT id, email FROM raw.customers;\n"
COLUMN = "raw.customers.email"


@pytest.fixture
def names(client: AtlasClient) -> Iterator[dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    out = {
        "domain": "sh" + tag,
        "pii": "PII_" + tag,
        "sensitive": "Sensitive_" + tag,
        "manual": "Manual_" + tag,
    }
    client.create_typedefs(
        {
            "classificationDefs": [
                {"name": out[k], "attributeDefs": [], "superTypes": []}
                for k in ("pii", "sensitive", "manual")
            ]
        }
    )
    yield out
    Publisher(client, domain=out["domain"]).teardown(purge=True)


class Jobs:
    """The two jobs' inputs and rules files, synced as a user would after each job."""

    def __init__(self, client: AtlasClient, names: dict[str, str], tmp_path: Path) -> None:
        self.client, self.names, self.tmp = client, names, tmp_path
        self.sql = {"customers": tmp_path / "customers.sql", "emails": tmp_path / "emails.sql"}
        self.sql["customers"].write_text(SQL_A)
        self.sql["emails"].write_text(SQL_B)
        self.rules: dict[str, Path | None] = {"customers": None, "emails": None}

    def set_rules(self, job: str, classification: str | None, labels: list[str]) -> None:
        lines = ["[[rules]]", f'columns = ["{COLUMN}"]']
        if classification:
            lines.append(f'classifications = [{{ name = "{self.names[classification]}" }}]')
        if labels:
            lines.append(f"labels = {json.dumps(labels)}")
        path = self.tmp / f"{job}.toml"
        path.write_text("\n".join(lines) + "\n")
        self.rules[job] = path

    def sync(self, job: str) -> dict[str, int]:
        """Sync ``job``: the entities it read in full (bulk GET by guid; B's lookup by name of the
        shared table, one request per type, is the job's listing, the same every sync), its entity
        write requests and its metadata requests."""
        self.client.stats.reset()
        read: list[str] = []
        get_entities = self.client.get_entities

        def counted(guids: Any, **kw: Any) -> list[dict[str, Any]]:
            guids = list(guids)
            read.extend(guids)
            return get_entities(guids, **kw)

        self.client.get_entities = counted  # type: ignore[method-assign]
        try:
            pub = Publisher(self.client, domain=self.names["domain"], metadata_rules=self.rules[job])
            pub.sync(pub.read("sql", [str(self.sql[job])], dialect="spark"), job=job)
        finally:
            del self.client.get_entities
        return {
            "read": len(read),
            "entity_write": self.client.stats["entity_write"].requests,
            "metadata_write": self.client.stats["metadata_write"].requests,
        }

    def column(self) -> dict[str, Any]:
        got = self.client.get_entity_by_unique("lineage_column", f"{COLUMN}@{self.names['domain']}")
        assert got is not None
        return got

    def own_tags(self) -> set[str]:
        ent = self.column()
        by_name = {v: k for k, v in self.names.items()}
        return {
            by_name.get(c["typeName"], c["typeName"])
            for c in ent.get("classifications") or []
            if c.get("entityGuid") in (None, ent["guid"])
        }

    def labels(self) -> list[str]:
        return sorted(self.column().get("labels") or [])


NOTHING = {"read": 0, "entity_write": 0, "metadata_write": 0}


@pytest.fixture
def jobs(client: AtlasClient, names: dict[str, str], tmp_path: Path) -> Jobs:
    return Jobs(client, names, tmp_path)


def test_two_jobs_with_different_rules_on_a_shared_column_stay_stable(jobs: Jobs) -> None:
    jobs.set_rules("customers", "pii", ["gdpr"])
    first = jobs.sync("customers")
    assert first["metadata_write"] == 2  # 1 bulk classification (PII) + 1 labels PUT
    assert jobs.own_tags() == {"pii"} and jobs.labels() == ["gdpr"]

    # B without rules: wants nothing of the column, so it leaves A's tags alone
    b_plain = jobs.sync("emails")
    assert b_plain["metadata_write"] == 0
    assert jobs.own_tags() == {"pii"} and jobs.labels() == ["gdpr"]
    assert jobs.sync("emails") == NOTHING

    # B's rules: Sensitive is added, gdpr (A's, which B wants too) is joined, not sent again
    jobs.set_rules("emails", "sensitive", ["gdpr"])
    b_rules = jobs.sync("emails")
    # the column read in full (B's part of its digest is new); its record (B's claims) written
    # before the classification, its digest after it
    assert b_rules == {"read": 1, "entity_write": 2, "metadata_write": 1}
    assert jobs.own_tags() == {"pii", "sensitive"} and jobs.labels() == ["gdpr"]

    # alternating unchanged syncs: nothing read, written or sent, and the tags stay
    for job in ("customers", "emails", "customers", "emails", "customers"):
        assert jobs.sync(job) == NOTHING, job
    assert jobs.own_tags() == {"pii", "sensitive"} and jobs.labels() == ["gdpr"]

    # a person's classification survives both jobs' syncs
    guid = jobs.column()["guid"]
    jobs.client._call(
        "entity_write",
        "POST",
        f"/v2/entity/guid/{guid}/classifications",
        body=[{"typeName": jobs.names["manual"]}],
    )

    # A's PII rule removed (its label kept): PII goes (no other job wants it): one DELETE, the
    # column read once and written once (its record and A's digest part, after the DELETE)
    jobs.set_rules("customers", None, ["gdpr"])
    assert jobs.sync("customers") == {"read": 1, "entity_write": 1, "metadata_write": 1}
    assert jobs.own_tags() == {"sensitive", "manual"} and jobs.labels() == ["gdpr"]
    assert jobs.sync("emails") == NOTHING  # B's Sensitive and gdpr are B's: untouched
    assert jobs.sync("customers") == NOTHING

    # A's rules file gone: A drops its claim of gdpr, which B still wants: no request, the label stays
    jobs.rules["customers"] = None
    assert jobs.sync("customers") == {"read": 1, "entity_write": 1, "metadata_write": 0}
    assert jobs.labels() == ["gdpr"]
    assert jobs.sync("customers") == NOTHING
    assert jobs.sync("emails") == NOTHING

    # B's rules gone too: nobody claims Sensitive or gdpr now: both removed, the person's tag stays
    jobs.rules["emails"] = None
    assert jobs.sync("emails") == {"read": 1, "entity_write": 1, "metadata_write": 2}
    assert jobs.own_tags() == {"manual"} and jobs.labels() == []
    assert jobs.column()["attributes"].get("atlasSyncMetadata") is None
    assert jobs.sync("emails") == NOTHING and jobs.sync("customers") == NOTHING


def test_a_tag_both_jobs_want_stays_until_neither_does(jobs: Jobs) -> None:
    jobs.set_rules("customers", "pii", [])
    jobs.set_rules("emails", "pii", [])
    assert jobs.sync("customers")["metadata_write"] == 1
    # B wants PII too: it joins A's claim, sends nothing
    assert jobs.sync("emails")["metadata_write"] == 0
    jobs.rules["customers"] = None
    # A no longer wants it; B does: PII stays, and B's digest part is dropped with A's claim
    assert jobs.sync("customers")["metadata_write"] == 0
    assert jobs.own_tags() == {"pii"}
    # so B reads the column once (its settings of PII would now apply), finds it as it wants it
    assert jobs.sync("emails") == {"read": 1, "entity_write": 1, "metadata_write": 0}
    assert jobs.sync("emails") == NOTHING
    jobs.rules["emails"] = None
    assert jobs.sync("emails")["metadata_write"] == 1  # the DELETE: nobody wants it now
    assert jobs.own_tags() == set()


def test_settings_apply_once_the_job_that_set_them_lets_go(jobs: Jobs) -> None:
    pii = jobs.names["pii"]
    jobs.tmp.joinpath("a.toml").write_text(
        f'[[rules]]\ncolumns = ["{COLUMN}"]\nclassifications = [{{ name = "{pii}", propagate = true }}]\n'
    )
    jobs.tmp.joinpath("b.toml").write_text(
        f'[[rules]]\ncolumns = ["{COLUMN}"]\nclassifications = [{{ name = "{pii}", propagate = false }}]\n'
    )
    jobs.rules = {"customers": jobs.tmp / "a.toml", "emails": jobs.tmp / "b.toml"}
    jobs.sync("customers")
    assert jobs.sync("emails")["metadata_write"] == 0  # shared: A's settings stay, no flapping
    assert jobs.sync("customers") == NOTHING and jobs.sync("emails") == NOTHING
    (tag,) = [c for c in jobs.column()["classifications"] if c["typeName"] == pii]
    assert tag["propagate"] is True
    jobs.rules["customers"] = None
    assert jobs.sync("customers")["metadata_write"] == 0
    # B alone claims it now: its next sync puts its settings (one PUT of the classifications)
    assert jobs.sync("emails") == {"read": 1, "entity_write": 1, "metadata_write": 1}
    (tag,) = [c for c in jobs.column()["classifications"] if c["typeName"] == pii]
    assert tag["propagate"] is False
    assert jobs.sync("emails") == NOTHING
