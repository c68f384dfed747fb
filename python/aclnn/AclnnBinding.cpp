//===- AclnnBinding.cpp - The generic half of tilejit._aclnn --------------===//
///
/// \file
/// Python arguments to aclnn argument objects, the two phases with the GIL
/// released, and the exceptions (see AclnnBinding.h). One call:
///
///   1. binds the positional and keyword arguments to the entry point's
///      parameters (the header's names and order);
///   2. converts each to its C value under the GIL: a tensor's whole storage
///      becomes the aclTensor's storage, its strides and storage offset the
///      view (no copy), strings and int arrays are copied;
///   3. releases the GIL, runs phase 1, allocates the workspace, runs phase 2
///      on the null stream (the work runs on the calling thread and phase 2
///      returns its status), frees the workspace;
///   4. destroys the argument objects and raises on a failed status.
///
/// Errors: a Python argument of the wrong kind raises ArgumentTypeError; a
/// failed aclnn status raises ArgumentTypeError (a dtype rule),
/// ArgumentValueError (another rule on the arguments: the ACLNN_ERR_PARAM_*
/// codes and ACLNN_ERR_INNER_TILING_ERROR, the shape and mode rules the
/// upstream checks in its tiling) or tilejit.Error (anything else); see
/// classify(). The exception classes live in tilejit._tilejit and are looked
/// up when raised, so this module imports on its own.
///
//===----------------------------------------------------------------------===//
#include "AclnnBinding.h"
#include "TorchTensor.h"

