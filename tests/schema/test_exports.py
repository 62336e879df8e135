"""mcp_ref.schema re-exports every public name of every module of the data
model, once, and every exported name resolves; each class's module lists it."""

import importlib
import inspect
import pkgutil

import attrs

import mcp_ref.schema as S

MODULES = sorted(m.name for m in pkgutil.iter_modules(S.__path__) if not m.name.startswith("_"))


def test_all_is_complete_and_without_duplicates() -> None:
    assert len(S.__all__) == len(set(S.__all__))
    for name in MODULES:
        module = importlib.import_module(f"mcp_ref.schema.{name}")
        missing = set(module.__all__) - set(S.__all__)
        assert not missing, f"mcp_ref.schema does not re-export {name}.{sorted(missing)}"


def test_every_export_resolves() -> None:
    for name in S.__all__:
        assert hasattr(S, name), name


def test_every_public_class_is_in_its_modules_all() -> None:
    for name in MODULES:
        module = importlib.import_module(f"mcp_ref.schema.{name}")
        defined_here = {
            n
            for n, obj in vars(module).items()
            if inspect.isclass(obj) and attrs.has(obj) and obj.__module__ == module.__name__ and not n.startswith("_")
        }
        assert defined_here <= set(module.__all__), (
            f"{name}: not in __all__: {sorted(defined_here - set(module.__all__))}"
        )


def test_the_package_holds_every_definition_name_of_the_latest_schema() -> None:
    from ._spec import LATEST, defs

    assert not [n for n in defs(LATEST) if n not in S.__all__]


def test_the_chapter_index_lists_what_each_module_exports() -> None:
    """The package loads a module when one of its names is read: CHAPTERS must say
    which module holds each name, exactly as the modules' own __all__ do."""
    assert sorted(S.CHAPTERS) == MODULES
    for name in MODULES:
        module = importlib.import_module(f"mcp_ref.schema.{name}")
        assert S.CHAPTERS[name] == tuple(module.__all__), name
