"""tools/manifest.py: finding citations, choosing mutants, and running them in a scratch copy."""

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT, manifest_tool

tool = manifest_tool()


# -- citations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("# [basic/utilities/cancellation#4] no response", ["basic/utilities/cancellation#4"]),
        ("# [basic/index#26, #27, #29] keys", ["basic/index#26", "basic/index#27", "basic/index#29"]),
        (
            "# [basic/utilities/progress#9-#11] tokens",
            ["basic/utilities/progress#9", "basic/utilities/progress#10", "basic/utilities/progress#11"],
        ),
        ("# [client/sampling#9, schema#31] tools", ["client/sampling#9", "schema#31"]),
        ("# [a/b#1, #3-#4, c#2]", ["a/b#1", "a/b#3", "a/b#4", "c#2"]),
        ("# [a/b#1] one; [c/d#2] two", ["a/b#1", "c/d#2"]),
        ("# [a/b#1] fetched; [#3, #5] and checked", ["a/b#1", "a/b#3", "a/b#5"]),
        ("# see [#3]: no chapter before it, no id", []),
        ("# -- tasks#task-status-lifecycle (an anchor, no id)", []),
        ("# [basic/utilities/tasks#task-status-lifecycle]", []),
        ("x = a[1]  # not a citation", []),
        # ids of other revisions carry a prefix; 2025-11-25's never do
        ("# [2026-07-28:basic/patterns/mrtr#4] retry", ["2026-07-28:basic/patterns/mrtr#4"]),
        ("# [ext-tasks:tasks#3]", ["ext-tasks:tasks#3"]),
        ("# [2025-11-25:a/b#1]", ["a/b#1"]),
        # a prefix holds for the rest of its group, a bare #N keeps chapter and revision
        (
            "# [2026-07-28:a/b#1, #3-#4, c#2]",
            ["2026-07-28:a/b#1", "2026-07-28:a/b#3", "2026-07-28:a/b#4", "2026-07-28:c#2"],
        ),
        ("# [2026-07-28:a/b#1, 2025-11-25:c#2, #3]", ["2026-07-28:a/b#1", "c#2", "c#3"]),
        ("# [2026-07-28:a/b#1] then [#5]", ["2026-07-28:a/b#1", "2026-07-28:a/b#5"]),
        ("# [2026-07-28:a/b#1] and [c/d#2]: a new group starts at 2025-11-25", ["2026-07-28:a/b#1", "c/d#2"]),
        ("# [2026-07-28:#4]: a prefix needs a chapter", []),
    ],
)
def test_citation_syntax(text: str, ids: list[str]) -> None:
    assert tool.cited_in(text) == ids


def test_citations_in_comments_and_docstrings() -> None:
    source = textwrap.dedent(
        '''\
        """Module docstring [m/d#1]."""


        def f(x):
            """[f/d#2] what f enforces."""
            # [c/c#3, #4] a comment
            return x  # [c/c#5]
        '''
    )
    found = tool.file_citations(source, "pkg/mod.py")
    assert [(c.line, c.ids, c.docstring) for c in found] == [
        (1, ("m/d#1",), True),
        (5, ("f/d#2",), True),
        (6, ("c/c#3", "c/c#4"), False),
        (7, ("c/c#5",), False),
    ]


def test_citing_tests_follow_markers_on_functions_classes_and_modules(tmp_path: Path) -> None:
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "sub" / "test_x.py").write_text(
        textwrap.dedent(
            """\
            import pytest
            from pytest import mark

            pytestmark = [pytest.mark.req("m#1")]


            @pytest.mark.req("a#1", "a#2")
            def test_one(): ...


            @mark.req("c#1")
            class TestGroup:
                @pytest.mark.req("a#1")
                async def test_two(self): ...

                def helper(self): ...
            """
        )
    )
    found = tool.citing_tests(tmp_path)
    one, two = "tests/sub/test_x.py::test_one", "tests/sub/test_x.py::TestGroup::test_two"
    assert found == {"m#1": [one, two], "a#1": [one, two], "a#2": [one], "c#1": [two]}


