"""A LookML project's files, parsed with ``lkml`` (MIT, pure Python): models, views, the manifest's
constants and ``.dashboard.lookml`` dashboards (YAML). Also the text rendering LookML applies before
SQL reaches the warehouse: ``@{constants}`` and the common Liquid forms (see :func:`render_liquid`)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lkml
import yaml

from atlas_sync.errors import InputError


@dataclass
class Model:
    name: str
    file: str
    connection: str | None
    explores: list[dict[str, Any]]


@dataclass
class Project:
    name: str
    constants: dict[str, str] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    view_files: dict[str, str] = field(default_factory=dict)
    dashboards: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    # (file, message, line): files that do not parse; the others are still read
    errors: list[tuple[str, str, int | None]] = field(default_factory=list)
    warnings: list[tuple[str | None, str]] = field(default_factory=list)


def project_files(paths: Sequence[str]) -> tuple[list[Path], Path | None]:
    """The LookML files of ``paths`` (folders searched recursively) and the project folder (the first
    folder given, else the first file's folder)."""
    files: list[Path] = []
    root: Path | None = None
    for p in paths:
        path = Path(p)
        if path.is_dir():
            root = root or path
            files += sorted(
                f for f in path.rglob("*") if f.is_file() and f.name.endswith((".lkml", ".lookml"))
            )
        elif path.is_file():
            root = root or path.parent
            files.append(path)
        else:
            raise InputError("no such file or folder", file=p)
    return files, root


def is_lookml(path: str) -> bool:
    p = Path(path)
    if p.is_dir():
        return any(p.glob("*.model.lkml")) or any(p.glob("*/*.model.lkml")) or (p / "manifest.lkml").is_file()
    return p.name.endswith((".model.lkml", ".view.lkml", ".explore.lkml", ".dashboard.lookml"))


def load_project(paths: Sequence[str], *, name: str | None = None) -> Project:
    files, root = project_files(paths)
    if not files:
        raise InputError("no LookML file (.lkml, .dashboard.lookml)", file=paths[0] if paths else None)
    parsed: list[tuple[Path, dict[str, Any]]] = []
    project = Project(name=name or "")
    for f in files:
        text = _read(f)
        if f.name.endswith(".lookml"):
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                project.errors.append(
                    (
                        str(f),
                        f"invalid LookML dashboard (YAML): {getattr(exc, 'problem', exc)}",
                        mark.line + 1 if mark else None,
                    )
                )
                continue
            for dash in doc if isinstance(doc, list) else [doc]:
                if isinstance(dash, dict) and dash.get("dashboard"):
                    project.dashboards.append((dash, str(f)))
            continue
        try:
            parsed.append((f, lkml.load(text)))
        except SyntaxError as exc:
            project.errors.append(
                (str(f), f"invalid LookML: {exc.msg if hasattr(exc, 'msg') else exc}", exc.lineno)
            )
        except Exception as exc:  # noqa: BLE001 - lkml raises a few kinds; each is this file's fault
            project.errors.append((str(f), f"invalid LookML: {type(exc).__name__}: {exc}", None))
    for f, doc in parsed:
        if f.name == "manifest.lkml":
            if isinstance(doc.get("project_name"), str) and not name:
                project.name = doc["project_name"]
            for c in doc.get("constants") or []:
                if isinstance(c, dict) and c.get("name"):
                    project.constants[str(c["name"])] = str(c.get("value", ""))
    if not project.name:
        project.name = root.resolve().name if root is not None else "lookml"
    explore_files: dict[Path, list[dict[str, Any]]] = {}
    includes: dict[str, list[str]] = {}
    for f, doc in parsed:
        for view in doc.get("views") or []:
            if not isinstance(view, dict) or not view.get("name"):
                continue
            vname = str(view["name"])
            if vname in project.views and not view.get("extension") and "+" not in vname:
                project.warnings.append(
                    (
                        str(f),
                        f"view {vname!r} is defined again (also in {project.view_files[vname]}): the later one is read",
                    )
                )
            project.views[vname] = view
            project.view_files[vname] = str(f)
        if f.name.endswith(".model.lkml"):
            mname = f.name[: -len(".model.lkml")]
            project.models[mname] = Model(
                mname,
                str(f),
                doc.get("connection") if isinstance(doc.get("connection"), str) else None,
                [e for e in doc.get("explores") or [] if isinstance(e, dict) and e.get("name")],
            )
            includes[mname] = [str(i) for i in doc.get("includes") or [] if isinstance(i, str)]
        elif doc.get("explores"):  # explores in an .explore.lkml file: their model is the one including it
            explore_files[f.resolve()] = [e for e in doc["explores"] if isinstance(e, dict) and e.get("name")]
    _attach_explore_files(project, explore_files, includes, root)
    _apply_refinements(project)
    _resolve_extends(project)
    return project


def _refine(base: dict[str, Any], refinement: dict[str, Any]) -> dict[str, Any]:
    """``base`` with a refinement's (``view: +name``) keys: fields added or replaced by name, the rest
    replaced, as Looker applies them in order."""
    out = dict(base)
    for k, v in refinement.items():
        if k == "name":
            continue
        if k in _FIELD_LISTS or k == "joins":
            names = {x.get("name") for x in v if isinstance(x, dict)}
            out[k] = [x for x in out.get(k, []) if x.get("name") not in names] + list(v)
        else:
            out[k] = v
    return out


def _apply_refinements(project: Project) -> None:
    for vname in [v for v in project.views if v.startswith("+")]:
        refinement = project.views.pop(vname)
        project.view_files.pop(vname, None)
        base = vname[1:].strip()
        if base in project.views:
            project.views[base] = _refine(project.views[base], refinement)
        else:
            project.warnings.append((None, f"refinement of view {base!r}, which the project does not define"))
    for model in project.models.values():
        plain = [e for e in model.explores if not str(e["name"]).startswith("+")]
        for e in [e for e in model.explores if str(e["name"]).startswith("+")]:
            target = next((x for x in plain if x["name"] == str(e["name"])[1:].strip()), None)
            if target is None:
                project.warnings.append(
                    (model.file, f"refinement of explore {e['name'][1:]!r}, not in the model")
                )
                continue
            plain[plain.index(target)] = _refine(target, e)
        model.explores = plain


def _attach_explore_files(
    project: Project,
    explore_files: dict[Path, list[dict[str, Any]]],
    includes: dict[str, list[str]],
    root: Path | None,
) -> None:
    """Explores of ``.explore.lkml`` files belong to the models whose ``include:`` matches the file
    (``/path`` from the project folder, else from the model's folder; ``*`` and ``**`` as Looker's)."""
    used: set[Path] = set()
    for mname, patterns in includes.items():
        model = project.models[mname]
        for pattern in patterns:
            if pattern.startswith("//"):
                continue  # another project's files
            base = root if pattern.startswith("/") and root is not None else Path(model.file).parent
            rel = pattern.lstrip("/")
            for f, explores in explore_files.items():
                try:
                    name = f.relative_to(base.resolve()).as_posix()
                except ValueError:
                    continue
                if fnmatch.fnmatchcase(name, rel) or fnmatch.fnmatchcase(name, rel.replace("**/", "")):
                    known = {e["name"] for e in model.explores}
                    model.explores += [e for e in explores if e["name"] not in known]
                    used.add(f)
    for f in explore_files:
        if f not in used:
            project.warnings.append((str(f), "no model includes this file: its explores are not read"))


def _read(f: Path) -> str:
    try:
        return f.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=str(f)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(f)) from None


