//===- Module.cpp - tilejit._tilejit: the C++ API for Python --------------===//
///
/// \file
/// The extension behind `import tilejit` (python/tilejit/__init__.py wraps
/// it): sources, compile, emit, declarations, cache counters, and kernels
/// launched on NumPy arrays (the buffer protocol), PyTorch CPU tensors (their
/// own accessors, TorchTensor.h) and other DLPack producers in place, without
/// a copy. It mirrors include/tilejit/tilejit.h:
/// every error the C++ API returns as a value is raised here as the
/// exception of its kind (tilejit::ErrorKind): CompileError, a TypeError, a
/// ValueError, or tilejit.Error. The GIL is released while a kernel compiles
/// or runs.
///
/// A launch builds the argument pack straight from the Python objects: a
/// buffer's byte strides become element strides, a DLPack tensor's shape
/// and strides are read from its capsule, a PyTorch tensor's from its
/// attributes; each object is kept alive (its
/// buffer view or capsule held) until the kernel returns.
///
//===----------------------------------------------------------------------===//
#include "tilejit/tilejit.h"

#include "TorchTensor.h"

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using tilejit::ElemType;
/// A specialisation as Python passes it: (name, text) pairs, which the
/// compiler parses by each parameter's declared kind.
using TextSpec = std::vector<std::pair<std::string, std::string>>;

