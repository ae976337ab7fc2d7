"""The hostile-upstream check (HOSTILE-POLLUTION): did the classes and modules the adapter can
reach gain, lose or rebind an attribute while a stream was fed and finished?

A compromised gateway or a malicious server can send "__proto__", "constructor",
"__class__" or "__init__" where a tool-call index, an id, a tool name or a JSON key belongs.
Python's dicts take any key, so the JavaScript prototype attack has no twin here; what can
go wrong is code that turns a wire name into an attribute: `setattr(model_cls, key, value)`,
`setattr(module, name, ...)`, `cls.__dict__`-driven merges. `PollutionWatch` snapshots, at
its first use, the attribute dicts (`vars()`: each name and each value, by identity) of every
module in `sys.modules` outside the standard library, of `builtins`, of `json` and its
submodules, and of every class defined in those modules, plus each module's type and each
class's `__bases__` and metaclass. `check()` lists what differs since the last check and
takes the new state as the baseline: the process is the SDK's and nothing is restored, so
one change is reported once, at the stream whose turn ended first after it.

What is not pollution: a module imported during a stream (an SDK importing lazily) joins the
baseline; a package gaining its newly imported submodule as an attribute is that import;
pydantic's lazily built validators (`__pydantic_*__`) and `abc`'s caches are the libraries'
own bookkeeping. It is a tripwire, not a sandbox: code that wants to hide from it can.
"""

from __future__ import annotations

import builtins
import sys
import time
import types
from operator import is_

__all__ = ["PollutionWatch", "default_watch"]

# The standard library modules that are watched all the same: what an SDK's JSON handling
# reaches (a replaced `json.loads` is what a hostile stream would go for).
_STDLIB_WATCHED = ("builtins", "json")
_IGNORED_PREFIXES = ("__pydantic_", "_abc_")
# Set on first use by pydantic and inspect: a cache, not a change.
_IGNORED = frozenset({"__signature__"})
_MISSING = object()


def _watched_module(name: str) -> bool:
    top = name.partition(".")[0]
    if top == "__main__" or top.startswith("_pytest") or top == "pytest":
        return False  # the adapter's own script, and the test runner
    return top in _STDLIB_WATCHED or top not in sys.stdlib_module_names


class _Target:
    __slots__ = ("name", "obj", "kind", "keys", "values", "meta", "bases")

    def __init__(self, name: str, obj: object, kind: str):
        self.name = name
        self.obj = obj
        self.kind = kind  # "module", "class" or "object"
        self.take()

    def take(self) -> None:
        d = vars(self.obj)
        self.keys = list(d)
        self.values = list(d.values())
        self.meta = type(self.obj)
        self.bases = getattr(self.obj, "__bases__", None) if self.kind == "class" else None

    def label(self, attr: str) -> str:
        return f"module {self.name}.{attr}" if self.kind == "module" else f"{self.name}.{attr}"

    def compare(self, found: list[str]) -> bool:
        """Appends what changed; whether anything did. The fast path is two C-level passes."""
        obj = self.obj
        d = vars(obj)
        changed = False
        if type(obj) is not self.meta:
            found.append(f"{self.name} __class__")
            changed = True
        if self.kind == "class" and obj.__bases__ is not self.bases:
            found.append(f"{self.name} __bases__")
            changed = True
        if len(d) == len(self.keys) and all(map(is_, d.values(), self.values)) and list(d) == self.keys:
            return changed
        before = dict(zip(self.keys, self.values))
        for key, value in d.items():
            if before.pop(key, _MISSING) is not value and not self._ignored(key, value):
                found.append(self.label(key))
                changed = True
        for key in before:  # removed
            if not self._ignored(key, _MISSING):
                found.append(self.label(key))
                changed = True
        self.take()
        return changed

    def _ignored(self, key: str, value: object) -> bool:
        if isinstance(key, str) and (key in _IGNORED or key.startswith(_IGNORED_PREFIXES)):
            return True
        # A package gains each submodule as it is imported.
        return (
            self.kind == "module"
            and issubclass(type(value), types.ModuleType)
            and sys.modules.get(f"{self.name}.{key}") is value
        )


