#!/usr/bin/env python3
"""Writes the entry-point table of ``tilejit._aclnn`` from include/aclnnop/*.h.

Every header is parsed with libclang (Debian's python3-clang-19) as C, with
TILEJIT_BINDGEN defined so that ``ACLNN_OPTIONAL`` (include/aclnn/aclnn_base.h)
becomes the annotation ``tilejit_optional`` on the parameters that may be NULL.
Each ``aclnnXxxGetWorkspaceSize`` with its phase 2 ``aclnnXxx`` becomes one row:
the Python name ``Xxx``, the phase-1 parameters in header order (names, kinds from
their C types, optional or not) without ``workspaceSize`` and ``executor``, a thunk
that calls phase 1 with the converted arguments, and phase 2. The aclFormat and
aclDataType names come from the headers too. AclnnBinding.cpp does the rest.

A function the generator cannot bind (an ``aclnn*`` function that is neither a
phase 1 with the two trailing out-parameters nor the phase 2 of one, or a
parameter of a type it does not know) stops the build: the binding cannot
silently drift from the headers.

    gen_aclnn_bindings.py --include-dir include --output AclnnEntryPoints.cpp
"""
import argparse
import glob
import os
import sys

import clang.cindex as ci

K = ci.TypeKind

# Kinds of the pointee struct of a pointer parameter.
STRUCT_KINDS = {
    "aclTensor": ("tensor", "Tensor", "tensor"),
    "aclTensorList": ("tensor_list", "TensorList", "tensorList"),
    "aclIntArray": ("int_array", "IntArray", "intArray"),
    "aclFloatArray": ("float_array", "FloatArray", "floatArray"),
    "aclBoolArray": ("bool_array", "BoolArray", "boolArray"),
}
INT_KINDS = {K.CHAR_S, K.SCHAR, K.UCHAR, K.SHORT, K.USHORT, K.INT, K.UINT, K.LONG,
             K.ULONG, K.LONGLONG, K.ULONGLONG, K.ENUM}
FLOAT_KINDS = {K.FLOAT, K.DOUBLE}
OPTIONAL_ANNOTATION = "tilejit_optional"
PHASE1_SUFFIX = "GetWorkspaceSize"


class BindError(Exception):
    """A declaration the binding cannot represent."""


def load_libclang():
    """libclang: python3-clang's default, else the LLVM 19 library by path."""
    try:
        ci.Index.create()
        return
    except ci.LibclangError:
        pass
    candidates = ["/usr/lib/llvm-19/lib/libclang.so.1", "/usr/lib/llvm-19/lib/libclang.so"]
    candidates += sorted(glob.glob("/usr/lib/*/libclang-19.so*"))
    for path in candidates:
        if os.path.exists(path):
            ci.Config.set_library_file(path)
            ci.Index.create()
            return
    raise BindError("libclang not found (install python3-clang-19 / libclang1-19)")


def parse(header, include_dir):
    """The translation unit of one header, parsed as C99 with TILEJIT_BINDGEN."""
    index = ci.Index.create()
    tu = index.parse(header, args=["-x", "c", "-std=c99", "-I" + include_dir,
                                   "-DTILEJIT_BINDGEN"])
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise BindError("%s does not parse:\n  %s" % (header, "\n  ".join(errors)))
    return tu


def unqualified(spelling):
    return " ".join(w for w in spelling.split() if w not in ("const", "volatile"))


def param_kind(where, arg):
    """(kind string, Kind enumerator, C++ argument expression template) of one
    parameter; the template has {i} for the slot index."""
    t = arg.type.get_canonical()
    if t.kind == K.POINTER:
        pointee = t.get_pointee()
        if pointee.kind == K.RECORD:
            name = pointee.get_declaration().spelling
            if name in STRUCT_KINDS:
                kind, enum, member = STRUCT_KINDS[name]
                return kind, enum, "s[{i}]." + member
        elif pointee.kind in (K.CHAR_S, K.CHAR_U):
            return "str", "Str", "s[{i}].str"
    elif t.kind == K.BOOL:
        return "bool", "Bool", "s[{i}].b"
    elif t.kind in INT_KINDS:
        return "int", "Int", "static_cast<%s>(s[{i}].i)" % unqualified(arg.type.spelling)
    elif t.kind in FLOAT_KINDS:
        return "float", "Float", "static_cast<%s>(s[{i}].f)" % unqualified(arg.type.spelling)
    raise BindError("%s: parameter '%s' has a type the binding does not know: %s"
                    % (where, arg.spelling, arg.type.spelling))