#include "acl/acl.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <new>
#include <regex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace tilejit::pyaclnn {
namespace {

const Tables *tables = nullptr;

const char *kindName(Kind k) {
  switch (k) {
  case Kind::Tensor:
    return "tensor";
  case Kind::TensorList:
    return "tensor_list";
  case Kind::IntArray:
    return "int_array";
  case Kind::FloatArray:
    return "float_array";
  case Kind::BoolArray:
    return "bool_array";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Str:
    return "str";
  case Kind::Bool:
    return "bool";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Exceptions
//===----------------------------------------------------------------------===//

enum class ErrorClass { Type, Value, Other };

/// The exception class of `which` from tilejit._tilejit; the built-in
/// TypeError / ValueError / RuntimeError when that module cannot be imported.
py::object exceptionClass(ErrorClass which) {
  const char *name = which == ErrorClass::Type    ? "ArgumentTypeError"
                     : which == ErrorClass::Value ? "ArgumentValueError"
                                                  : "Error";
  try {
    return py::module_::import("tilejit._tilejit").attr(name);
  } catch (py::error_already_set &) {
    PyObject *builtin = which == ErrorClass::Type    ? PyExc_TypeError
                        : which == ErrorClass::Value ? PyExc_ValueError
                                                     : PyExc_RuntimeError;
    return py::reinterpret_borrow<py::object>(builtin);
  }
}

/// Raises an exception of class `which` whose text is `text`, with the
/// attributes `status` (the aclnn code, None for an error found here),
/// `message` (the C message, or the text) and `argument` (the parameter it
/// names, or None).
[[noreturn]] void raiseError(ErrorClass which, const std::string &text,
                             py::object status, const std::string &message,
                             py::object argument) {
  py::object cls = exceptionClass(which);
  py::object e = cls(text);
  e.attr("status") = std::move(status);
  e.attr("message") = py::str(message);
  e.attr("argument") = std::move(argument);
  PyErr_SetObject(cls.ptr(), e.ptr());
  throw py::error_already_set();
}

/// An argument error found before calling C: "Name: param: what".
[[noreturn]] void argumentError(ErrorClass which, const EntryPoint &e,
                                const char *param, const std::string &what) {
  std::string text = std::string(e.name) + ": ";
  if (param)
    text += std::string(param) + ": ";
  text += what;
  raiseError(which, text, py::none(), text,
             param ? py::object(py::str(param)) : py::object(py::none()));
}

/// A failed aclnn status: which class it raises. The ACLNN_ERR_PARAM_* codes
/// and the tiling code (the upstream checks its shape and mode rules there)
/// are argument errors; among them, a message about a dtype ("key: dtype
/// INT16 must equal ...", "key: list element 1 has dtype ...", "blocktable:
/// dtype must be INT32, got ...", and the mode rules that refuse a dtype:
/// "... supports FLOAT16 and BFLOAT16 only, got INT8", "... does not
/// support HIFLOAT8") is a TypeError. `rule` is the message without the
/// "aclnnXxx: " prefixes.
ErrorClass classify(int32_t status, const std::string &rule) {
  if (status != ACLNN_ERR_PARAM_NULLPTR && status != ACLNN_ERR_PARAM_INVALID &&
      status != ACLNN_ERR_INNER_TILING_ERROR)
    return ErrorClass::Other;
  static const std::regex dtypeRule(
      "^[A-Za-z_][A-Za-z0-9_]*: (list element [0-9]+ has )?dtype\\b|"
      "(only, got|does not support) [A-Z][A-Z0-9_]*$");
  return std::regex_search(rule, dtypeRule) ? ErrorClass::Type
                                            : ErrorClass::Value;
}

/// Raises the exception of a failed `status` whose recorded message is
/// `message` (may be empty).
[[noreturn]] void statusError(const EntryPoint &e, int32_t status,
                              std::string message) {
  if (message.empty())
    message = std::string(e.phase1Name) + ": failed with status " +
              std::to_string(status) + " and no message";
  // Strip the "aclnnXxx: " prefixes (phase 1's, and phase 2's
  // "aclnnXxx: " before a launch failure).
  std::string_view rule = message;
  while (rule.substr(0, 5) == "aclnn") {
    size_t colon = rule.find(": ");
    if (colon == std::string_view::npos)
      break;
    rule.remove_prefix(colon + 2);
  }
  // The parameter the message names: its first word, when it is one.
  py::object argument = py::none();
  size_t end = rule.find_first_of(": ,");
  std::string first(rule.substr(0, end));
  for (size_t i = 0; i < e.numParams; ++i)
    if (first == e.params[i].name)
      argument = py::str(first);
  std::string text = message + " (aclnn status " + std::to_string(status) + ")";
  raiseError(classify(status, std::string(rule)), text, py::int_(status),
             message, std::move(argument));
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// A tensor argument wrapped by with_format: the storage format (and
/// optionally another data type of the same element size) it is passed with.
struct Formatted {
  py::object tensor;
  int format;
  std::string formatName;
  int dataType; ///< -2: the tensor's own
  std::string dataTypeName;
};

int lookup(const EnumName *table, size_t n, std::string_view name) {
  for (size_t i = 0; i < n; ++i)
    if (name == table[i].name)
      return table[i].value;
  return -2;
}

std::string names(const EnumName *table, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (table[i].value < 0)
      continue;
    if (!s.empty())
      s += ", ";
    s += table[i].name;
  }
  return s;
}

/// The aclDataType of a torch or NumPy dtype name ("float16", "bfloat16"),
/// through the header's names; -2 when there is none.
int dataTypeOf(std::string_view dtype) {
  static const std::pair<const char *, const char *> map[] = {
      {"float32", "FLOAT"},
      {"float16", "FLOAT16"},
      {"bfloat16", "BF16"},
      {"int8", "INT8"},
      {"uint8", "UINT8"},
      {"int16", "INT16"},
      {"uint16", "UINT16"},
      {"int32", "INT32"},
      {"uint32", "UINT32"},
      {"int64", "INT64"},
      {"uint64", "UINT64"},
      {"float64", "DOUBLE"},
      {"bool", "BOOL"},
      {"complex64", "COMPLEX64"},
      {"complex128", "COMPLEX128"},
      {"complex32", "COMPLEX32"},
      {"float8_e5m2", "FLOAT8_E5M2"},
      {"float8_e4m3fn", "FLOAT8_E4M3FN"},
      {"float8_e8m0fnu", "FLOAT8_E8M0"}};
  for (auto [from, to] : map)
    if (dtype == from)
      return lookup(tables->dataTypes, tables->numDataTypes, to);
  return -2;
}

/// A module already imported, or None (the argument cannot be one of its
/// objects then).
py::object importedModule(const char *name) {
  PyObject *m = PyImport_GetModule(py::str(name).ptr());
  if (!m) {
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(m);
}

/// Everything aclCreateTensor needs.
struct TensorDesc {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  int64_t storageElems = 0;
  void *base = nullptr;
  int dataType = -2;
  int64_t elementSize = 0;
  std::string dtypeName;
};

std::string typeName(py::handle h) {
  return py::str(py::type::handle_of(h).attr("__qualname__"));
}

std::vector<int64_t> intTuple(py::handle seq) {
  std::vector<int64_t> v;
  for (py::handle x : seq)
    v.push_back(x.cast<int64_t>());
  return v;
}

/// The aclDataType (-2: none) and name of a torch.dtype, remembered per
/// dtype object (they are singletons).
std::pair<int, std::string> torchDataType(py::handle dtype) {
  static std::vector<std::pair<PyObject *, std::pair<int, std::string>>>
      seen; // under the GIL
  for (const auto &[object, value] : seen)
    if (object == dtype.ptr())
      return value;
  std::string name = py::str(dtype);
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  std::pair<int, std::string> value{dataTypeOf(name), name};
  seen.emplace_back(dtype.inc_ref().ptr(), value);
  return value;
}

/// A torch.Tensor: the CPU check, then shape, strides, storage offset and
/// the whole storage. Returns false if `obj` is not a torch.Tensor.
bool describeTorch(const EntryPoint &e, const char *param, py::handle obj,
                   TensorDesc &d) {
  if (!python::isTorchTensor(obj.ptr()))
    return false;
  python::TorchTensor t = python::readTorchTensor(obj.ptr());
  if (t.problem == python::TorchTensor::Problem::NotStrided)
    argumentError(ErrorClass::Type, e, param,
                  "a strided tensor is required, got layout " +
                      std::string(py::str(obj.attr("layout"))));
  if (t.problem == python::TorchTensor::Problem::NotCpu)
    argumentError(ErrorClass::Type, e, param,
                  "a CPU tensor is required, got one on device '" +
                      std::string(py::str(obj.attr("device"))) + "'");
  std::tie(d.dataType, d.dtypeName) = torchDataType(t.dtype);
  d.shape = std::move(t.sizes);
  d.strides = std::move(t.strides);
  d.offset = obj.attr("storage_offset")().cast<int64_t>();
  d.elementSize = obj.attr("element_size")().cast<int64_t>();
  // The untyped storage: torch >= 2.0's untyped_storage(), 1.13's
  // _storage() (its public storage() wraps it in a Python TypedStorage, ten
  // times the cost); each counts bytes with nbytes().
  static const char *storageMethod = py::hasattr(obj, "untyped_storage") ? "untyped_storage"
                                     : py::hasattr(obj, "_storage")      ? "_storage"
                                                                         : "storage";
  py::object storage = obj.attr(storageMethod)();
  int64_t bytes = storage.attr("nbytes")().cast<int64_t>();
  d.storageElems = d.elementSize > 0 ? bytes / d.elementSize : 0;
  auto first = reinterpret_cast<uintptr_t>(t.data);
  d.base = first ? reinterpret_cast<void *>(
                       first - static_cast<uintptr_t>(d.offset * d.elementSize))
                 : nullptr;
  return true;
}

/// A NumPy array: its storage is the span its view addresses (the array's
/// base buffer is not known). Returns false if `obj` is not an ndarray.
bool describeNumpy(const EntryPoint &e, const char *param, py::handle obj,
                   TensorDesc &d) {
  py::object np = importedModule("numpy");
  if (np.is_none() || !py::isinstance(obj, np.attr("ndarray")))
    return false;
  py::object dtype = obj.attr("dtype");
  d.dtypeName = py::str(dtype.attr("name"));
  if (!dtype.attr("isnative").cast<bool>())
    argumentError(ErrorClass::Type, e, param,
                  "a NumPy array in the machine's byte order is required");
  d.dataType = dataTypeOf(d.dtypeName);
  d.elementSize = obj.attr("itemsize").cast<int64_t>();
  d.shape = intTuple(obj.attr("shape"));
  std::vector<int64_t> byteStrides = intTuple(obj.attr("strides"));
  auto data = obj.attr("__array_interface__")["data"]
                  .cast<py::tuple>()[0]
                  .cast<uintptr_t>();
  int64_t lo = 0, hi = 0;
  bool empty = false;
  for (size_t k = 0; k < d.shape.size(); ++k) {
    if (d.shape[k] == 0)
      empty = true;
    if (d.elementSize == 0 || byteStrides[k] % d.elementSize != 0)
      argumentError(ErrorClass::Value, e, param,
                    "a NumPy array whose strides are whole elements is "
                    "required");
    d.strides.push_back(byteStrides[k] / d.elementSize);
    int64_t reach = (d.shape[k] - 1) * byteStrides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  if (empty) {
    d.storageElems = 0;
    d.base = reinterpret_cast<void *>(data);
    return true;
  }
  d.offset = -lo / std::max<int64_t>(d.elementSize, 1);
  d.storageElems = (hi - lo) / std::max<int64_t>(d.elementSize, 1) + 1;
  d.base = reinterpret_cast<void *>(data - static_cast<uintptr_t>(-lo));
  return true;
}

//===----------------------------------------------------------------------===//
// One call
//===----------------------------------------------------------------------===//

/// The argument objects of one call, destroyed with it, and the Python
/// objects whose memory they point into, kept alive while the GIL is off.
struct CallState {
  std::vector<Slot> slots;
  std::vector<aclTensor *> tensors;
  std::vector<aclTensorList *> lists;
  std::vector<aclIntArray *> intArrays;
  std::vector<aclFloatArray *> floatArrays;
  std::vector<aclBoolArray *> boolArrays;
  std::deque<std::string> strings;
  std::vector<py::object> keep;

  ~CallState() {
    for (aclTensorList *l : lists)
      aclDestroyTensorList(l);
    for (aclTensor *t : tensors)
      aclDestroyTensor(t);
    for (aclIntArray *a : intArrays)
      aclDestroyIntArray(a);
    for (aclFloatArray *a : floatArrays)
      aclDestroyFloatArray(a);
    for (aclBoolArray *a : boolArrays)
      aclDestroyBoolArray(a);
  }
};

std::string takeRecentMessage() {
  const char *m = aclGetRecentErrMsg();
  return m ? std::string(m) : std::string();
}

aclTensor *makeTensor(const EntryPoint &e, const char *param, py::handle obj,
                      CallState &st) {
  py::handle value = obj;
  const Formatted *wrapped = nullptr;
  if (py::isinstance<Formatted>(obj)) {
    wrapped = &obj.cast<const Formatted &>();
    value = wrapped->tensor;
  }
  TensorDesc d;
  if (!describeTorch(e, param, value, d) && !describeNumpy(e, param, value, d))
    argumentError(ErrorClass::Type, e, param,
                  "a torch.Tensor on the CPU (or a NumPy array) is required, "
                  "got " +
                      typeName(value));
  int dataType = d.dataType;
  if (wrapped && wrapped->dataType != -2) {
    if (static_cast<int64_t>(aclDataTypeSize(
            static_cast<aclDataType>(wrapped->dataType))) != d.elementSize)
      argumentError(ErrorClass::Type, e, param,
                    "with_format: dtype " + wrapped->dataTypeName +
                        " has another element size than " + d.dtypeName);
    dataType = wrapped->dataType;
  }
  if (dataType == -2)
    argumentError(ErrorClass::Type, e, param,
                  "dtype " + d.dtypeName + " has no aclDataType");
  int format = wrapped ? wrapped->format
                       : lookup(tables->formats, tables->numFormats, "ND");
  aclTensor *t = aclCreateTensor(
      d.shape.data(), d.shape.size(), static_cast<aclDataType>(dataType),
      d.strides.data(), d.offset, static_cast<aclFormat>(format),
      &d.storageElems, 1, d.base);
  if (!t)
    argumentError(ErrorClass::Value, e, param, takeRecentMessage());
  st.tensors.push_back(t);
  st.keep.push_back(py::reinterpret_borrow<py::object>(value));
  return t;
}

bool isStringLike(py::handle obj) {
  return PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr());
}

/// The items of a sequence argument (a list, tuple, or other non-string
/// sequence).
py::list items(const EntryPoint &e, const char *param, py::handle obj,
               const char *what) {
  if (isStringLike(obj) || !PySequence_Check(obj.ptr()))
    argumentError(ErrorClass::Type, e, param,
                  std::string("a sequence of ") + what + " is required, got " +
                      typeName(obj));
  return py::list(py::reinterpret_borrow<py::object>(obj));
}

int64_t toInt(const EntryPoint &e, const char *param, py::handle obj) {
  if (PyFloat_Check(obj.ptr()) || isStringLike(obj))
    argumentError(ErrorClass::Type, e, param,
                  "an int is required, got " + typeName(obj));
  PyObject *index = PyNumber_Index(obj.ptr());
  if (!index) {
    PyErr_Clear();
    argumentError(ErrorClass::Type, e, param,
                  "an int is required, got " + typeName(obj));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow)
    argumentError(ErrorClass::Value, e, param,
                  "the int does not fit in 64 bits");
  return v;
}

bool isNumpyScalar(py::handle obj, const char *kind) {
  py::object np = importedModule("numpy");
  return !np.is_none() && py::isinstance(obj, np.attr(kind));
}

double toFloat(const EntryPoint &e, const char *param, py::handle obj) {
  if (!PyFloat_Check(obj.ptr()) && !PyLong_Check(obj.ptr()) &&
      !isNumpyScalar(obj, "floating") && !isNumpyScalar(obj, "integer"))
    argumentError(ErrorClass::Type, e, param,
                  "a float is required, got " + typeName(obj));
  double v = PyFloat_AsDouble(obj.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    argumentError(ErrorClass::Value, e, param, "the value is not a double");
  }
  return v;
}

bool toBool(const EntryPoint &e, const char *param, py::handle obj) {
  if (!PyBool_Check(obj.ptr()) && !isNumpyScalar(obj, "bool_"))
    argumentError(ErrorClass::Type, e, param,
                  "a bool is required, got " + typeName(obj));
  return PyObject_IsTrue(obj.ptr()) == 1;
}

/// Converts argument `obj` of parameter `p` into `slot`.
void convert(const EntryPoint &e, const Param &p, py::handle obj, Slot &slot,
             CallState &st) {
  const char *param = p.name;
  if (obj.is_none()) {
    if (p.optional)
      return; // NULL
    argumentError(ErrorClass::Type, e, param,
                  std::string("a ") + kindName(p.kind) +
                      " is required, got None (the parameter is not "
                      "optional)");
  }
  switch (p.kind) {
  case Kind::Tensor:
    slot.tensor = makeTensor(e, param, obj, st);
    return;
  case Kind::TensorList: {
    if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr()))
      argumentError(ErrorClass::Type, e, param,
                    "a list or tuple of tensors is required, got " +
                        typeName(obj));
    py::list list(py::reinterpret_borrow<py::object>(obj));
    st.keep.push_back(list);
    std::vector<const aclTensor *> entries;
    for (py::handle item : list)
      entries.push_back(item.is_none() ? nullptr
                                       : makeTensor(e, param, item, st));
    aclTensorList *l = aclCreateTensorList(entries.data(), entries.size());
    if (!l)
      argumentError(ErrorClass::Value, e, param, takeRecentMessage());
    st.lists.push_back(l);
    slot.tensorList = l;
    return;
  }
  case Kind::IntArray: {
    std::vector<int64_t> v;
    for (py::handle x : items(e, param, obj, "ints"))
      v.push_back(toInt(e, param, x));
    aclIntArray *a = aclCreateIntArray(v.data(), v.size());
    if (!a)
      argumentError(ErrorClass::Value, e, param, takeRecentMessage());
    st.intArrays.push_back(a);
    slot.intArray = a;
    return;
  }
  case Kind::FloatArray: {
    std::vector<float> v;
    for (py::handle x : items(e, param, obj, "floats"))
      v.push_back(static_cast<float>(toFloat(e, param, x)));
    aclFloatArray *a = aclCreateFloatArray(v.data(), v.size());
    if (!a)
      argumentError(ErrorClass::Value, e, param, takeRecentMessage());
    st.floatArrays.push_back(a);
    slot.floatArray = a;
    return;
  }
  case Kind::BoolArray: {
    py::list list = items(e, param, obj, "bools");
    std::unique_ptr<bool[]> v(new bool[list.size() + 1]);
    size_t n = 0;
    for (py::handle x : list)
      v[n++] = toBool(e, param, x);
    aclBoolArray *a = aclCreateBoolArray(v.get(), n);
    if (!a)
      argumentError(ErrorClass::Value, e, param, takeRecentMessage());
    st.boolArrays.push_back(a);
    slot.boolArray = a;
    return;
  }
  case Kind::Int:
    slot.i = toInt(e, param, obj);
    return;
  case Kind::Float:
    slot.f = toFloat(e, param, obj);
    return;
  case Kind::Str: {
    if (!PyUnicode_Check(obj.ptr()))
      argumentError(ErrorClass::Type, e, param,
                    "a str is required, got " + typeName(obj));
    std::string s = obj.cast<std::string>();
    if (s.find('\0') != std::string::npos)
      argumentError(ErrorClass::Value, e, param,
                    "the string must not contain a NUL character");
    st.strings.push_back(std::move(s));
    slot.str = st.strings.back().data();
    return;
  }
  case Kind::Bool:
    slot.b = toBool(e, param, obj);
    return;
  }
}

/// The Python function of entry point `e`.
void call(const EntryPoint &e, py::args args, py::kwargs kwargs) {
  const size_t n = e.numParams;
  std::vector<py::handle> bound(n);
  std::vector<bool> given(n, false);
  if (args.size() > n)
    argumentError(ErrorClass::Type, e, nullptr,
                  "takes " + std::to_string(n) + " arguments, got " +
                      std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    bound[i] = args[i];
    given[i] = true;
  }
  for (auto [key, value] : kwargs) {
    std::string name = py::str(key);
    size_t i = 0;
    while (i < n && name != e.params[i].name)
      ++i;
    if (i == n)
      argumentError(ErrorClass::Type, e, nullptr,
                    "got an unexpected keyword argument '" + name + "'");
    if (given[i])
      argumentError(ErrorClass::Type, e, nullptr,
                    "got multiple values for argument '" + name + "'");
    bound[i] = value;
    given[i] = true;
  }
  for (size_t i = 0; i < n; ++i)
    if (!given[i] && !e.params[i].optional)
      argumentError(ErrorClass::Type, e, nullptr,
                    std::string("missing required argument '") +
                        e.params[i].name + "'");

  CallState st;
  st.slots.resize(n);
  for (size_t i = 0; i < n; ++i)
    if (given[i])
      convert(e, e.params[i], bound[i], st.slots[i], st);

  aclnnStatus status = ACLNN_SUCCESS;
  std::string message;
  {
    py::gil_scoped_release release;
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    status = e.phase1(st.slots.data(), &workspaceSize, &executor);
    if (status != ACLNN_SUCCESS) {
      message = takeRecentMessage();
    } else {
      void *workspace = nullptr;
      if (workspaceSize > 0)
        workspace =
            ::operator new(workspaceSize, std::align_val_t(64), std::nothrow);
      if (workspaceSize > 0 && !workspace) {
        aclDestroyAclOpExecutor(executor);
        status = ACLNN_ERR_RUNTIME_ERROR;
        message = std::string(e.name) + ": cannot allocate a workspace of " +
                  std::to_string(workspaceSize) + " bytes";
      } else {
        status = e.phase2(workspace, workspaceSize, executor, nullptr);
        if (status != ACLNN_SUCCESS)
          message = takeRecentMessage();
        if (workspace)
          ::operator delete(workspace, std::align_val_t(64));
      }
    }
  }
  if (status != ACLNN_SUCCESS)
    statusError(e, status, std::move(message));
}

std::string docOf(const EntryPoint &e) {
  std::string doc = std::string(e.name) + "(";
  for (size_t i = 0; i < e.numParams; ++i) {
    if (i)
      doc += ", ";
    doc += e.params[i].name;
    if (e.params[i].optional)
      doc += "=None";
  }
  doc += ") -> None\n\nRuns " + std::string(e.phase1Name) +
         " and its phase 2 (" + e.header +
         ") on the calling thread, the GIL released.\n\nParameters, in the "
         "header's order (also keywords):\n";
  for (size_t i = 0; i < e.numParams; ++i)
    doc += std::string("  ") + e.params[i].name + ": " +
           kindName(e.params[i].kind) +
           (e.params[i].optional ? " or None\n" : "\n");
  return doc;
}

} // namespace

void defineModule(py::module_ &m, const Tables &t) {
  tables = &t;
  m.doc() = "The aclnn entry points of include/aclnnop/*.h, generated from "
            "the headers with libclang: tilejit._aclnn.<Name>(*args, "
            "**kwargs) runs aclnn<Name>GetWorkspaceSize and aclnn<Name>.";

  py::class_<Formatted>(m, "FormattedTensor",
                        "A tensor argument passed with another storage format "
                        "(see with_format).")
      .def_property_readonly("tensor",
                             [](const Formatted &f) { return f.tensor; })
      .def_property_readonly("format",
                             [](const Formatted &f) { return f.formatName; })
      .def_property_readonly("dtype",
                             [](const Formatted &f) -> py::object {
                               if (f.dataType == -2)
                                 return py::none();
                               return py::str(f.dataTypeName);
                             })
      .def("__repr__", [](const Formatted &f) {
        std::string r =
            "with_format(<" + typeName(f.tensor) + ">, '" + f.formatName + "'";
        if (f.dataType != -2)
          r += ", dtype='" + f.dataTypeName + "'";
        return r + ")";
      });

  m.def(
      "with_format",
      [](py::object tensor, const std::string &format,
         py::object dtype) -> Formatted {
        Formatted f;
        f.tensor = std::move(tensor);
        f.format = lookup(tables->formats, tables->numFormats, format);
        if (f.format < 0) {
          PyErr_SetString(PyExc_ValueError,
                          ("with_format: unknown format '" + format +
                           "'; one of " +
                           names(tables->formats, tables->numFormats))
                              .c_str());
          throw py::error_already_set();
        }
        f.formatName = format;
        f.dataType = -2;
        if (!dtype.is_none()) {
          f.dataTypeName = py::str(dtype);
          f.dataType =
              lookup(tables->dataTypes, tables->numDataTypes, f.dataTypeName);
          if (f.dataType < 0) {
            PyErr_SetString(PyExc_ValueError,
                            ("with_format: unknown dtype '" + f.dataTypeName +
                             "'; one of " +
                             names(tables->dataTypes, tables->numDataTypes))
                                .c_str());
            throw py::error_already_set();
          }
        }
        return f;
      },
      py::arg("tensor"), py::arg("format") = "ND", py::kw_only(),
      py::arg("dtype") = py::none(),
      "with_format(tensor, format='ND', *, dtype=None): `tensor` passed with "
      "the storage format `format` (an aclFormat name without its ACL_FORMAT_ "
      "prefix, e.g. 'FRACTAL_NZ'); `dtype` (an aclDataType name without ACL_, "
      "e.g. 'HIFLOAT8') passes its elements as another type of the same "
      "size.");

  py::dict entryPoints;
  static std::deque<std::string> docs;
  // Each docstring starts with the header's signature; pybind11's
  // "(*args, **kwargs)" line would only hide it.
  py::options options;
  options.disable_function_signatures();
  for (size_t k = 0; k < t.numEntries; ++k) {
    const EntryPoint *e = &t.entries[k];
    py::list params;
    for (size_t i = 0; i < e->numParams; ++i)
      params.append(py::make_tuple(e->params[i].name,
                                   kindName(e->params[i].kind),
                                   e->params[i].optional));
    entryPoints[e->name] = params;
    docs.push_back(docOf(*e));
    m.def(
        e->name,
        [e](py::args args, py::kwargs kwargs) {
          call(*e, std::move(args), std::move(kwargs));
        },
        docs.back().c_str());
  }
  m.attr("ENTRY_POINTS") = entryPoints;
  py::dict formats, dataTypes;
  for (size_t i = 0; i < t.numFormats; ++i)
    if (t.formats[i].value >= 0)
      formats[t.formats[i].name] = t.formats[i].value;
  for (size_t i = 0; i < t.numDataTypes; ++i)
    if (t.dataTypes[i].value >= 0)
      dataTypes[t.dataTypes[i].name] = t.dataTypes[i].value;
  m.attr("FORMATS") = formats;
  m.attr("DATA_TYPES") = dataTypes;
}

} // namespace tilejit::pyaclnn