def test_markers_name_ids_of_any_revision_one_way(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        '@pytest.mark.req("2026-07-28:a/b#1", "2025-11-25:a/b#1")\ndef test_one(): ...\n\n\n'
        '@pytest.mark.req("a/b#1")\ndef test_two(): ...\n'
    )
    found = tool.citing_tests(tmp_path)
    one, two = "tests/test_x.py::test_one", "tests/test_x.py::test_two"
    assert found == {"2026-07-28:a/b#1": [one], "a/b#1": [one, two]}


# -- which statement a citation annotates, and its mutant --------------------------------------


def mutants(source: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(operator, mutated module) for every citation in ``source``, and what the
    citations without a mutant annotate."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    stmts, code = tool._statements(tree), tool.code_lines(source)
    made: list[tuple[str, str]] = []
    notes: list[str] = []
    for cite in tool.file_citations(source, "m.py"):
        stmt = tool.annotated(source, tree, cite, stmts, code)
        result = tool.mutate_statement(source, stmt) if stmt is not None else None
        if result is None:
            notes.append(type(stmt.node).__name__ if stmt is not None else "none")
            continue
        op, lines = result
        made.append((op, "".join(lines)))
    return made, notes


def only_mutant(source: str) -> tuple[str, str]:
    made, notes = mutants(source)
    assert len(made) == 1, (made, notes)
    op, text = made[0]
    ast.parse(text)  # every mutant is a valid module
    return op, text


def test_a_comment_before_an_if_negates_its_test() -> None:
    op, text = only_mutant(
        """\
        def f(x):
            y = 1
            # [a/b#1] refuse negatives
            if x < 0 and y:
                raise ValueError(x)
            return x
        """
    )
    assert op == "negate"
    assert "    if not (x < 0 and y):\n" in text


def test_a_multi_line_condition_stays_in_parentheses() -> None:
    op, text = only_mutant(
        """\
        def f(x, y):
            if (  # [a/b#1]
                x
                and y
            ):
                return 1
        """
    )
    assert op == "negate"
    assert "not (x\n        and y)" in text


def test_a_comment_inside_a_function_annotates_the_statement_not_the_function() -> None:
    op, text = only_mutant(
        """\
        def f(x):
            # [a/b#1] announce
            print(x)
            return x
        """
    )
    assert op == "delete"
    assert "    pass\n    return x" in text


def test_a_trailing_comment_annotates_its_own_line() -> None:
    op, text = only_mutant(
        """\
        def f(out):
            out.append(1)
            out.append(2)  # [a/b#1]
            out.append(3)
        """
    )
    assert (op, text.count("append")) == ("delete", 2)
    assert "append(2)" not in text


def test_a_docstring_citation_returns_early_after_the_docstring() -> None:
    op, text = only_mutant(
        '''\
        def check(x):
            """[a/b#1] checks x.

            More words.
            """
            if not x:
                raise ValueError
        '''
    )
    assert op == "return-early"
    assert '    """\n    return\n    if not x:' in text


def test_a_comment_before_a_def_returns_early() -> None:
    op, text = only_mutant(
        """\
        class C:
            # [a/b#1]
            @property
            def f(self):
                return 1
        """
    )
    assert op == "return-early"
    assert "def f(self):\n        return\n        return 1" in text


def test_a_boolean_value_is_negated() -> None:
    op, text = only_mutant(
        """\
        def ok(v):
            return v == "é" and v  # [a/b#1] names with accents too
        """
    )
    assert op == "negate"
    assert 'return not (v == "é" and v)  # [a/b#1]' in text


def test_a_block_is_skipped() -> None:
    op, text = only_mutant(
        """\
        def f(items, out):
            # [a/b#1] every item
            for i in items:
                out.append(i)
            return out
        """
    )
    assert op == "skip"
    assert "for" not in text and "    pass\n    return out" in text


def test_a_comment_inside_a_table_deletes_only_its_entry() -> None:
    op, text = only_mutant(
        """\
        TABLE = {
            "a": 1,
            # [a/b#1] b is allowed
            "b": frozenset(
                {2}
            ),
            "c": 3,  # c, without citation
        }
        """
    )
    assert op == "delete"
    namespace: dict[str, Any] = {}
    exec(text, namespace)
    assert namespace["TABLE"] == {"a": 1, "c": 3}


def test_a_trailing_comment_inside_a_call_deletes_that_argument() -> None:
    op, text = only_mutant(
        """\
        x = dict(
            a=1,
            b=2,  # [a/b#1]
        )
        """
    )
    namespace: dict[str, Any] = {}
    exec(text, namespace)
    assert (op, namespace["x"]) == ("delete", {"a": 1})


def test_a_class_has_no_mutant() -> None:
    made, notes = mutants(
        '''\
        class Refused(Exception):
            """[a/b#1] the peer refused."""
        '''
    )
    assert (made, notes) == ([], ["ClassDef"])


def test_the_else_branch_a_comment_names() -> None:
    op, text = only_mutant(
        """\
        def f(x, out):
            if x:
                out.append(1)
            else:  # [a/b#1] otherwise two
                out.append(2)
        """
    )
    assert op == "delete" and "append(2)" not in text and "append(1)" in text


# -- the whole run, on a fake repository ---------------------------------------------------------

FAKE_RULES = '''\
def check(n: int) -> bool:
    # [x/y#1] negative numbers are refused
    if n < 0:
        return False
    return True


def describe(n: int) -> str:
    """[x/y#2] what a number looks like."""
    words = ["number"]
    # [x/y#2] a negative number says so
    if n < 0:
        words.append("(negative)")
    return " ".join(words)
'''

FAKE_TESTS = """\
from pathlib import Path

import pytest

import mcp_ref
from mcp_ref.rules import check, describe

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.req("x/y#1")
def test_negatives_are_refused() -> None:
    # the package under test is this copy's, not the one installed in the venv
    assert Path(mcp_ref.__file__).resolve().is_relative_to(ROOT)
    assert check(-1) is False
    assert check(1) is True


@pytest.mark.parametrize("n", [pytest.param(-5, marks=pytest.mark.req("x/y#1"))])
def test_more_negatives(n: int) -> None:  # a marker only pytest's collection sees
    assert check(n) is False


@pytest.mark.req("x/y#2")
def test_describe() -> None:
    assert describe(3).startswith("number")  # too weak: negating the test survives
"""


def fake_repo(root: Path, survivors: list[str] | None = None) -> Path:
    (root / "mcp_ref").mkdir(parents=True)
    (root / "mcp_ref" / "__init__.py").write_text("")
    (root / "mcp_ref" / "rules.py").write_text(FAKE_RULES)
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_rules.py").write_text(FAKE_TESTS)
    (root / "setup.cfg").write_text("[tool:pytest]\nmarkers =\n    req(id): a requirement\n")
    (root / "spec_notes").mkdir()
    entries = [
        {"id": "x/y#1", "status": "implemented", "symbols": [], "note": ""},
        {"id": "x/y#2", "status": "implemented", "symbols": [], "note": "", "survivors": survivors or []},
        {"id": "x/y#3", "status": "implemented", "symbols": [], "note": "", "structural": "the model"},
    ]
    (root / "spec_notes" / "requirements.toml").write_text(tool.dump(entries))
    return root


def run_tool(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = tool.main(list(argv))
    return code, capsys.readouterr().out


def test_show_lists_the_entry_enforcing_lines_and_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fake_repo(tmp_path / "repo")
    code, out = run_tool(capsys, "show", "x/y#2", "--root", str(root))
    assert code == 0
    assert "status: implemented" in out
    assert "mcp_ref/rules.py:9  [x/y#2] what a number looks like." in out
    assert "-> 8: def describe(n: int) -> str:" in out
    assert "mcp_ref/rules.py:11  # [x/y#2] a negative number says so" in out
    assert "-> 12: if n < 0:" in out
    assert "tests/test_rules.py::test_describe" in out


def test_mutate_kills_one_and_reports_the_survivor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fake_repo(tmp_path / "repo")
    before = {p: p.read_text() for p in root.rglob("*.py")}
    code, out = run_tool(capsys, "mutate", "--root", str(root), "--json", "--timeout", "120")
    report = json.loads(out)
    assert code == 1  # a survivor the manifest does not accept
    by_id = {i["id"]: i for i in report["ids"]}
    assert [(m["op"], m["result"]) for m in by_id["x/y#1"]["mutants"]] == [("negate", "killed")]
    assert by_id["x/y#1"]["tests"] == [
        "tests/test_rules.py::test_negatives_are_refused",
        "tests/test_rules.py::test_more_negatives[-5]",
    ]
    results = {m["op"]: m for m in by_id["x/y#2"]["mutants"]}
    assert results["return-early"]["result"] == "killed"  # describe() returns None
    survivor = results["negate"]
    assert survivor["result"] == "survived" and survivor["accepted"] is None
    assert "-    if n < 0:\n+    if not (n < 0):" in survivor["diff"]
    assert by_id["x/y#3"]["status"] == "structural"
    assert report["summary"] == {
        "ids": 3,
        "mutants": 3,
        "killed": 2,
        "survived": 1,
        "accepted": 0,
        "errors": 0,
        "kill_ratio": 0.6667,
        "by_status": {"mutated": 2, "structural": 1},
    }
    # the working tree is untouched
    assert {p: p.read_text() for p in root.rglob("*.py")} == before
    # the key printed is what the manifest accepts
    assert tool.MUTANT_KEY_RE.fullmatch(survivor["key"])
    assert survivor["key"].startswith("mcp_ref/rules.py:describe:negate:")
    assert results["return-early"]["key"].startswith("mcp_ref/rules.py:describe:return-early:")  # the function's own


def test_an_accepted_survivor_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = next(
        m.key
        for m in tool.mutants_for(fake_repo(tmp_path / "a"), tool.citations(tmp_path / "a"))[0]
        if m.op == "negate" and "describe" in m.key
    )
    root = fake_repo(tmp_path / "repo", survivors=[f"{key} -- the description is cosmetic"])
    code, out = run_tool(capsys, "mutate", "x/y#2", "--root", str(root), "--timeout", "120")
    assert code == 0, out
    assert "survived (accepted: the description is cosmetic)" in out
    # the line per id counts as the total does
    assert "x/y#2: 2 mutants, 1 killed, 1 survived (1 accepted)" in out
    assert "total: 1 ids, 2 mutants, 1 killed, 1 survived (1 accepted), 0 errors; kill ratio 50.0 %" in out


def test_a_hung_mutant_is_killed_by_the_time_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fake_repo(tmp_path / "repo")
    (root / "mcp_ref" / "rules.py").write_text(
        "import time\n\n\ndef check(n: int) -> bool:\n"
        "    # [x/y#1] no waiting\n    while n > 100:\n        time.sleep(1)\n    return n >= 0\n"
    )
    (root / "tests" / "test_rules.py").write_text(
        "import pytest\nfrom mcp_ref.rules import check\n\n\n"
        '@pytest.mark.req("x/y#1")\ndef test_check() -> None:\n    assert check(1)\n'
    )
    code, out = run_tool(capsys, "mutate", "x/y#1", "--root", str(root), "--json", "--timeout", "8")
    [mutant] = json.loads(out)["ids"][0]["mutants"]
    assert (mutant["op"], mutant["result"]) == ("negate", "timeout")
    assert code == 0  # a hang is a kill


def test_an_id_not_implemented_is_not_mutated_because_of_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fake_repo(tmp_path / "repo")
    manifest = root / "spec_notes" / "requirements.toml"
    entries = [*tool.load(manifest), {"id": "x/y#4", "status": "not-applicable", "symbols": [], "note": ""}]
    manifest.write_text(tool.dump(entries))
    code, out = run_tool(capsys, "mutate", "x/y#4", "--dry-run", "--root", str(root))
    assert code == 0
    assert "x/y#4: not-applicable, 0 tests  not mutated: its status is not-applicable and no line cites it" in out
    assert "uncited" not in out and "structural note" not in out  # not reported like a defect
    code, out = run_tool(capsys, "mutate", "x/y#4", "--root", str(root))
    assert code == 0 and "ids not mutated: 1 not-applicable" in out


def test_a_short_or_mistyped_id_gets_the_full_one_suggested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fake_repo(tmp_path / "repo")
    assert tool.main(["show", "y#2", "--root", str(root)]) == 2
    assert capsys.readouterr().err == "unknown id y#2 (did you mean x/y#2?)\n"
    assert tool.main(["show", "x/z#2", "--root", str(root)]) == 2
    assert "did you mean x/y#2" in capsys.readouterr().err
    assert tool.main(["show", "nothing#99", "--root", str(root)]) == 2
    assert capsys.readouterr().err == "unknown id nothing#99\n"
    with pytest.raises(SystemExit, match=r"unknown ids: y#1 \(did you mean x/y#1\?\)"):
        tool.main(["mutate", "y#1", "--dry-run", "--root", str(root)])


def test_mutate_with_a_python_that_cannot_run_the_tests_says_which_to_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fake_repo(tmp_path / "repo")  # (no .venv in it to run again with)
    (root / "mcp_ref" / "__init__.py").write_text("import a_dependency_not_installed  # noqa\n")
    assert tool.main(["mutate", "x/y#1", "--root", str(root)]) == 2
    [line] = capsys.readouterr().err.splitlines()  # one line, no traceback
    assert "No module named 'a_dependency_not_installed'" in line
    assert "run it with .venv/bin/python (make test creates it" in line
    assert tool.runner_problem(ROOT) is None  # this python (the venv's) can


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    # `manifest.py list | head`: more output than a pipe holds, and the reader goes away
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "manifest.py"), "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert err == b""


def test_the_scratch_copy_is_what_python_imports() -> None:
    """Against the real repository: mcp_ref is installed editable in the venv, yet
    a process started as the mutants' test runs are sees the scratch copy."""
    scratch = tool.Scratch(ROOT)
    try:
        where = Path(scratch.imported_from())
        assert where.resolve().is_relative_to(scratch.dir.resolve())
        assert where.resolve() != (ROOT / "mcp_ref" / "__init__.py").resolve()
    finally:
        scratch.close()


# -- the manifest keys -----------------------------------------------------------------------------


def test_structural_and_survivors_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "spec_notes" / "requirements.toml"
    path.parent.mkdir()
    path.write_text(tool.dump([{"id": "a#1", "status": "implemented", "symbols": ["m.f"], "note": "n"}]))
    key = "mcp_ref/x.py:C.f:negate:0123abcd"
    root = ["--root", str(tmp_path)]
    assert tool.main(["set", "a#1", *root, "--structural", "the model", "--survivor", f"{key} -- cosmetic"]) == 0
    [entry] = tool.load(path)
    assert entry == {
        "id": "a#1",
        "status": "implemented",
        "symbols": ["m.f"],
        "note": "n",
        "structural": "the model",
        "survivors": [f"{key} -- cosmetic"],
    }
    assert tool.main(["set", "a#1", *root, "--survivor", f"{key} -- still cosmetic"]) == 0  # replaces, by key
    assert tool.load(path)[0]["survivors"] == [f"{key} -- still cosmetic"]
    assert tool.main(["set", "a#1", *root, "--structural", "", "--clear-survivors"]) == 0
    assert tool.load(path)[0] == {"id": "a#1", "status": "implemented", "symbols": ["m.f"], "note": "n"}


@pytest.mark.parametrize("bad", ["no reason", "mcp_ref/x.py:f:negate:0123abcd -- ", "not a key -- why"])
def test_a_survivor_needs_a_key_and_a_reason(bad: str, tmp_path: Path) -> None:
    path = tmp_path / "spec_notes" / "requirements.toml"
    path.parent.mkdir()
    path.write_text(tool.dump([{"id": "a#1", "status": "implemented", "symbols": [], "note": ""}]))
    assert tool.main(["set", "a#1", "--root", str(tmp_path), "--survivor", bad]) == 2
    assert "survivors" not in tool.load(path)[0]


# -- revisions, same_as ----------------------------------------------------------------------------

#: a 2026-07-28 statement realised by the code of x/y#2; one of its own; one same_as x/y#4
MODERN = [
    {"id": "x/y#1", "status": "implemented", "same_as": "2025-11-25:x/y#2", "symbols": [], "note": ""},
    {"id": "x/z#1", "status": "planned", "symbols": [], "note": "x/z: new in 2026-07-28"},
    {"id": "x/z#2", "status": "planned", "same_as": "2025-11-25:x/y#4", "reviewed": False, "symbols": [], "note": ""},
]


def two_revisions(root: Path) -> Path:
    fake_repo(root)
    old = root / "spec_notes" / "requirements.toml"
    old.write_text(tool.dump([*tool.load(old), {"id": "x/y#4", "status": "planned", "symbols": [], "note": ""}]))
    (root / "spec_notes" / "2026-07-28").mkdir()
    (root / "spec_notes" / "2026-07-28" / "requirements.toml").write_text(tool.dump(MODERN, "2026-07-28"))
    (root / "tests" / "test_modern.py").write_text(
        'import pytest\n\nfrom mcp_ref.rules import describe\n\n\n@pytest.mark.req("2026-07-28:x/y#1")\n'
        'def test_modern_describe() -> None:\n    assert describe(-1).endswith("(negative)")\n'
    )
    return root


def test_ids_spell_their_revision() -> None:
    assert tool.split_id("2026-07-28:a/b#1") == ("2026-07-28", "a/b#1")
    assert tool.split_id("a/b#1") == ("2025-11-25", "a/b#1")
    assert tool.canonical("2025-11-25:a/b#1") == "a/b#1"
    assert tool.written("a/b#1") == "2025-11-25:a/b#1"
    assert tool.manifest_path("2026-07-28", Path("/r")) == Path("/r/spec_notes/2026-07-28/requirements.toml")
    assert tool.manifest_path("2025-11-25", Path("/r")) == Path("/r/spec_notes/requirements.toml")


def test_a_status_set_on_a_target_reaches_what_is_same_as_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_revisions(tmp_path / "repo")
    args = ["--root", str(root)]
    assert tool.main(["set", "x/y#4", *args, "--status", "implemented", "--symbols", "mcp_ref.rules.check"]) == 0
    assert "2026-07-28:x/z#2 (same_as x/y#4): implemented" in capsys.readouterr().out
    book = tool.Manifests(root)
    assert book.by_id["2026-07-28:x/z#2"]["status"] == "implemented"
    # its own status follows the target's: changing it there is refused, detaching is not
    assert tool.main(["set", "2026-07-28:x/z#2", *args, "--status", "planned"]) == 2
    assert "set the status there, or detach it first (--same-as '' --status planned)" in capsys.readouterr().err
    assert tool.main(["set", "x/z#2", "--revision", "2026-07-28", *args, "--reviewed"]) == 0
    assert "reviewed" not in tool.Manifests(root).by_id["2026-07-28:x/z#2"]
    assert tool.main(["set", "2026-07-28:x/z#2", *args, "--same-as", "", "--status", "planned"]) == 0
    entry = tool.Manifests(root).by_id["2026-07-28:x/z#2"]
    assert entry["status"] == "planned" and "same_as" not in entry


@pytest.mark.parametrize(
    ("same_as", "why"),
    [
        ("2026-07-28:x/y#1", "is same_as 2025-11-25:x/y#2 itself; name that one"),  # no chains
        ("2025-11-25:x/y#9", "no such id"),
        ("x/y#2", "write a full id with its revision"),
        ("2026-07-28:x/z#1", "cannot be same_as itself"),
    ],
)
def test_a_same_as_names_an_entry_that_stands_for_itself(
    same_as: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_revisions(tmp_path / "repo")
    assert tool.main(["set", "2026-07-28:x/z#1", "--root", str(root), "--same-as", same_as]) == 2
    assert why in capsys.readouterr().err
    assert tool.Manifests(root).by_id["2026-07-28:x/z#1"].get("same_as") is None


def test_a_prefix_and_another_revision_contradict(tmp_path: Path) -> None:
    root = two_revisions(tmp_path / "repo")
    with pytest.raises(SystemExit, match="is not of --revision 2025-06-18"):
        tool.main(["set", "2026-07-28:x/z#1", "--revision", "2025-06-18", "--root", str(root), "--note", "n"])


def test_coverage_prints_a_table_per_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_revisions(tmp_path / "repo")
    code, out = run_tool(capsys, "coverage", "--root", str(root))
    assert code == 0
    modern, old = out.split("\n\n")
    assert modern.splitlines()[0] == "== 2026-07-28 (spec_notes/2026-07-28/requirements.toml)"
    assert modern.splitlines()[-1] == (
        "total: 1 implemented, 0 divergent, 0 not-applicable, 2 planned of 3 (2 same_as, 1 of them unreviewed)"
    )
    assert [line.split() for line in modern.splitlines()[2:-1]] == [
        ["x/y", "1", "0", "0", "0", "1", "1"],
        ["x/z", "0", "0", "0", "2", "2", "1"],
    ]
    assert old.splitlines()[0] == "== 2025-11-25 (spec_notes/requirements.toml)"
    assert old.splitlines()[-1] == "total: 3 implemented, 0 divergent, 0 not-applicable, 1 planned of 4"
    code, out = run_tool(capsys, "coverage", "--root", str(root), "--revision", "2025-11-25")
    assert out == old


def test_list_names_ids_with_their_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_revisions(tmp_path / "repo")
    code, out = run_tool(capsys, "list", "--root", str(root), "--unreviewed")
    assert out.split() == ["2026-07-28:x/z#2", "planned", "=", "2025-11-25:x/y#4"]


def test_mutate_of_a_same_as_breaks_its_targets_lines_and_runs_both_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_revisions(tmp_path / "repo")
    code, out = run_tool(capsys, "mutate", "2026-07-28:x/y#1", "--dry-run", "--root", str(root))
    assert code == 0
    assert "2026-07-28:x/y#1: mutated, 2 tests" in out
    assert out.count("mcp_ref/rules.py:describe:") == 2  # the lines citing x/y#2
    code, out = run_tool(capsys, "mutate", "--revision", "2026-07-28", "--root", str(root), "--json")
    [report] = json.loads(out)["ids"]  # the implemented ids of 2026-07-28: x/y#1 only
    assert report["id"] == "2026-07-28:x/y#1" and report["same_as"] == "x/y#2"
    assert report["tests"] == ["tests/test_rules.py::test_describe", "tests/test_modern.py::test_modern_describe"]
    # the modern test notices the mutant the old one lets through
    assert sorted(m["result"] for m in report["mutants"]) == ["killed", "killed"]
    assert code == 0


def test_show_of_a_same_as_gives_both_statements_lines_and_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = two_revisions(tmp_path / "repo")
    spec = tmp_path / "spec"
    catalogue(spec / "2025-11-25", [("x/y#2", "aaa", "Servers MUST describe numbers.")])
    catalogue(spec / "2026-07-28", [("x/y#1", "aaa", "Servers MUST describe numbers.")])
    monkeypatch.setenv("MCP_SPEC_DIR", str(spec))
    code, out = run_tool(capsys, "show", "x/y#1", "--revision", "2026-07-28", "--root", str(root))
    assert code == 0
    assert out.startswith("2026-07-28:x/y#1\n  level: MUST")
    assert "same_as: 2025-11-25:x/y#2\n" in out
    assert out.count("| Servers MUST describe numbers.") == 2
    assert "mcp_ref/rules.py:11  # [x/y#2] a negative number says so" in out
    assert "tests/test_modern.py::test_modern_describe" in out and "tests/test_rules.py::test_describe" in out
    assert tool.main(["show", "2026-07-28:x/y#2", "--root", str(root)]) == 2
    assert "(did you mean 2026-07-28:x/z#2 or 2026-07-28:x/y#1?)" in capsys.readouterr().err


COLUMNS = ("id", "file", "line", "area", "section", "keyword", "party", "text", "context", "keywords", "form")


def catalogue(folder: Path, rows: list[tuple[str, str, str]]) -> None:
    """A requirements.tsv of (id, fingerprint, text) rows."""
    folder.mkdir(parents=True)
    lines = ["\t".join((*COLUMNS, "fingerprint"))]
    for rid, fingerprint, text in rows:
        lines.append(
            "\t".join(
                (rid, "f.mdx", "1", "protocol", "(intro)", "MUST", "server", text, "", "MUST", "bold", fingerprint)
            )
        )
    (folder / "requirements.tsv").write_text("\n".join(lines) + "\n")


def test_init_inherits_identical_text_and_plans_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_repo(tmp_path / "repo")
    spec = tmp_path / "spec"
    catalogue(
        spec / "2025-11-25",
        [
            ("x/y#1", "f1", "Receivers MUST refuse negative numbers."),
            ("x/y#2", "f2", "Numbers SHOULD be described."),
            ("x/y#3", "f3", "The model MUST hold numbers."),
        ],
    )
    catalogue(
        spec / "2026-07-28",
        [
            ("x/y#1", "f2", "Numbers SHOULD be described."),  # same text, other ordinal
            ("x/y#2", "f9", "Receivers MUST refuse negative numbers at once."),  # reworded
            ("w/v#1", "f8", "Clients MAY retry with a completely different request."),  # new
        ],
    )
    monkeypatch.setenv("MCP_SPEC_DIR", str(spec))
    code, out = run_tool(capsys, "init", "--revision", "2026-07-28", "--inherit", "2025-11-25", "--root", str(root))
    assert code == 0 and "2026-07-28: 3 requirements, 3 new (1 same_as by fingerprint, 2 planned)" in out
    assert tool.load(root / "spec_notes" / "2026-07-28" / "requirements.toml") == [
        {
            "id": "x/y#1",
            "status": "implemented",
            "same_as": "2025-11-25:x/y#2",
            "reviewed": False,
            "symbols": [],
            "note": "",
        },
        {
            "id": "x/y#2",
            "status": "planned",
            "symbols": [],
            "note": "x/y: reworded from 2025-11-25:x/y#1 (implemented there)",
        },
        {"id": "w/v#1", "status": "planned", "symbols": [], "note": "w/v: new in 2026-07-28"},
    ]
    # run again, it keeps what is there
    tool.main(["set", "2026-07-28:w/v#1", "--root", str(root), "--status", "not-applicable", "--note", "a MAY"])
    assert tool.main(["init", "--revision", "2026-07-28", "--root", str(root)]) == 0
    assert tool.Manifests(root).by_id["2026-07-28:w/v#1"]["status"] == "not-applicable"


def test_own_leaves_out_what_is_same_as_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_revisions(tmp_path / "repo")
    tool.main(["set", "2026-07-28:x/z#1", "--root", str(root), "--status", "implemented", "--symbols", "m.f"])
    code, out = run_tool(capsys, "mutate", "--revision", "2026-07-28", "--dry-run", "--root", str(root))
    assert "2026-07-28:x/y#1: mutated" in out and "2026-07-28:x/z#1: uncited" in out
    code, out = run_tool(capsys, "mutate", "--revision", "2026-07-28", "--own", "--dry-run", "--root", str(root))
    assert "2026-07-28:x/y#1" not in out and "2026-07-28:x/z#1: uncited" in out