namespace {

//===----------------------------------------------------------------------===//
// Exceptions
//===----------------------------------------------------------------------===//

/// The exception classes (module attributes; created once at import).
struct Exceptions {
  PyObject *error = nullptr;        ///< tilejit.Error(Exception)
  PyObject *compileError = nullptr; ///< tilejit.CompileError(Error)
  PyObject *typeError = nullptr;    ///< tilejit.ArgumentTypeError(Error, TypeError)
  PyObject *valueError = nullptr;   ///< tilejit.ArgumentValueError(Error, ValueError)
};
Exceptions exc;

[[noreturn]] void raise(PyObject *type, const std::string &message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

/// Raises the exception of `kind` with `message`. A CompileError also gets
/// `filename`, `line` and `column` from the first "file:line:col:" of the
/// diagnostic, when it has one.
[[noreturn]] void raiseKind(tilejit::ErrorKind kind, const std::string &message) {
  switch (kind) {
  case tilejit::ErrorKind::Type: raise(exc.typeError, message);
  case tilejit::ErrorKind::Value: raise(exc.valueError, message);
  case tilejit::ErrorKind::Compile: {
    py::object e = py::reinterpret_steal<py::object>(
        PyObject_CallFunction(exc.compileError, "s", message.c_str()));
    if (!e)
      throw py::error_already_set();
    py::object file = py::none(), line = py::none(), col = py::none();
    // "name:12:5: error: ..." (the name may itself hold colons).
    size_t end = message.find(": error");
    std::string head = message.substr(0, end == std::string::npos ? 0 : end);
    size_t c2 = head.rfind(':');
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : head.rfind(':', c2 - 1);
    if (c1 != std::string::npos) {
      std::string l = head.substr(c1 + 1, c2 - c1 - 1), c = head.substr(c2 + 1);
      auto digits = [](const std::string &s) {
        return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      };
      if (digits(l) && digits(c)) {
        file = py::str(head.substr(0, c1));
        line = py::int_(std::stol(l));
        col = py::int_(std::stol(c));
      }
    }
    e.attr("diagnostic") = py::str(message);
    e.attr("filename") = file;
    e.attr("line") = line;
    e.attr("column") = col;
    PyErr_SetObject(exc.compileError, e.ptr());
    throw py::error_already_set();
  }
  case tilejit::ErrorKind::None:
  case tilejit::ErrorKind::Other: break;
  }
  raise(exc.error, message);
}

void check(const tilejit::Status &s) {
  if (!s)
    raiseKind(s.kind(), s.message());
}

template <class T> T take(tilejit::Result<T> r) {
  if (!r)
    raiseKind(r.errorKind(), r.error());
  return std::move(*r);
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

/// A Python object a launch reads through: a buffer view or a DLPack
/// capsule, released after the kernel returns.
struct Held {
  Py_buffer view{};
  bool hasView = false;
  py::object capsule;
  Held() = default;
  Held(const Held &) = delete;
  Held &operator=(const Held &) = delete;
  ~Held() {
    if (hasView)
      PyBuffer_Release(&view);
  }
};

const char *typeName(PyObject *o) { return Py_TYPE(o)->tp_name; }

std::string argName(size_t i, const tilejit::ParamSig &p) {
  return "argument " + std::to_string(i) + " ('" + p.name + "')";
}

/// The element type of a buffer format ("<f", "e", "q", ...); false if none.
bool bufferElemType(const char *format, Py_ssize_t itemsize, ElemType &out) {
  if (!format)
    format = "B";
  if (*format == '<' || *format == '=' || *format == '@')
    ++format;
  if (format[0] == 0 || format[1] != 0)
    return false;
  switch (format[0]) {
  case 'f': out = ElemType::F32; return itemsize == 4;
  case 'e': out = ElemType::F16; return itemsize == 2;
  case 'b': out = ElemType::I8; return true;
  case 'B': out = ElemType::U8; return true;
  case '?': out = ElemType::I1; return itemsize == 1;
  case 'h': out = ElemType::I16; return itemsize == 2;
  case 'H': out = ElemType::U16; return itemsize == 2;
  case 'i': out = ElemType::I32; return itemsize == 4;
  case 'I': out = ElemType::U32; return itemsize == 4;
  case 'l':
  case 'q': out = ElemType::I64; return itemsize == 8;
  default: return false;
  }
}

bool dlpackElemType(DLDataType t, ElemType &out) {
  if (t.lanes != 1)
    return false;
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 32) { out = ElemType::F32; return true; }
    if (t.bits == 16) { out = ElemType::F16; return true; }
    return false;
  case kDLBfloat:
    if (t.bits == 16) { out = ElemType::BF16; return true; }
    return false;
  case kDLInt:
    switch (t.bits) {
    case 8: out = ElemType::I8; return true;
    case 16: out = ElemType::I16; return true;
    case 32: out = ElemType::I32; return true;
    case 64: out = ElemType::I64; return true;
    }
    return false;
  case kDLUInt:
    switch (t.bits) {
    case 8: out = ElemType::U8; return true;
    case 16: out = ElemType::U16; return true;
    case 32: out = ElemType::U32; return true;
    }
    return false;
  case 6: // kDLBool (DLPack 0.8): one byte, 0 or 1
    if (t.bits == 8) { out = ElemType::I1; return true; }
    return false;
  }
  return false;
}

/// A tensor argument's element type, data, sizes and strides (elements).
struct TensorArg {
  ElemType type = ElemType::U8;
  void *data = nullptr;
  std::vector<int64_t> sizes, strides;
};

/// Reads a NumPy array (or any writable, strided buffer).
bool fromBuffer(PyObject *o, size_t i, const tilejit::ParamSig &p, Held &held, TensorArg &t) {
  if (!PyObject_CheckBuffer(o))
    return false;
  if (PyObject_GetBuffer(o, &held.view, PyBUF_RECORDS) != 0) {
    // A read-only array (np.broadcast_to, a frombuffer of bytes): a kernel
    // may store into any tensor argument, so it is refused.
    PyErr_Clear();
    Py_buffer ro;
    if (PyObject_GetBuffer(o, &ro, PyBUF_RECORDS_RO) == 0) {
      PyBuffer_Release(&ro);
      raise(exc.valueError, argName(i, p) + ": the array is read-only (a kernel may write any "
                                            "tensor argument; pass a writable copy)");
    }
    PyErr_Clear();
    raise(exc.typeError, argName(i, p) + ": " + typeName(o) +
                             " exposes no strided buffer (a NumPy array or a PyTorch CPU "
                             "tensor is expected)");
  }
  held.hasView = true;
  const Py_buffer &v = held.view;
  if (!bufferElemType(v.format, v.itemsize, t.type))
    raise(exc.typeError, argName(i, p) + ": element format '" +
                             std::string(v.format ? v.format : "B") +
                             "' is none of the kernel element types");
  t.data = v.buf;
  t.sizes.resize(v.ndim);
  t.strides.resize(v.ndim);
  for (int a = 0; a < v.ndim; ++a) {
    t.sizes[a] = v.shape[a];
    if (v.strides[a] % v.itemsize != 0)
      raise(exc.valueError, argName(i, p) + ": stride of axis " + std::to_string(a) + " (" +
                                std::to_string(v.strides[a]) +
                                " bytes) is not a whole number of elements");
    t.strides[a] = v.strides[a] / v.itemsize;
  }
  return true;
}

/// The element type of a torch.dtype object (they are singletons: compared
/// by identity); false if none.
bool torchElemType(PyObject *dtype, ElemType &out) {
  static std::vector<std::pair<PyObject *, ElemType>> dtypes = [] {
    std::vector<std::pair<PyObject *, ElemType>> v;
    py::module_ torch = py::module_::import("torch");
    static const std::pair<const char *, ElemType> names[] = {
        {"float32", ElemType::F32}, {"float16", ElemType::F16}, {"bfloat16", ElemType::BF16},
        {"int8", ElemType::I8},     {"uint8", ElemType::U8},    {"int16", ElemType::I16},
        {"int32", ElemType::I32},   {"int64", ElemType::I64},   {"bool", ElemType::I1}};
    for (const auto &[name, type] : names)
      v.emplace_back(py::object(torch.attr(name)).release().ptr(), type); // kept for good
    return v;
  }();
  for (const auto &[obj, type] : dtypes)
    if (dtype == obj) {
      out = type;
      return true;
    }
  return false;
}

/// Reads a PyTorch CPU tensor (strided, any dtype tilejit knows) through
/// its own accessors: a fraction of DLPack's export cost per call.
bool fromTorch(PyObject *o, size_t i, const tilejit::ParamSig &p, TensorArg &t) {
  if (!tilejit::python::isTorchTensor(o))
    return false;
  tilejit::python::TorchTensor tt = tilejit::python::readTorchTensor(o);
  py::handle h(o);
  using Problem = tilejit::python::TorchTensor::Problem;
  if (tt.problem == Problem::NotCpu)
    raise(exc.typeError, argName(i, p) + ": the tensor is on " +
                             py::str(h.attr("device")).cast<std::string>() + ", not the CPU");
  if (tt.problem == Problem::NotStrided)
    raise(exc.typeError, argName(i, p) + ": the tensor's layout is " +
                             py::str(h.attr("layout")).cast<std::string>() +
                             " (a strided tensor is expected)");
  if (!torchElemType(tt.dtype.ptr(), t.type))
    raise(exc.typeError, argName(i, p) + ": element type " +
                             py::str(tt.dtype).cast<std::string>() +
                             " is none of the kernel element types");
  t.data = tt.data;
  t.sizes = std::move(tt.sizes);
  t.strides = std::move(tt.strides);
  return true;
}

/// Reads any other object that speaks DLPack, on the CPU.
bool fromDLPack(PyObject *o, size_t i, const tilejit::ParamSig &p, Held &held, TensorArg &t) {
  static PyObject *dunder = PyUnicode_InternFromString("__dlpack__");
  if (!PyObject_HasAttr(o, dunder))
    return false;
  py::handle h(o);
  py::object dev = h.attr("__dlpack_device__")();
  if (dev.cast<py::tuple>()[0].cast<int>() != kDLCPU)
    raise(exc.typeError, argName(i, p) + ": the tensor is not on the CPU (DLPack device " +
                             py::str(dev).cast<std::string>() + ")");
  held.capsule = h.attr("__dlpack__")();
  auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(held.capsule.ptr(), "dltensor"));
  if (!m)
    throw py::error_already_set();
  const DLTensor &d = m->dl_tensor;
  if (!dlpackElemType(d.dtype, t.type))
    raise(exc.typeError, argName(i, p) + ": the tensor's element type (DLPack code " +
                             std::to_string(d.dtype.code) + ", " +
                             std::to_string(d.dtype.bits) +
                             " bits) is none of the kernel element types");
  t.data = static_cast<char *>(d.data) + d.byte_offset;
  t.sizes.assign(d.shape, d.shape + d.ndim);
  t.strides.resize(d.ndim);
  if (d.strides) {
    t.strides.assign(d.strides, d.strides + d.ndim);
  } else {
    int64_t s = 1;
    for (int a = d.ndim; a-- > 0;) {
      t.strides[a] = s;
      s *= d.shape[a];
    }
  }
  return true;
}

