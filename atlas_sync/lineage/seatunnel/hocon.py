"""Loading SeaTunnel job configs (HOCON ``.conf`` or JSON) into plugin lists.

SeaTunnel's own config loader keeps several plugin blocks of the same name in one section (two
``Jdbc {}`` sources are two sources); a plain HOCON library merges them into one. Before handing the
text to pyhocon we therefore give every plugin block inside ``source``/``transform``/``sink`` a
unique key (``"Jdbc#0"``, ``"Jdbc#1"``) with a small scanner that understands HOCON strings and
comments; pyhocon does the rest (includes aside, substitutions, concatenation, object merging).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.errors import InputError

SECTIONS = ("source", "transform", "sink")
_WORD_END = set(" \t\r\n{}[],=:#\"'")
_SEP = "#"


@dataclass
class Plugin:
    """One plugin block of a section, in file order."""

    section: str  # source | transform | sink
    index: int  # position within the section
    name: str  # plugin_name (Jdbc, FieldRename, ...)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.section}[{self.index}]:{self.name}"


@dataclass
class JobConfig:
    env: dict[str, Any]
    plugins: list[Plugin]


def split_plugin_blocks(text: str) -> str:
    """Rename each plugin block key inside the top-level sections to a unique quoted key."""
    edits: list[tuple[int, int, str]] = []
    depth = 0
    section_depth: int | None = None
    last_word: tuple[int, int, str] | None = None
    counter = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#" or text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith('"""', i):
            j = text.find('"""', i + 3)
            end = n if j < 0 else j + 3
            last_word = (i, end, text[i + 3 : end - 3])
            i = end
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            try:
                value = json.loads(text[i:end])
            except ValueError:
                value = text[i + 1 : end - 1]
            last_word = (i, end, value)
            i = end
            continue
        if c in "{[":
            if c == "{" and depth == 0 and last_word is not None and last_word[2] in SECTIONS:
                section_depth = 1
            elif c == "{" and section_depth is not None and depth == section_depth and last_word is not None:
                start, end, name = last_word
                edits.append((start, end, json.dumps(f"{name}{_SEP}{counter}")))
                counter += 1
            depth += 1
            last_word = None
            i += 1
            continue
        if c in "}]":
            depth -= 1
            if section_depth is not None and depth < section_depth:
                section_depth = None
            last_word = None
            i += 1
            continue
        if c in "=:," or c.isspace():
            if c == ",":
                last_word = None
            i += 1
            continue
        j = i
        while j < n and text[j] not in _WORD_END and not text.startswith("//", j):
            j += 1
        if j == i:  # a lone quote character or similar: step over it
            j = i + 1
        last_word = (i, j, text[i:j])
        i = j
    out = []
    pos = 0
    for start, end, repl in edits:
        out.append(text[pos:start])
        out.append(repl)
        pos = end
    out.append(text[pos:])
    return "".join(out)


_RESERVED = frozenset(SECTIONS) | {"env"}
_QUOTED_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}")


def load_hocon(text: str, *, file: str | None, variables: Mapping[str, str]) -> JobConfig:
    """Parse a HOCON job config; ``variables`` resolve ``${var}`` (SeaTunnel's ``-i key=value``)."""
    from pyhocon import ConfigFactory, ConfigTree  # imported lazily: pyparsing is slow to import

    for k in variables:
        if k in _RESERVED:
            raise InputError(f"variable name {k!r} clashes with a config section", file=file)
    prepared = split_plugin_blocks(text)
    # Variables are also replaced inside quoted strings ("select * from ${table}"), as SeaTunnel
    # does; placeholders nobody defined (the sink's ${table_name}) are left for the reader.
    if variables:
        prepared = _QUOTED_VAR.sub(lambda m: str(variables.get(m.group(1), m.group(0))), prepared)
    try:
        tree = ConfigFactory.parse_string(prepared, resolve=False)
        if variables:
            tree = tree.with_fallback(ConfigFactory.from_dict(dict(variables)))
        else:
            from pyhocon.config_parser import ConfigParser

            ConfigParser.resolve_substitutions(tree)
        plain = tree.as_plain_ordered_dict() if isinstance(tree, ConfigTree) else tree
    except Exception as exc:  # noqa: BLE001 - pyhocon/pyparsing raise many types; all mean bad input
        raise _hocon_error(exc, file) from None
    if not isinstance(plain, Mapping):
        raise InputError("a SeaTunnel job config must be an object with env/source/sink", file=file)
    return _job_from_mapping(plain, file, split_keys=True)


def _hocon_error(exc: Exception, file: str | None) -> InputError:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "col", None)
    m = re.search(r"\(line: (\d+), col: (\d+)\)", msg)
    if m:
        line, col = int(m.group(1)), int(m.group(2))
        msg = msg[: m.start()].strip()
    if "Cannot resolve variable" in msg:
        hint = "pass its value with --var KEY=VALUE (like seatunnel -i key=value; Python: variables={...}) or define it in the file"
    else:
        hint = "the file is not valid HOCON"
    msg = msg.replace('"', "'").replace(f"{_SEP}", " #")
    return InputError(f"invalid SeaTunnel config: {msg}", file=file, line=line, column=col, hint=hint)


def load_json_config(data: Any, *, file: str | None) -> JobConfig:
    """SeaTunnel's JSON form: ``{"env": {}, "source": [{"plugin_name": "Jdbc", ...}], ...}``."""
    if not isinstance(data, Mapping):
        raise InputError("a SeaTunnel job config must be a JSON object", file=file, path="$")
    return _job_from_mapping(data, file, split_keys=False)


def _job_from_mapping(data: Mapping[str, Any], file: str | None, *, split_keys: bool) -> JobConfig:
    if not any(s in data for s in ("source", "sink")):
        raise InputError(
            "not a SeaTunnel job config: no 'source' or 'sink' section",
            file=file,
            hint="a job has env { }, source { }, optional transform { } and sink { }",
        )
    env = data.get("env") or {}
    if not isinstance(env, Mapping):
        raise InputError("'env' must be an object", file=file, path="$.env")
    plugins: list[Plugin] = []
    for section in SECTIONS:
        block = data.get(section)
        if block is None:
            continue
        if isinstance(block, Mapping):
            items = list(block.items())
        elif isinstance(block, list):  # JSON form: a list of {"plugin_name": ...}
            items = []
            for i, entry in enumerate(block):
                if not isinstance(entry, Mapping) or not isinstance(entry.get("plugin_name"), str):
                    raise InputError(
                        f"each {section} entry needs a 'plugin_name'", file=file, path=f"$.{section}[{i}]"
                    )
                items.append((entry["plugin_name"], entry))
        else:
            raise InputError(f"'{section}' must be a block of plugins", file=file, path=f"$.{section}")
        for index, (key, options) in enumerate(items):
            name = key.rsplit(_SEP, 1)[0] if split_keys and _SEP in key else key
            if not isinstance(options, Mapping):
                raise InputError(
                    f"plugin {name!r} in '{section}' must be a block", file=file, path=f"$.{section}.{name}"
                )
            opts = dict(options)
            name = str(opts.pop("plugin_name", name))
            plugins.append(Plugin(section=section, index=index, name=name, options=opts))
    return JobConfig(env=dict(env), plugins=plugins)
