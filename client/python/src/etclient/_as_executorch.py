"""Zero-change mode: `import executorch.runtime` and `from executorch.extension.pybindings
import portable_lib` resolve to etclient's modules (etclient.runtime, etclient.portable_lib),
so code written against ExecuTorch's Python APIs runs on et-serverd unmodified. Every
other executorch module stays ExecuTorch's own when it is installed; when it is not, the
parent packages (executorch, executorch.extension, executorch.extension.pybindings) are
empty stand-ins, so neither torch nor ExecuTorch is needed.

Turned on by `python -m etclient run-as-executorch script.py` (or `-m module`), by
ETCLIENT_AS_EXECUTORCH=1 in the environment (a .pth file the package installs checks it
when Python starts, so child processes follow), or by calling install()."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Optional

ENV = "ETCLIENT_AS_EXECUTORCH"
ALIASES = {
    "executorch.runtime": "etclient.runtime",
    "executorch.extension.pybindings.portable_lib": "etclient.portable_lib",
    # The module portable_lib re-exports from, as some code imports it.
    "executorch.extension.pybindings._portable_lib": "etclient.portable_lib",
}
PARENTS = ("executorch", "executorch.extension", "executorch.extension.pybindings")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the aliased modules (first on sys.meta_path) and, where ExecuTorch is not
    installed, stand-ins for their parent packages."""

    def find_spec(self, fullname: str, path=None, target=None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname in ALIASES:
            return importlib.util.spec_from_loader(fullname, self)
        if fullname in PARENTS and self._real(fullname, path) is None:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    @staticmethod
    def _real(fullname: str, path) -> Optional[importlib.machinery.ModuleSpec]:
        for finder in sys.meta_path:
            if isinstance(finder, _Finder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path)
            if spec is not None:
                return spec
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        target = ALIASES.get(spec.name)
        if target is None:  # a stand-in parent package
            module.__path__ = []
            module.__doc__ = f"A stand-in for ExecuTorch's {spec.name} (etclient's zero-change mode)."
            return module
        source = importlib.import_module(target)
        module.__dict__.update({k: v for k, v in vars(source).items()
                                if not (k.startswith("__") and k.endswith("__"))})
        module.__doc__ = source.__doc__
        module.__all__ = list(getattr(source, "__all__", []))
        module.__etclient__ = target  # where the names come from
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install() -> None:
    """Turns the zero-change mode on in this process (idempotent). Modules imported
    already (an executorch.runtime imported before) are replaced in sys.modules."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name in ALIASES:
        module = sys.modules.get(name)
        if module is not None and not hasattr(module, "__etclient__"):
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], child, None) is module:
                delattr(sys.modules[parent], child)  # `from parent import child` finds ours


def active() -> bool:
    return any(isinstance(f, _Finder) for f in sys.meta_path)