def is_optional(arg):
    return any(c.kind == ci.CursorKind.ANNOTATE_ATTR and c.spelling == OPTIONAL_ANNOTATION
               for c in arg.get_children())


def canonical(arg):
    """The canonical type without top-level qualifiers ("void *const" is "void *")."""
    spelling = arg.type.get_canonical().spelling.replace("struct ", "")
    while spelling.endswith("const"):
        spelling = spelling[: -len("const")].rstrip()
    if spelling.startswith("const ") and "*" not in spelling:
        spelling = spelling[len("const "):]
    return spelling


def check_phase1_tail(fn, args):
    where = fn.spelling
    if len(args) < 2:
        raise BindError("%s: phase 1 must end with workspaceSize and executor" % where)
    ws, ex = args[-2], args[-1]
    if canonical(ws) not in ("unsigned long *", "unsigned long long *") or \
            canonical(ex) != "aclOpExecutor **":
        raise BindError("%s: phase 1 must end with (uint64_t *workspaceSize, "
                        "aclOpExecutor **executor), got (%s, %s)"
                        % (where, ws.type.spelling, ex.type.spelling))


def check_phase2(fn):
    args = list(fn.get_arguments())
    got = [canonical(a) for a in args]
    want = [("void *",), ("unsigned long", "unsigned long long"), ("aclOpExecutor *",),
            ("void *",)]
    if len(got) != 4 or any(g not in w for g, w in zip(got, want)):
        raise BindError("%s: phase 2 must be (void *workspace, uint64_t workspaceSize, "
                        "aclOpExecutor *executor, aclrtStream stream), got (%s)"
                        % (fn.spelling, ", ".join(a.type.spelling for a in args)))


def collect(include_dir):
    """The entry points of include_dir/aclnnop/*.h and the two enums."""
    headers = sorted(glob.glob(os.path.join(include_dir, "aclnnop", "*.h")))
    if not headers:
        raise BindError("no headers in %s" % os.path.join(include_dir, "aclnnop"))
    entries, enums = [], {}
    for header in headers:
        tu = parse(header, include_dir)
        functions = {}
        for c in tu.cursor.get_children():
            if c.kind == ci.CursorKind.ENUM_DECL and c.spelling in ("aclFormat", "aclDataType"):
                enums[c.spelling] = [(e.spelling, e.enum_value) for e in c.get_children()
                                     if e.kind == ci.CursorKind.ENUM_CONSTANT_DECL]
            if c.kind != ci.CursorKind.FUNCTION_DECL or not c.spelling.startswith("aclnn"):
                continue
            if c.location.file is None or \
                    os.path.realpath(c.location.file.name) != os.path.realpath(header):
                continue
            functions[c.spelling] = c
        rel = "aclnnop/" + os.path.basename(header)
        used = set()
        for name, fn in functions.items():
            if not name.endswith(PHASE1_SUFFIX):
                continue
            phase2 = name[: -len(PHASE1_SUFFIX)]
            if phase2 not in functions:
                raise BindError("%s: %s has no phase 2 %s" % (rel, name, phase2))
            check_phase2(functions[phase2])
            args = list(fn.get_arguments())
            check_phase1_tail(fn, args)
            params = []
            for a in args[:-2]:
                kind, enum, expr = param_kind(name, a)
                optional = is_optional(a)
                if optional and kind not in ("tensor", "tensor_list", "int_array",
                                             "float_array", "bool_array", "str"):
                    raise BindError("%s: ACLNN_OPTIONAL on '%s', which is not a pointer"
                                    % (name, a.spelling))
                params.append((a.spelling, kind, enum, expr, optional))
            entries.append({"name": phase2[len("aclnn"):], "phase1": name, "phase2": phase2,
                            "header": rel, "params": params})
            used.update((name, phase2))
        for name in sorted(set(functions) - used):
            raise BindError("%s: %s is neither a phase 1 (...%s) nor the phase 2 of one; "
                            "the binding cannot call it" % (rel, name, PHASE1_SUFFIX))
    for e in ("aclFormat", "aclDataType"):
        if e not in enums:
            raise BindError("the headers declare no %s" % e)
    return entries, enums


