"""The `powerbi` reader on a real PBIR report saved by Power BI Desktop (Microsoft's MIT
semantic-link-labs, tests/data/powerbi/semantic-link-labs/README.md). Expectations written by hand from
the visual.json files (each projection's queryRef and the column or measure it names)."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage import registry

REPORT = Path(__file__).resolve().parents[2] / "data" / "powerbi" / "semantic-link-labs" / "BPAReport.Report"
T = "powerbi:bi_dataset:BPAReport.BPAResults"
MAIN, MODEL, RULES, TIP = (
    "01d72098bda5055bd500",
    "c597da16dc7e63222a82",
    "92735ae19b31712208ad",
    "d37dce724a0ccc30044b",
)
SEV, VIOL, ERR = ("Rule Severity", "Violations", "Error Violations")
# page -> visual -> [(queryRef, field of BPAResults)], as the visual.json files give them
VISUALS: dict[str, dict[str, list[tuple[str, str]]]] = {
    MAIN: {
        "1b08bce3bebabb0a27a8": [("BPAResults.Workspace Name", "Workspace"), ("BPAResults.Model Name", "Model")],
        "2f22ddb70c301693c165": [
            ("BPAResults.Workspace", "Workspace"), ("BPAResults.Model Name", "Model"),
            ("BPAResults.Category", "Category"), ("BPAResults.Rule Name", "Rule Name"),
            ("BPAResults.Object Type", "Object Type"), ("BPAResults.Object Name", "Object Name"),
            ("BPAResults.Sev", SEV), ("BPAResults.Violations", VIOL),
        ],
        "3b1182230aa6c600b43a": [("BPAResults.Category", "Category")],
        "58577ba6380c69891500": [("BPAResults.Severity", "Severity"), ("BPAResults.Violations", VIOL)],
        "a2a8fa5028b3b776c96c": [
            ("BPAResults.Workspaces", "Workspaces"), ("BPAResults.Model Count", "Models"),
            ("BPAResults.Violations", VIOL), ("BPAResults.Sev 3 Violations", ERR),
        ],
        "adfd47ef30652707b987": [
            ("BPAResults.Semantic Model Name", "Model"), ("BPAResults.RuleSeverity", "Severity"),
            ("BPAResults.Violations", VIOL),
        ],
        "b6a80ee459e716e170b1": [("BPAResults.RuleSeverity", "Severity")],
        "ce3130a721c020cc3d81": [
            ("BPAResults.Category", "Category"), ("BPAResults.Severity", "Severity"),
            ("BPAResults.Violations", VIOL),
        ],
    },
    MODEL: {
        "07deb8bce824e1be37d7": [
            ("BPAResults.Category", "Category"), ("BPAResults.Severity", "Severity"),
            ("BPAResults.Violations", VIOL),
        ],
        "0b1c68838818b32ad03b": [("BPAResults.Workspace Name", "Workspace"), ("BPAResults.Model Name", "Model")],
        # 0c171de9d2683d10b930 is a text box: no chart
        "0efa01be0510e40a645e": [
            ("BPAResults.Model Name", "Model"), ("BPAResults.Category", "Category"),
            ("BPAResults.Rule Name", "Rule Name"), ("BPAResults.Object Type", "Object Type"),
            ("BPAResults.Object Name", "Object Name"), ("BPAResults.Sev", SEV), ("BPAResults.Violations", VIOL),
        ],
        "6bf2f0eb830ab53cc668": [
            ("BPAResults.Workspace", "Workspace"), ("BPAResults.Model", "Model"),
            ("BPAResults.Model Owner", "Model Owner"), ("BPAResults.Violations", VIOL),
            ("BPAResults.Sev 3 Violations", ERR),
        ],
        "88d8141cb8500b60030c": [("BPAResults.Category", "Category")],
        "a753273590beed656a03": [("BPAResults.Severity", "Severity"), ("BPAResults.Violations", VIOL)],
        "b8fdc82cddd61ac447bc": [("BPAResults.RuleSeverity", "Severity")],
    },
    RULES: {
        "66e60dfb526437cd78d1": [
            ("BPAResults.Category", "Category"), ("BPAResults.Severity", "Severity"),
            ("BPAResults.Rule Name", "Rule Name"), ("BPAResults.Description", "Description"),
            ("BPAResults.URL", "URL"),
        ],
    },
    TIP: {"ce8532a7e25020271077": [("BPAResults.Description", "Description")]},
}  # fmt: skip


def _chart(page: str, visual: str) -> str:
    return f"powerbi:chart:BPAReport.{page}.{visual}"


def test_real_pbir_report_gives_exactly_its_pages_visuals_and_the_fields_they_use() -> None:
    g = registry.read("powerbi", [str(REPORT)])
    fields = {f for visuals in VISUALS.values() for used in visuals.values() for _, f in used}
    expected = {T: ("bi_dataset", fields)}
    expected |= {
        _chart(p, v): ("chart", {ref for ref, _ in used})
        for p, vs in VISUALS.items()
        for v, used in vs.items()
    }
    expected |= {f"powerbi:dashboard:BPAReport.{p}": ("dashboard", set()) for p in VISUALS}
    assert {d.id: (d.kind, set(d.column_names())) for d in g.datasets} == expected
    assert {p.id: p.inputs for p in g.processes} == {
        **{_chart(p, v): [T] for p, vs in VISUALS.items() for v in vs},
        **{
            f"powerbi:dashboard:BPAReport.{p}": [_chart(p, v) for v in sorted(vs)]
            for p, vs in VISUALS.items()
        },
    }
    # columns and measures alike are shown as they are (no aggregation in these projections)
    assert {
        (e.source.dataset, e.source.column, e.target.dataset, e.target.column, e.kind) for e in g.edges
    } == {
        (T, f, _chart(p, v), ref, "IDENTITY")
        for p, vs in VISUALS.items()
        for v, used in vs.items()
        for ref, f in used
    }
    (warning,) = g.problems  # a live connection: the model is not in the files
    assert warning.code == "powerbi-live-connection"
