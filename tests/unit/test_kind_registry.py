"""The registry of kinds (dbtier.results.kinds, resolved by dbtier.results.registry): every kind declares every
face, each declared face resolves to what its readers call, a face a kind has none of is declared so on
purpose (the lists below, by hand), and a kind added in one place is drawn by the report, show, the exports
and the runs index without any of them naming it."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from dbtier.export import series as export_series
from dbtier.export.families import METRICS, Builder
from dbtier.report.figures.core import Figure, Table, Terminal
from dbtier.results import kinds, registry, types
from dbtier.runsdb import views

NAMES = [k.name for k in kinds.KINDS]
CATALOG = {"catalog.list", "catalog.show", "catalog.template"}
EXPORT = {"export.metrics", "export.series"}
RUNS = {"runs.list", "runs.sql", "runs.trend", "runs.check"}
READERS = {"report", "show", "compare", "cleanup"} | CATALOG | EXPORT | RUNS   # commands that measure nothing

# The faces a kind has none of, by nature, as the kinds declare them (None), by hand.
NO_METRICS = READERS | {"advise"}
NO_SERIES = READERS | {"advise", "bench.dss", "bench.backup", "lab", "history.requirement", "plan.equivalent",
                       "plan.budget", "plan.size", "plan.value"}
NO_VIEW = READERS | {"lab"}         # a lab's steps are runs of their own
NO_RESULT = EXPORT | RUNS
# The kinds drawn the generic way (their top-level numbers, nothing more to print, their JSON), by hand.
GENERIC_FIGURES = READERS | {"history.import", "history.consolidate", "history.requirement"}
GENERIC_TERMINAL = GENERIC_FIGURES | {"advise", "simulate.run", "simulate.capture", "simulate.convert"}
GENERIC_SECTION = READERS


def _doc(name: str) -> dict:
    """The least document of a kind: its envelope, nothing measured (a run that stopped at once)."""
    return {"schema_version": 1, "command": kinds.BY_NAME[name].command, kinds.KEY: name, "status": "failed",
            "params": {}}


def test_every_face_is_declared_with_the_kind():
    """A face left out of a kind's entry is no silent default: the entry does not build."""
    faces = {f.name for f in dataclasses.fields(kinds.Faces)}
    assert faces == {"result", *registry.FACES}
    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(kinds.Faces))
    with pytest.raises(TypeError, match="metrics"):
        kinds.Faces(result=(), figures=kinds.GENERIC_FIGURES, terminal=kinds.GENERIC_TERMINAL,  # type: ignore[call-arg]
                    section=kinds.GENERIC_SECTION, series=None, view=None)


@pytest.mark.parametrize("which, none", [("metrics", NO_METRICS), ("series", NO_SERIES), ("view", NO_VIEW)])
def test_the_kinds_without_a_face_are_the_ones_that_have_none_by_nature(which, none):
    assert {k.name for k in kinds.KINDS if getattr(k, which) is None} == none


def test_the_kinds_drawn_generically_are_the_ones_that_have_nothing_of_their_own():
    assert {k.name for k in kinds.KINDS if k.figures == kinds.GENERIC_FIGURES} == GENERIC_FIGURES
    assert {k.name for k in kinds.KINDS if k.terminal == kinds.GENERIC_TERMINAL} == GENERIC_TERMINAL
    assert {k.name for k in kinds.KINDS if k.section == kinds.GENERIC_SECTION} == GENERIC_SECTION
    assert {k.name for k in kinds.KINDS if not k.result} == NO_RESULT


@pytest.mark.parametrize("name", NAMES)
def test_each_face_of_a_kind_resolves_to_what_its_readers_call(name):
    doc = _doc(name)
    figs = registry.face(name, "figures")(doc)
    assert isinstance(figs, list) and all(isinstance(f, Figure) for f in figs)
    term = registry.face(name, "terminal")
    assert isinstance(term, Terminal)
    assert all(isinstance(t, Table) for t in term.tables(doc))
    assert all(isinstance(a, str) and isinstance(b, str) for a, b in term.method(doc))
    html = registry.face(name, "section")(doc, 0)
    assert html.startswith('<section class="run ') and html.endswith("</section>")
    fill = registry.face(name, "metrics")
    if fill is not None:
        b = Builder(METRICS)
        fill(b, "r1", doc)
        assert all(fam.name.startswith("dbtier_") for fam in b.families())
    src = registry.face(name, "series")
    assert src is None or (isinstance(src, export_series.Source) and src.basis in export_series.BASIS)
    view = registry.face(name, "view")
    assert view is None or (view is views.VIEWS[view.name] and view.name == kinds.BY_NAME[name].index[0])