def enum_rows(values, prefixes):
    rows = []
    for spelling, _ in values:
        short = spelling
        for p in prefixes:
            if short.startswith(p):
                short = short[len(p):]
                break
        rows.append('    {"%s", %s},' % (short, spelling))
    return rows


def emit(entries, enums):
    out = ["// Generated by python/aclnn/gen_aclnn_bindings.py from include/aclnnop/*.h",
           "// with libclang: do not edit. One row per aclnn entry point; the generic half",
           "// is AclnnBinding.cpp.",
           '#include "AclnnBinding.h"', "", "#include <iterator>", ""]
    for h in sorted({e["header"] for e in entries}):
        out.append('#include "%s"' % h)
    out += ["", "using namespace tilejit::pyaclnn;", "", "namespace {", ""]
    for e in entries:
        n = e["name"]
        out.append("// %s (%s)" % (e["phase1"], e["header"]))
        out.append("const Param k%sParams[] = {" % n)
        for pname, _, enum, _, optional in e["params"]:
            out.append('    {"%s", Kind::%s, %s},' % (pname, enum,
                                                      "true" if optional else "false"))
        if not e["params"]:
            out.append('    {"", Kind::Int, false},')
        out.append("};")
        out.append("aclnnStatus call%s(const Slot *s, uint64_t *workspaceSize," % n)
        out.append("    aclOpExecutor **executor) {")
        exprs = [expr.format(i=i) for i, (_, _, _, expr, _) in enumerate(e["params"])]
        out.append("  return %s(" % e["phase1"])
        for x in exprs:
            out.append("      %s," % x)
        out.append("      workspaceSize, executor);")
        out.append("}")
        out.append("")
    out.append("const EntryPoint kEntryPoints[] = {")
    for e in entries:
        n = e["name"]
        out.append('    {"%s", "%s", "%s", k%sParams, %d, call%s, %s},'
                   % (n, e["phase1"], e["header"], n, len(e["params"]), n, e["phase2"]))
    out.append("};")
    out.append("")
    out.append("const EnumName kFormats[] = {")
    out += enum_rows(enums["aclFormat"], ["ACL_FORMAT_", "ACL_"])
    out.append("};")
    out.append("const EnumName kDataTypes[] = {")
    out += enum_rows(enums["aclDataType"], ["ACL_"])
    out.append("};")
    out += ["", "} // namespace", ""]
    out.append("PYBIND11_MODULE(_aclnn, m) {")
    out.append("  static const Tables tables{kEntryPoints, std::size(kEntryPoints), kFormats,")
    out.append("                             std::size(kFormats), kDataTypes,")
    out.append("                             std::size(kDataTypes)};")
    out.append("  defineModule(m, tables);")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include-dir", required=True, help="the directory holding aclnnop/")
    ap.add_argument("--output", required=True, help="the C++ file to write")
    opts = ap.parse_args(argv)
    try:
        load_libclang()
        entries, enums = collect(opts.include_dir)
    except BindError as e:
        print("gen_aclnn_bindings.py: error: %s" % e, file=sys.stderr)
        return 1
    with open(opts.output, "w") as f:
        f.write(emit(entries, enums))
    return 0


if __name__ == "__main__":
    sys.exit(main())
