"""The Python face of include/tilejit/tilejit.h: compile, emit, jit, the cache.

`Kernel` is the extension's own type: a launch (`kernel(*args)`) goes from Python straight
to C++, which reads each NumPy array through the buffer protocol and each PyTorch tensor
through DLPack, in place.
"""
import os
import threading

from tilejit import _tilejit as _C

Error = _C.Error
CompileError = _C.CompileError
ArgumentTypeError = _C.ArgumentTypeError
ArgumentValueError = _C.ArgumentValueError
Kernel = _C.Kernel
Source = _C.Source

__all__ = [
    "Error", "CompileError", "ArgumentTypeError", "ArgumentValueError", "Kernel", "Source",
    "compile", "emit", "declaration", "jit", "cache_stats", "clear_memory_cache", "version",
    "dtype_name",
]

# The DSL's element types by the names NumPy and PyTorch give them.
_DTYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int8": "i8", "uint8": "u8",
    "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32", "int64": "i64",
    "bool": "i1", "float": "f32", "half": "f16", "long": "i64", "int": "i32", "short": "i16",
}
_DSL_NAMES = {"f32", "f16", "bf16", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "i1"}


def dtype_name(dtype):
    """The DSL name ("f16", "bf16", ...) of a NumPy or PyTorch dtype, a NumPy scalar type
    (np.float16), or a DSL or NumPy/PyTorch dtype name given as a string."""
    if isinstance(dtype, str):
        name = dtype[6:] if dtype.startswith("torch.") else dtype
        if name in _DSL_NAMES:
            return name
        if name in _DTYPES:
            return _DTYPES[name]
        raise ArgumentTypeError(f"'{dtype}' names no element type tilejit knows "
                                f"({', '.join(sorted(_DSL_NAMES))})")
    module = type(dtype).__module__
    if module == "torch":  # a torch.dtype: str() is "torch.float16"
        return dtype_name(str(dtype))
    try:
        import numpy as np
        return dtype_name(np.dtype(dtype).name)
    except (TypeError, ImportError):
        pass
    raise ArgumentTypeError(f"{dtype!r} is not a dtype (a NumPy or PyTorch dtype, or a name "
                            "such as 'f16', is expected)")


