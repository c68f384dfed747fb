//===- TorchTensor.h - PyTorch tensors read without linking PyTorch -*- C++ -*-===//
///
/// \file
/// Both extensions of the package (tilejit._tilejit's kernel launches,
/// tilejit._aclnn's aclTensors) take PyTorch CPU tensors without linking
/// libtorch: the Tensor type and the strided layout are looked up once torch
/// is imported, and a tensor's metadata is read through interned attribute
/// names and the C API, on every call.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_PYTHON_TORCHTENSOR_H
#define TILEJIT_PYTHON_TORCHTENSOR_H

#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

namespace tilejit::python {

namespace py = pybind11;

/// PyTorch's Tensor type and strided layout, kept for the life of the
/// process once torch has been imported; null before (no object can be a
/// tensor then). Called under the GIL.
struct TorchTypes {
  PyTypeObject *tensor = nullptr;
  PyObject *strided = nullptr;
};
inline const TorchTypes *torchTypes() {
  static TorchTypes cached;
  if (!cached.tensor) {
    static PyObject *name = PyUnicode_InternFromString("torch");
    PyObject *torch = PyImport_GetModule(name); // only if imported
    if (!torch) {
      PyErr_Clear();
      return nullptr;
    }
    py::object mod = py::reinterpret_steal<py::object>(torch);
    cached.strided = py::object(mod.attr("strided")).release().ptr();
    cached.tensor = reinterpret_cast<PyTypeObject *>(py::object(mod.attr("Tensor")).release().ptr());
  }
  return &cached;
}

inline bool isTorchTensor(PyObject *o) {
  const TorchTypes *t = torchTypes();
  return t && PyObject_TypeCheck(o, t->tensor);
}

/// A tensor's device and layout checks and its metadata.
struct TorchTensor {
  enum class Problem { None, NotCpu, NotStrided };
  Problem problem = Problem::None;
  py::object dtype; ///< the torch.dtype object (a singleton)
  void *data = nullptr;
  std::vector<int64_t> sizes, strides; ///< strides in elements
};

/// Reads torch.Tensor `o` (isTorchTensor(o)); a Python error is thrown as
/// py::error_already_set. A tensor not on the CPU or not strided says so in
/// `problem` and leaves the rest unread.
inline TorchTensor readTorchTensor(PyObject *o) {
  static PyObject *isCpu = PyUnicode_InternFromString("is_cpu");
  static PyObject *layout = PyUnicode_InternFromString("layout");
  static PyObject *dtype = PyUnicode_InternFromString("dtype");
  static PyObject *dataPtr = PyUnicode_InternFromString("data_ptr");
  static PyObject *shape = PyUnicode_InternFromString("shape");
  static PyObject *stride = PyUnicode_InternFromString("stride");
  auto checked = [](PyObject *v) {
    if (!v)
      throw py::error_already_set();
    return py::reinterpret_steal<py::object>(v);
  };
  TorchTensor t;
  if (checked(PyObject_GetAttr(o, isCpu)).ptr() != Py_True) {
    t.problem = TorchTensor::Problem::NotCpu;
    return t;
  }
  if (checked(PyObject_GetAttr(o, layout)).ptr() != torchTypes()->strided) {
    t.problem = TorchTensor::Problem::NotStrided;
    return t;
  }
  t.dtype = checked(PyObject_GetAttr(o, dtype));
  t.data = PyLong_AsVoidPtr(checked(PyObject_CallMethodNoArgs(o, dataPtr)).ptr());
  py::object sizes = checked(PyObject_GetAttr(o, shape));
  py::object strides = checked(PyObject_CallMethodNoArgs(o, stride));
  const Py_ssize_t rank = PyTuple_Size(sizes.ptr());
  if (rank < 0 || !PyTuple_Check(strides.ptr()) || PyTuple_GET_SIZE(strides.ptr()) != rank) {
    PyErr_SetString(PyExc_TypeError, "a tensor's shape and stride() are not tuples of one length");
    throw py::error_already_set();
  }
  t.sizes.resize(static_cast<size_t>(rank));
  t.strides.resize(static_cast<size_t>(rank));
  for (Py_ssize_t a = 0; a < rank; ++a) {
    t.sizes[a] = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes.ptr(), a));
    t.strides[a] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides.ptr(), a));
  }
  if (PyErr_Occurred())
    throw py::error_already_set();
  return t;
}

} // namespace tilejit::python

#endif