/// Appends Python object `o` as argument `i` (parameter `p`) to `pack`.
void pushArg(tilejit::Args &pack, std::vector<std::unique_ptr<Held>> &held, PyObject *o, size_t i,
             const tilejit::ParamSig &p) {
  if (p.tensor) {
    auto h = std::make_unique<Held>();
    TensorArg t;
    if (!fromBuffer(o, i, p, *h, t) && !fromTorch(o, i, p, t) && !fromDLPack(o, i, p, *h, t))
      raise(exc.typeError, argName(i, p) + " is a tensor gm<" +
                               std::string(tilejit::rt::elemTypeName(p.type)) + "> of rank " +
                               std::to_string(p.rank) + "; given " + typeName(o) +
                               " (a NumPy array or a PyTorch CPU tensor is expected)");
    pack.tensor(t.type, t.data, t.sizes, t.strides);
    held.push_back(std::move(h));
    return;
  }
  auto wrong = [&](const char *expected) {
    raise(exc.typeError, argName(i, p) + " is a scalar " +
                             std::string(tilejit::rt::elemTypeName(p.type)) + "; given " +
                             typeName(o) + " (" + expected + " expected)");
  };
  switch (p.type) {
  case ElemType::F32: {
    if (PyBool_Check(o))
      wrong("a float");
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      wrong("a float");
    }
    pack.f32(static_cast<float>(v));
    return;
  }
  case ElemType::I1: {
    if (!PyBool_Check(o)) {
      // numpy.bool_ and 0-d tensors of bool convert through __bool__ only if
      // they say they are booleans.
      py::handle h(o);
      if (!py::hasattr(h, "dtype") || py::str(h.attr("dtype")).cast<std::string>().find("bool") ==
                                          std::string::npos)
        wrong("a bool");
    }
    int v = PyObject_IsTrue(o);
    if (v < 0)
      throw py::error_already_set();
    pack.boolean(v != 0);
    return;
  }
  default: {
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o))
      wrong("an int");
    int overflow = 0;
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!idx)
      throw py::error_already_set();
    long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    bool i32 = p.type == ElemType::I32;
    if (overflow || (i32 && (v < INT32_MIN || v > INT32_MAX)))
      raise(exc.valueError, argName(i, p) + ": " + py::str(o).cast<std::string>() +
                                " is outside " + (i32 ? "int32" : "int64"));
    if (i32)
      pack.i32(static_cast<int32_t>(v));
    else if (p.type == ElemType::I64)
      pack.i64(v);
    else
      raise(exc.typeError, argName(i, p) + ": scalars of type " +
                               std::string(tilejit::rt::elemTypeName(p.type)) +
                               " cannot be passed from Python");
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

