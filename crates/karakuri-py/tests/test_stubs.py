"""The type stubs (karakuri/__init__.pyi) declare exactly what the module exports, and every
exported function and class has a docstring."""

import ast
import inspect
from pathlib import Path

import karakuri

STUB = Path(karakuri.__file__).with_name("__init__.pyi")
STUB_ONLY = {"Vector", "Matrix", "ArrayLike", "JointRef", "FrameRef"}  # typing aliases


def stub_names():
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names, tree


def test_stubs_ship_with_py_typed():
    assert STUB.exists() and STUB.with_name("py.typed").exists()


def test_stubs_match_the_module():
    names, _ = stub_names()
    # submodules (karakuri.gym, once imported) are Python with their own annotations
    exported = {n for n in dir(karakuri) if not n.startswith("_") and not inspect.ismodule(getattr(karakuri, n))}
    exported |= {"__version__"}
    assert exported == names - STUB_ONLY


def test_class_members_are_stubbed():
    _, tree = stub_names()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in ("Model", "Data", "ConstraintSet", "World", "ControlIo", "Batch", "Snapshot"):
            stubbed = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            cls = getattr(karakuri, node.name)
            public = {n for n in dir(cls) if not n.startswith("_")}
            assert public <= stubbed, (node.name, public - stubbed)


def test_everything_has_a_docstring():
    for name in dir(karakuri):
        obj = getattr(karakuri, name)
        if name.startswith("_") or not (inspect.isclass(obj) or callable(obj)):
            continue
        assert obj.__doc__ and obj.__doc__.strip(), name
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in dir(obj):
                if not member.startswith("_"):
                    doc = getattr(obj, member).__doc__
                    assert doc and doc.strip(), f"{name}.{member}"