_FIELD_LISTS = ("dimensions", "dimension_groups", "measures", "filters", "parameters")


def _resolve_extends(project: Project) -> None:
    """A view that ``extends`` others gets their table, derived table and fields (its own win)."""

    def merged(name: str, seen: frozenset[str]) -> dict[str, Any]:
        view = project.views[name]
        parents = (
            [p for p in view.get("extends__all", [[]])[0] if isinstance(p, str)]
            if view.get("extends__all")
            else []
        )
        if not parents:
            return view
        out: dict[str, Any] = {}
        for parent in parents:
            if parent in project.views and parent not in seen:
                base = merged(parent, seen | {name})
                for k, v in base.items():
                    if k in _FIELD_LISTS:
                        have = {x.get("name") for x in out.get(k, [])}
                        out[k] = out.get(k, []) + [x for x in v if x.get("name") not in have]
                    elif k not in ("name", "extension"):
                        out[k] = v
        for k, v in view.items():
            if k in _FIELD_LISTS:
                own = {x.get("name") for x in v}
                out[k] = [x for x in out.get(k, []) if x.get("name") not in own] + list(v)
            else:
                out[k] = v
        return out

    for vname in list(project.views):
        project.views[vname] = merged(vname, frozenset())


# ---------------------------------------------------------------------------------------- rendering

