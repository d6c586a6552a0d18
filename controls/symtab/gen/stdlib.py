# Lists Python's standard library for miam's symboles control: one line per
# module, "module<TAB>public names", builtins first. Run by gen/main.go.
import importlib, io, pkgutil, sys, types, warnings, contextlib

SKIP = {"antigravity", "this", "idlelib", "test", "lib2to3", "tkinter", "turtle",
        "turtledemo", "ensurepip", "pydoc_data", "distutils", "__main__", "__phello__",
        "msilib", "winreg", "winsound", "_msi", "nturl2path", "xxsubtype", "xxlimited"}
warnings.simplefilter("ignore")
out = {}

def public(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_"))

def visit(name, depth):
    if name in out or name.split(".")[0] in SKIP:
        return
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            mod = importlib.import_module(name)
    except BaseException:
        return
    names = set(public(mod))
    subs = []
    if hasattr(mod, "__path__") and depth < 3:
        for info in pkgutil.iter_modules(mod.__path__):
            if not info.name.startswith("_") and info.name not in ("test", "tests", "idle_test"):
                names.add(info.name)
                subs.append(name + "." + info.name)
    out[name] = sorted(names)
    for n in dir(mod) if depth == 1 else ():
        v = getattr(mod, n, None)
        # os.path and the like: a module bound as an attribute.
        if not n.startswith("_") and n not in sys.stdlib_module_names and isinstance(v, types.ModuleType) and v.__name__.split(".")[0] in sys.stdlib_module_names:
            alias = name + "." + n
            if alias not in out:
                out[alias] = public(v)
    for s in subs:
        visit(s, depth + 1)

import builtins
print("builtins\t" + " ".join(public(builtins)))
for top in sorted(sys.stdlib_module_names):
    if not top.startswith("_"):
        visit(top, 1)
for name in sorted(out):
    print(name + "\t" + " ".join(out[name]))