tilejit::Stage parseStage(const std::string &s) {
  static const std::pair<const char *, tilejit::Stage> stages[] = {
      {"ast", tilejit::Stage::Ast},         {"tile", tilejit::Stage::Tile},
      {"tile-opt", tilejit::Stage::TileOpt}, {"llvm", tilejit::Stage::Llvm},
      {"llvm-opt", tilejit::Stage::LlvmOpt}, {"asm", tilejit::Stage::Asm}};
  for (const auto &[name, stage] : stages)
    if (s == name)
      return stage;
  raise(PyExc_ValueError,
        "stage '" + s + "' is none of ast, tile, tile-opt, llvm, llvm-opt, asm");
}

py::object launch(const tilejit::Kernel &k, py::args args, int threads) {
  const auto &sig = k.signature();
  if (args.size() != sig.size()) {
    std::string names;
    for (const auto &p : sig) {
      names.append(names.empty() ? "" : ", ");
      names.append(p.name);
    }
    raise(exc.typeError, "kernel " + k.key().substr(0, k.key().find('[')) + " takes " +
                             std::to_string(sig.size()) + " arguments (" + names + "); given " +
                             std::to_string(args.size()));
  }
  tilejit::Args pack;
  std::vector<std::unique_ptr<Held>> held;
  held.reserve(sig.size());
  for (size_t i = 0; i < sig.size(); ++i)
    pushArg(pack, held, args[i].ptr(), i, sig[i]);
  tilejit::Status s;
  {
    py::gil_scoped_release release;
    s = k.launch(pack, threads);
  }
  check(s);
  return py::none();
}

} // namespace