class PollutionWatch:
    """Snapshots the modules and classes an adapter can reach (and `extra`: `{name: object}`)
    now; `check()` lists every attribute gained, lost or rebound since, by name
    (`"module json.loads"`, `"openai.types.chat.ChatCompletionChunk.polluted"`), and takes the
    new state as the baseline.

    A check is a fingerprint, not a full comparison, unless `sample=None`: every watched
    object's attribute count and type are compared (an attribute gained or lost is found at
    once), and the names and values by identity of `builtins`, `json`, the `extra` objects
    and a rotating `sample` of the others (a rebound attribute of those is found within
    `len(watched) / sample` checks). With openai and anthropic imported (about 9,500 modules
    and classes, 160,000 attributes) a full comparison costs about 15 ms of CPU a stream,
    the fingerprint about 1 to 2 ms."""

    def __init__(self, extra: dict | None = None, sample: int | None = 256):
        self._targets: list[_Target] = []
        self._objs: list[object] = []
        self._lens: list[int] = []
        self._types: list[type] = []
        self._hot: list[int] = []  # always compared in full
        self._modules: dict[str, object] = {}
        self._seen: set[int] = set()
        self._module_count = -1
        self._sample = sample
        self._cursor = 0
        self.cpu_ns = 0  # CPU time spent checking: `serve` leaves it out of `elapsed_ns`
        for name, obj in (extra or {}).items():
            kind = "module" if issubclass(type(obj), types.ModuleType) else "class" if issubclass(type(obj), type) else "object"
            self._add(str(name), obj, kind, hot=True)
        self._scan()

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._targets]

    def _add(self, name: str, obj: object, kind: str, hot: bool = False) -> None:
        if id(obj) in self._seen:
            return
        try:
            vars(obj)
        except TypeError:
            raise TypeError(f"watch: {name!r} has no attributes to watch") from None
        self._seen.add(id(obj))
        if hot:
            self._hot.append(len(self._targets))
        target = _Target(name, obj, kind)
        self._targets.append(target)
        self._objs.append(obj)
        self._lens.append(len(target.keys))
        self._types.append(target.meta)

    def _scan(self) -> None:
        """Adds the modules imported since the last scan, and their classes."""
        if len(sys.modules) == self._module_count:
            return
        for name, mod in list(sys.modules.items()):
            # `type(x)`, never `isinstance(x, ...)`: a lazy proxy (openai's) answers `__class__`
            # by importing what it stands for, which would change what was just snapshotted.
            if name in self._modules or not issubclass(type(mod), types.ModuleType) or not _watched_module(name):
                continue
            self._modules[name] = mod
            hot = name.partition(".")[0] in _STDLIB_WATCHED
            try:
                self._add(name, mod, "module", hot)
            except TypeError:
                continue
            for value in list(vars(mod).values()):
                if issubclass(type(value), type) and vars(value).get("__module__") == name:
                    self._add(f"{name}.{value.__qualname__}", value, "class", hot)
        self._module_count = len(sys.modules)

    def check(self, stream_text: str | None = None) -> list[str]:
        """What changed since the last check. With `stream_text` (the case as sent), only the
        attributes whose name the stream wrote, and any class or bases swapped: a Python
        runtime changes by itself too (a module's `__getattr__` caching what it imported
        lazily, `__warningregistry__`), and a stream can only pollute it through a name it
        carries (`setattr(obj, key, ...)` with a key from the wire)."""
        started = time.process_time_ns()
        found: list[str] = []
        targets = self._targets
        n = len(targets)
        if self._sample is None or self._sample >= n:
            todo = range(n)
        else:
            lens = list(map(len, map(vars, self._objs)))
            kinds = list(map(type, self._objs))
            todo = set(self._hot)
            if lens != self._lens or kinds != self._types:
                todo.update(i for i in range(n) if lens[i] != self._lens[i] or kinds[i] is not self._types[i])
            end = self._cursor + self._sample
            todo.update(range(self._cursor, min(end, n)))
            todo.update(range(0, max(0, end - n)))
            self._cursor = end % n
            todo = sorted(todo)
        for i in todo:
            target = targets[i]
            if target.compare(found):
                self._lens[i] = len(target.keys)
                self._types[i] = target.meta
        self._scan()  # lazily imported modules join the baseline, after the comparison
        if stream_text is not None:
            found = [f for f in found if _swapped(f) or (_kept(f) and f.rsplit(".", 1)[-1] in stream_text)]
        self.cpu_ns += time.process_time_ns() - started
        return found


def _swapped(found: str) -> bool:
    """A class or bases swapped (`NAME __class__`, `NAME __bases__`): reported whatever the
    stream wrote."""
    return found.endswith((" __class__", " __bases__"))


def _kept(found: str) -> bool:
    """A class's attribute, or one of `builtins` or `json`: an SDK's own modules rebind their
    globals as they run (litellm sets `litellm.completion` on first use), which no stream
    writes; a class a stream's key reached, or a built-in, is what a hostile stream pollutes."""
    if not found.startswith("module "):
        return True
    return found[len("module ") :].split(".", 1)[0] in ("builtins", "json")


_shared: PollutionWatch | None = None


def default_watch() -> PollutionWatch:
    """The watch `run_case` uses when given none: made (snapshotted) at its first use."""
    global _shared
    if _shared is None:
        _shared = PollutionWatch()
    return _shared