def _spec_value(name, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    try:
        return dtype_name(value)
    except ArgumentTypeError:
        raise ArgumentTypeError(
            f"compile-time parameter {name}={value!r}: a dtype, an int, a bool or a string "
            "is expected") from None


def _spec(params):
    return [(k, _spec_value(k, v)) for k, v in params.items()]


_sources = {}
_sources_lock = threading.Lock()


def _source(source):
    """A Source from a Source, a path (os.PathLike, or a str naming an existing file or
    ending in .tile) or kernel text."""
    if isinstance(source, Source):
        return source
    if isinstance(source, os.PathLike):
        return Source.from_file(os.fspath(source))
    if not isinstance(source, str):
        raise ArgumentTypeError(f"source: kernel text or a path is expected; given "
                                f"{type(source).__name__}")
    if "\n" not in source and (source.endswith(".tile") or os.path.isfile(source)):
        return Source.from_file(source)
    with _sources_lock:
        src = _sources.get(source)
        if src is None:
            if len(_sources) > 256:
                _sources.clear()
            src = _sources[source] = Source.from_text("<source>", source)
    return src


def compile(source, kernel, **params):
    """Compiles kernel `kernel` of `source` (text, a Source or a path to a .tile file) for
    the compile-time parameters `params` (T=np.float16 or T="f16", BN=64, CAUSAL=True), or
    serves it from the in-memory or disk cache. Returns a Kernel: call it with the
    arguments in declaration order."""
    return _C.compile(_source(source), kernel, _spec(params))


def specialize(source, kernel, **params):
    """The specialisation `params` bound to kernel `kernel`'s declaration, as `compile`
    binds it: a dict of every compile-time parameter (defaults applied) to its typed value
    (a dtype's or enumerator's name, an int, a bool), sorted by name. A wrong value raises
    CompileError naming the parameter and the rule."""
    return _C.specialize(_source(source), kernel, _spec(params))


def emit(source, kernel, stage="tile-opt", **params):
    """The text of one stage of the pipeline for this specialisation: "ast", "tile",
    "tile-opt", "llvm", "llvm-opt" or "asm"."""
    return _C.emit(_source(source), kernel, _spec(params), stage)


def declaration(source, kernel):
    """Kernel `kernel`'s declaration: {"kernel", "compile_params": [{"name", "kind",
    "choices", "default"}], "params": [{"name", "tensor", "type", "dims",
    "conditional"}]}."""
    return _C.declaration(_source(source), kernel)


def cache_stats():
    """The kernel cache's counters: entries, memory_hits, disk_hits, compiles."""
    return _C.cache_stats()


def clear_memory_cache():
    """Drops every in-memory cache entry (kernels still referenced stay alive)."""
    _C.clear_memory_cache()


def version():
    """The tilejit release, e.g. "0.1.0"."""
    return _C.version()


def _arg_dtype(arg):
    dtype = getattr(arg, "dtype", None)
    if dtype is None:
        return None
    try:
        return dtype_name(dtype)
    except ArgumentTypeError:
        return None


class JITFunction:
    """A kernel whose source a Python function returns, specialised on first call from its
    arguments' element types plus keyword parameters (see `jit`)."""

    def __init__(self, fn, kernel=None):
        self.fn = fn
        self.kernel_name = kernel or fn.__name__
        self.__name__ = getattr(fn, "__name__", self.kernel_name)
        self.__doc__ = getattr(fn, "__doc__", None)
        self._lock = threading.Lock()
        self._src = None
        self._decl = None
        self._kernels = {}

    @property
    def source(self):
        """The Source the decorated function returned (read once)."""
        if self._src is None:
            with self._lock:
                if self._src is None:
                    text = self.fn()
                    if not isinstance(text, str):
                        raise ArgumentTypeError(
                            f"@tilejit.jit function {self.__name__} must return the kernel's "
                            f"source text; it returned {type(text).__name__}")
                    self._decl = _C.declaration(_source(text), self.kernel_name)
                    self._src = _source(text)
        return self._src

    def _infer(self, args, params):
        """The specialisation: `params`, plus each dtype parameter a tensor argument's
        element type names."""
        self.source  # noqa: B018  (reads the declaration)
        decl = self._decl
        dtype_params = {c["name"] for c in decl["compile_params"] if c["kind"] == "dtype"}
        decl_params = decl["params"]
        if len(args) != len(decl_params):
            fixed = [p for p in decl_params if not p["conditional"]]
            if len(args) == len(fixed):
                decl_params = fixed
        spec = dict(params)
        inferred = {}
        for p, a in zip(decl_params, args):
            if not p["tensor"] or p["type"] not in dtype_params:
                continue
            dt = _arg_dtype(a)
            if dt is None:
                continue
            seen = inferred.get(p["type"])
            if seen is not None and seen[0] != dt:
                raise ArgumentTypeError(
                    f"kernel {self.kernel_name}: '{seen[1]}' is {seen[0]} and '{p['name']}' is "
                    f"{dt}, but both are declared gm<{p['type']}>")
            inferred[p["type"]] = (dt, p["name"])
        for name, (dt, pname) in inferred.items():
            if name in spec:
                given = _spec_value(name, spec[name])
                if given != dt:
                    raise ArgumentTypeError(
                        f"kernel {self.kernel_name}: {name}={given} was given, but "
                        f"'{pname}' is {dt}")
            else:
                spec[name] = dt
        return spec

    def specialize(self, *args, **params):
        """The Kernel these arguments and parameters select (compiled or cached)."""
        key = (tuple(_arg_dtype(a) for a in args), tuple(sorted(
            (k, _spec_value(k, v)) for k, v in params.items())))
        k = self._kernels.get(key)
        if k is None:
            k = compile(self.source, self.kernel_name, **self._infer(args, params))
            with self._lock:
                self._kernels[key] = k
        return k

    def __call__(self, *args, threads=0, **params):
        """Launches the kernel on `args` (declaration order), compiled for their element
        types and `params`."""
        return self.specialize(*args, **params)(*args, threads=threads)

    def emit(self, stage="tile-opt", *args, **params):
        """One stage's text for the specialisation these arguments and parameters select."""
        return emit(self.source, self.kernel_name, stage, **self._infer(args, params))

    def __repr__(self):
        return f"<tilejit.jit {self.kernel_name}: {len(self._kernels)} specialisations>"


def jit(fn=None, *, kernel=None):
    """Decorates a function that returns tile-DSL source (like triton.jit): calling the
    result launches kernel `kernel` (default: the function's name), specialised on first
    call from its tensor arguments' element types plus keyword parameters and cached.

        @tilejit.jit
        def scale():
            return '''kernel scale<T: f32|f16, BN: i64 = 64>(...) ...'''
        scale(x, y, 2.0, BN=128)
    """
    if fn is None:
        return lambda f: JITFunction(f, kernel)
    return JITFunction(fn, kernel)