_CONSTANT = re.compile(r"@\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_CONDITION = re.compile(r"\{%-?\s*condition\s+[^%]*?-?%\}(.*?)\{%-?\s*endcondition\s*-?%\}", re.DOTALL)
_VALUE_TAG = re.compile(r"\{%-?\s*(parameter|date_start|date_end)\s+[^%]*?-?%\}")
_COMMENT = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.DOTALL)
_ELSE = re.compile(r"\{%-?\s*(?:else|elsif\b[^%]*?)\s*-?%\}.*?(?=\{%-?\s*endif\s*-?%\})", re.DOTALL)
_IF_TAGS = re.compile(r"\{%-?\s*(?:if|unless|endif|endunless)\b[^%]*-?%\}")
_OUTPUT = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_OTHER_TAG = re.compile(r"\{%-?\s*(\w+)[^%]*-?%\}")
_USER_ATTRIBUTE = re.compile(r"""^_user_attributes\[\s*['"]([^'"]+)['"]\s*\]$""")


@dataclass
class Rendered:
    text: str
    unknown_constants: list[str] = field(default_factory=list)
    # Liquid that could not be rendered as Looker would (said in a warning): what was done instead
    notes: list[str] = field(default_factory=list)


def render_liquid(
    text: str,
    *,
    constants: Mapping[str, str],
    names: Mapping[str, str] | None = None,
    user_attributes: Mapping[str, str] | None = None,
) -> Rendered:
    """LookML text as the warehouse would get it, as far as it is known without a query:

    * ``@{name}``: the manifest's constant (an unknown one is reported and left);
    * ``{% condition f %} expr {% endcondition %}``: ``(expr) IS NOT NULL`` (the column stays a filter);
    * ``{% parameter p %}``, ``{% date_start f %}``, ``{% date_end f %}``: ``NULL``;
    * ``{{ _model._name }}``, ``{{ _view._name }}``, ``{{ _explore._name }}``: those names (``names``);
    * ``{{ _user_attributes['a'] }}``: the value given (``user_attributes``), else ``NULL``, reported;
    * ``{% if %}`` / ``{% unless %}``: the first branch, reported; ``{% comment %}``: removed;
    * any other output ``NULL`` and any other tag removed, reported.
    """
    out = Rendered(text)
    s = text
    for _ in range(5):  # constants may hold constants
        if "@{" not in s:
            break

        def const(m: re.Match[str]) -> str:
            key = m.group(1)
            if key in constants:
                return constants[key]
            if key not in out.unknown_constants:
                out.unknown_constants.append(key)
            return m.group(0)

        new = _CONSTANT.sub(const, s)
        if new == s:
            break
        s = new
    if "{%" not in s and "{{" not in s:
        out.text = s
        return out
    s = _COMMENT.sub("", s)
    s = _CONDITION.sub(lambda m: f"({m.group(1).strip()}) IS NOT NULL", s)
    s = _VALUE_TAG.sub("NULL", s)
    if _IF_TAGS.search(s):
        out.notes.append("Liquid if/unless read with its first branch")
        s = _ELSE.sub("", s)
        s = _IF_TAGS.sub("", s)

    def output(m: re.Match[str]) -> str:
        expr = m.group(1).split("|", 1)[0].strip()
        for key, value in (names or {}).items():
            if expr == f"_{key}._name":
                return value
        ua = _USER_ATTRIBUTE.match(expr)
        if ua:
            if user_attributes and ua.group(1) in user_attributes:
                return user_attributes[ua.group(1)]
            out.notes.append(
                f"user attribute {ua.group(1)!r} unknown (read as NULL; give -o user_attributes=...)"
            )
            return "NULL"
        out.notes.append(f"Liquid {{{{ {expr} }}}} read as NULL")
        return "NULL"

    s = _OUTPUT.sub(output, s)

    def other(m: re.Match[str]) -> str:
        out.notes.append(f"Liquid tag {m.group(1)!r} left out")
        return ""

    s = _OTHER_TAG.sub(other, s)
    out.text = s
    return out
