"""A job's or statement's box in a picture is headed by its name, its kind the small line under it
(an operator's box stays headed by the operator and its level)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from atlas_sync.lineage.model import LineageGraph, Process
from atlas_sync.view import pictures

SVG = "{http://www.w3.org/2000/svg}"


def box_texts(svg: str) -> dict[str, tuple[str, str]]:
    """Each process box's (heading, small line), by the first line of its tooltip."""
    out = {}
    for g in ET.fromstring(svg.split("\n", 1)[1] if svg.startswith("<?xml") else svg).iter(SVG + "g"):
        if "process" in (g.get("class") or "").split():
            title = g.find(SVG + "title")
            texts = {t.get("class"): t.text or "" for t in g.iter(SVG + "text")}
            assert title is not None and title.text
            out[title.text.split("\n")[0]] = (texts.get("t", ""), texts.get("s", ""))
    return out


@pytest.mark.parametrize("kind", ["statement", "lineage_process", "job"])
def test_a_process_box_is_headed_by_its_name(kind: str) -> None:
    g = LineageGraph()
    g.add_process(
        Process(id="etl:tab3:e4deccc6", name="etl:tab3:e4deccc6", kind=kind, inputs=["a"], outputs=["b"])
    )
    assert box_texts(pictures.render(g, "svg")) == {"etl:tab3:e4deccc6": ("etl:tab3:e4deccc6", kind)}
    assert 'label="etl:tab3:e4deccc6\\n' + kind + '"' in pictures.render(g, "dot")


def test_an_operator_box_stays_headed_by_the_operator() -> None:
    g = LineageGraph()
    g.add_process(Process(id="p", name="pico_project_1_0", kind="operator", operator="Project", level="1_0"))
    assert box_texts(pictures.render(g, "svg"))["p"][0] == "Project [1_0]"