PYBIND11_MODULE(_tilejit, m) {
  m.doc() = "tilejit's C++ API (include/tilejit/tilejit.h) for Python; use the package "
            "`tilejit`.";

  exc.error = PyErr_NewExceptionWithDoc("tilejit.Error", "Base class of tilejit's errors.",
                                        PyExc_Exception, nullptr);
  exc.compileError = PyErr_NewExceptionWithDoc(
      "tilejit.CompileError",
      "A diagnostic of a kernel's source or specialisation: `diagnostic` (the whole text, "
      "with caret lines), `filename`, `line`, `column` (of the first error; None if none).",
      exc.error, nullptr);
  py::tuple typeBases = py::make_tuple(py::handle(exc.error), py::handle(PyExc_TypeError));
  exc.typeError = PyErr_NewExceptionWithDoc(
      "tilejit.ArgumentTypeError",
      "Arguments of the wrong number, kinds or element types (a TypeError).", typeBases.ptr(),
      nullptr);
  py::tuple valueBases = py::make_tuple(py::handle(exc.error), py::handle(PyExc_ValueError));
  exc.valueError = PyErr_NewExceptionWithDoc(
      "tilejit.ArgumentValueError",
      "An argument of the right type whose shape or value is refused (a ValueError).",
      valueBases.ptr(), nullptr);
  if (!exc.error || !exc.compileError || !exc.typeError || !exc.valueError)
    throw py::error_already_set();
  m.add_object("Error", py::handle(exc.error));
  m.add_object("CompileError", py::handle(exc.compileError));
  m.add_object("ArgumentTypeError", py::handle(exc.typeError));
  m.add_object("ArgumentValueError", py::handle(exc.valueError));

  py::class_<tilejit::Source>(m, "Source", "A DSL source text and the name its diagnostics use.")
      .def_static("from_text", &tilejit::Source::fromText, py::arg("name"), py::arg("text"))
      .def_static(
          "from_file",
          [](const std::string &path) { return take(tilejit::Source::fromFile(path)); },
          py::arg("path"))
      .def_property_readonly("name", &tilejit::Source::name)
      .def_property_readonly("text", &tilejit::Source::text);

  py::class_<tilejit::ParamSig>(m, "Param", "A runtime parameter of a compiled kernel.")
      .def_readonly("name", &tilejit::ParamSig::name)
      .def_readonly("tensor", &tilejit::ParamSig::tensor)
      .def_property_readonly("dtype",
                             [](const tilejit::ParamSig &p) {
                               return std::string(tilejit::rt::elemTypeName(p.type));
                             })
      .def_readonly("rank", &tilejit::ParamSig::rank)
      .def("__repr__", [](const tilejit::ParamSig &p) {
        return p.name + ": " +
               (p.tensor ? "gm<" + std::string(tilejit::rt::elemTypeName(p.type)) + ">[rank " +
                               std::to_string(p.rank) + "]"
                         : std::string(tilejit::rt::elemTypeName(p.type)));
      });

  py::class_<tilejit::Kernel>(m, "Kernel", "A kernel compiled for one specialisation.")
      .def_property_readonly("key", &tilejit::Kernel::key)
      .def_property_readonly("compiled", &tilejit::Kernel::compiled)
      .def_property_readonly("signature", &tilejit::Kernel::signature)
      .def_property_readonly("scratch_bytes", &tilejit::Kernel::scratchBytes)
      .def_property_readonly("times",
                             [](const tilejit::Kernel &k) {
                               tilejit::StageTimes t = k.times();
                               py::dict d;
                               d["parse"] = t.parse;
                               d["sema"] = t.sema;
                               d["tile_passes"] = t.tilePasses;
                               d["codegen"] = t.codegen;
                               d["llvm_opt"] = t.llvmOpt;
                               d["machine_code"] = t.machineCode;
                               d["total"] = t.total;
                               return d;
                             })
      .def("__call__",
           [](const tilejit::Kernel &k, py::args args, py::kwargs kw) {
             int threads = 0;
             for (auto item : kw) {
               if (item.first.cast<std::string>() != "threads")
                 raise(exc.typeError, "a kernel launch takes only the keyword argument "
                                      "'threads'; given '" +
                                          item.first.cast<std::string>() + "'");
               threads = item.second.cast<int>();
             }
             return launch(k, std::move(args), threads);
           })
      .def("__repr__", [](const tilejit::Kernel &k) { return "<tilejit.Kernel " + k.key() + ">"; });

  m.def(
      "compile",
      [](const tilejit::Source &src, const std::string &kernel, const TextSpec &text) {
        tilejit::Result<tilejit::Kernel> r = tilejit::Status();
        {
          py::gil_scoped_release release;
          r = tilejit::compile(src, kernel, tilejit::Specialization(text.begin(), text.end()));
        }
        return take(std::move(r));
      },
      py::arg("source"), py::arg("kernel"), py::arg("spec"));
  m.def(
      "emit",
      [](const tilejit::Source &src, const std::string &kernel, const TextSpec &text,
         const std::string &stage) {
        tilejit::Stage st = parseStage(stage);
        tilejit::Result<std::string> r = tilejit::Status();
        {
          py::gil_scoped_release release;
          r = tilejit::emit(src, kernel, tilejit::Specialization(text.begin(), text.end()), st);
        }
        return take(std::move(r));
      },
      py::arg("source"), py::arg("kernel"), py::arg("spec"), py::arg("stage"));
  m.def(
      "specialize",
      [](const tilejit::Source &src, const std::string &kernel, const TextSpec &text) {
        tilejit::Result<tilejit::Specialization> r = tilejit::Status();
        {
          py::gil_scoped_release release;
          r = tilejit::specialize(src, kernel, tilejit::Specialization(text.begin(), text.end()));
        }
        // The bound value, typed: dtype and enumerator names as str, ints, bools.
        py::dict out;
        for (const auto &[name, v] : take(std::move(r))) {
          switch (v.kind()) {
          case tilejit::SpecValue::Kind::Int: out[py::str(name)] = py::int_(v.integer()); break;
          case tilejit::SpecValue::Kind::Bool: out[py::str(name)] = py::bool_(v.boolean()); break;
          default: out[py::str(name)] = py::str(v.str()); break;
          }
        }
        return out;
      },
      py::arg("source"), py::arg("kernel"), py::arg("spec"));
  m.def(
      "declaration",
      [](const tilejit::Source &src, const std::string &kernel) {
        tilejit::Declaration d = take(tilejit::declaration(src, kernel));
        py::list cparams, params;
        for (const auto &c : d.compileParams) {
          static const char *kinds[] = {"dtype", "int", "bool", "enum"};
          py::dict e;
          e["name"] = c.name;
          e["kind"] = kinds[static_cast<int>(c.kind)];
          e["choices"] = c.choices;
          e["default"] = c.hasDefault ? py::object(py::str(c.defaultValue)) : py::none();
          cparams.append(e);
        }
        for (const auto &p : d.params) {
          py::dict e;
          e["name"] = p.name;
          e["tensor"] = p.tensor;
          e["type"] = p.elemType;
          e["dims"] = p.dims;
          e["conditional"] = p.conditional;
          params.append(e);
        }
        py::dict out;
        out["kernel"] = d.kernel;
        out["compile_params"] = cparams;
        out["params"] = params;
        return out;
      },
      py::arg("source"), py::arg("kernel"));
  m.def("cache_stats", [] {
    tilejit::CacheStats s = tilejit::cacheStats();
    py::dict d;
    d["entries"] = s.entries;
    d["memory_hits"] = s.memoryHits;
    d["disk_hits"] = s.diskHits;
    d["compiles"] = s.compiles;
    return d;
  });
  m.def("clear_memory_cache", &tilejit::clearMemoryCache);
  m.def("version", &tilejit::version);
}
