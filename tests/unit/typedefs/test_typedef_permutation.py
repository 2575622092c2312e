"""Property: the plan does not depend on the order of input files, nor on how defs are spread
over files or in which order they are listed."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typedef_test_support import find, server_typesdef

from atlas_sync.typedefs import load_bundle, plan_against

DATA = Path(__file__).resolve().parents[2] / "data" / "typedefs"
SOURCES = [DATA / "base", DATA / "ext", DATA / "mutual", "lineage"]

_REFERENCE = load_bundle(*SOURCES)
# A server that already has part of it, one type with an older description: the plan has creates,
# updates and unchanged types.
_SERVER = server_typesdef(load_bundle(DATA / "base", "lineage"))
find(_SERVER, "t_dataset")["description"] = "an older description"

# Every def with its list name, in a fixed order.
_DEFS: list[tuple[str, dict[str, Any]]] = [
    (lst, d) for lst, defs in _REFERENCE.typesdef().items() for d in defs
]


def _comparable(plan_doc: dict[str, Any]) -> dict[str, Any]:
    doc = dict(plan_doc)
    doc.pop("sources")
    doc["types"] = [{k: v for k, v in t.items() if k != "file"} for t in doc["types"]]
    return doc


_EXPECTED = _comparable(plan_against(_REFERENCE, _SERVER).to_dict())


@settings(max_examples=40, deadline=None)
@given(
    order=st.permutations(range(len(_DEFS))),
    cuts=st.lists(st.integers(min_value=0, max_value=len(_DEFS)), max_size=5),
    names=st.lists(
        st.text("abcdefgh0123456789", min_size=1, max_size=6), min_size=6, max_size=6, unique=True
    ),
    source_order=st.permutations(range(6)),
)
def test_any_permutation_of_files_and_defs_gives_the_same_plan(
    order: list[int], cuts: list[int], names: list[str], source_order: list[int]
) -> None:
    bounds = sorted({0, len(_DEFS), *cuts})
    chunks = [order[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, chunk in enumerate(chunks):
            doc: dict[str, list[dict[str, Any]]] = {}
            for k in chunk:
                lst, d = _DEFS[k]
                doc.setdefault(lst, []).append(d)
            f = Path(tmp) / f"{names[i]}.json"
            f.write_text(json.dumps(doc))
            files.append(f)
        files = [files[i] for i in source_order if i < len(files)]
        plan = plan_against(load_bundle(*files), _SERVER)
    assert _comparable(plan.to_dict()) == _EXPECTED
    assert _EXPECTED["summary"]["create"] > 0 and _EXPECTED["summary"]["update"] == 1


def test_order_of_sources_does_not_change_the_plan() -> None:
    a = plan_against(load_bundle(*SOURCES), _SERVER).to_dict()
    b = plan_against(load_bundle(*reversed(SOURCES)), _SERVER).to_dict()
    assert a == b