@pytest.mark.parametrize("name", [n for n in NAMES if n not in NO_RESULT])
def test_a_kinds_typed_result_is_a_section_of_the_schema(name):
    k = kinds.BY_NAME[name]
    for t in k.result:
        cls = getattr(types, t)
        assert typing.is_typeddict(cls)
        assert (({"command": k.command}, cls) in types.SECTIONS
                or ({"command": k.command, kinds.KEY: name}, cls) in types.SECTIONS)


def test_every_view_and_every_series_source_belongs_to_a_kind():
    used_views = {registry.face(n, "view").name for n in NAMES if registry.face(n, "view") is not None}
    assert used_views == set(views.VIEWS)
    sources = {v for v in vars(export_series).values() if isinstance(v, export_series.Source)}
    assert {registry.face(n, "series") for n in NAMES} - {None} == sources


def test_a_name_that_is_no_kind_gets_its_commands_faces_or_the_generic_ones():
    assert kinds.faces("plan") is kinds.UNKNOWN_ACTION["plan"]            # a plan of an action not known here
    assert kinds.faces("bench") is kinds.GENERIC
    assert kinds.faces("unknown") is kinds.GENERIC
    html = registry.face("plan", "section")({"schema_version": 1, "command": "plan", "plan": "lease"}, 0)
    assert "This plan document has no known action (lease)" in html
    with pytest.raises(ValueError, match="not a face"):
        registry.face("probe", "colour")


# -- a kind added in one place ----------------------------------------------------------------------------------

def fake_figures(doc: dict) -> list[Figure]:
    return [Figure("widgets", "widgets made", doc.get("widgets"), "", 0, "higher")]


def fake_section(doc: dict, i: int) -> str:
    return f'<section class="run fake"><h2 id="run-{i + 1}">{doc.get("widgets")} widgets</h2></section>'


def fake_metrics(b: Builder, run_id: str, doc: dict) -> None:
    b.add("dbtier_lab_steps", doc.get("widgets"), run_id=run_id, status="made")


FAKE_TERMINAL = Terminal(lambda doc: [Table("widgets", ["n"], [[doc.get("widgets")]])],
                         lambda doc: [("widgets", "counted by hand")])


def test_a_kind_registered_once_is_drawn_by_every_reader(monkeypatch):
    from dbtier.export import exposition, metrics
    from dbtier.report.html import render_html
    from dbtier.report.markdown import render_markdown
    from dbtier.report.summary import summary
    from dbtier.runsdb.extract import row_of

    here = __name__ + ":"
    fake = kinds.Kind(name="fake", label="fake", index=("fake", None), writers=("fake",), result=(),
                      figures=here + "fake_figures", terminal=here + "FAKE_TERMINAL", section=here + "fake_section",
                      metrics=here + "fake_metrics", series=None, view=None)
    monkeypatch.setitem(kinds.BY_NAME, "fake", fake)
    doc = {"schema_version": 1, "command": "fake", kinds.KEY: "fake", "status": "ok", "widgets": 7}

    assert '<section class="run fake"><h2 id="run-1">7 widgets</h2></section>' in render_html([doc])
    s = summary(doc)
    assert [(f["key"], f["value"]) for f in s["figures"]] == [("widgets", 7)]
    assert s["tables"] == [{"title": "widgets", "columns": ["n"], "rows": [[7]]}]
    assert s["method"] == [{"what": "widgets", "how": "counted by hand"}]
    assert "- widgets: counted by hand" in render_markdown([doc])
    text = exposition.text(metrics.families([("r1", doc)])).decode()
    assert 'dbtier_lab_steps{run_id="r1",status="made"} 7.0' in text
    row = row_of(doc, "r1", 0, 0)
    assert (row["kind"], row["summary"]) == ("fake", "widgets=7")


def test_a_kinds_library_call_returns_that_kinds_typed_result():
    # `call` names a function whose declared return type is a Result subclass of exactly this kind
    import typing
    from dbtier.results.result import Result
    with_call = [k for k in kinds.KINDS if k.call is not None]
    # every kind but the lab's, which chains the others' calls (cli/lab_calls.py)
    assert {k.name for k in with_call} == set(kinds.NAMES) - {"lab"}
    for k in with_call:
        fn = registry.resolve(k.call)
        ret = typing.get_type_hints(fn)["return"]
        assert issubclass(ret, Result), k.name
        assert ret.__dataclass_fields__["kind"].default == k.name, k.name
        assert ret.__dataclass_params__.frozen, k.name
