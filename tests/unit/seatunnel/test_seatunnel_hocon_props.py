"""Property test: however plugin blocks repeat, every block of every section survives, in order."""

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_sync.lineage.seatunnel.hocon import load_hocon

plugin_names = st.sampled_from(["Jdbc", "Hive", "FakeSource", "MySQL-CDC", "Sql", "Console"])
# printable text without quotes or backslashes (pyhocon turns a tab inside a string into spaces)
values = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters='"\\'), max_size=10
)
block = st.tuples(plugin_names, st.booleans(), values, st.booleans())


def render(section: str, blocks: list) -> str:
    out = [f"{section} {{"]
    for name, eq, value, comment in blocks:
        if comment:
            out.append(f"  # {name} {{ not a plugin }}")
        out.append(f'  {name} {"= " if eq else ""}{{ note = "{value} {{ }}", n = 1 }}')
    out.append("}")
    return "\n".join(out)


@settings(max_examples=40, deadline=None)
@given(
    sources=st.lists(block, min_size=1, max_size=5),
    transforms=st.lists(block, max_size=3),
    sinks=st.lists(block, min_size=1, max_size=4),
)
def test_every_plugin_block_is_kept_in_order(sources, transforms, sinks):
    text = "\n".join(
        [
            'env { job.mode = "BATCH" }',
            render("source", sources),
            render("transform", transforms) if transforms else "",
            render("sink", sinks),
        ]
    )
    job = load_hocon(text, file=None, variables={})
    expected = [("source", b[0]) for b in sources] + [("transform", b[0]) for b in transforms]
    expected += [("sink", b[0]) for b in sinks]
    assert [(p.section, p.name) for p in job.plugins] == expected
    notes = [p.options["note"] for p in job.plugins]
    assert notes == [f"{b[2]} {{ }}" for b in [*sources, *transforms, *sinks]]
