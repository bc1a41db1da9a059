#include "python/torch_call.hpp"

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "python/launch.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gemmtune::python {
namespace {

// Strong references kept for the process's life: releasing them at exit, after the
// interpreter, would touch freed objects.
struct Torch {
  PyTypeObject* tensor = nullptr;
  std::array<PyObject*, 4> dtypes{};
  std::array<char, 4> letters{};
  PyObject* raw_stream = nullptr;
  PyObject* launch = nullptr;  // None: the runtime
};
Torch torch_;

struct Names {
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* is_cuda = PyUnicode_InternFromString("is_cuda");
  PyObject* get_device = PyUnicode_InternFromString("get_device");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* stride = PyUnicode_InternFromString("stride");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject* new_empty = PyUnicode_InternFromString("new_empty");
};
const Names& names() {
  static const Names n;
  return n;
}

void hold(PyObject*& slot, PyObject* value) {
  Py_XINCREF(value);
  Py_XSETREF(slot, value);
}

nb::object checked(PyObject* result) {
  if (!result) throw nb::python_error();
  return nb::steal(result);
}
nb::object attr(nb::handle o, PyObject* name) {
  return checked(PyObject_GetAttr(o.ptr(), name));
}
nb::object call(nb::handle o, PyObject* name) {
  return checked(PyObject_CallMethodNoArgs(o.ptr(), name));
}
std::int64_t as_int(const nb::object& o) {
  const long long v = PyLong_AsLongLong(o.ptr());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}
// (first, second) of a 2-tuple of ints (torch.Size is a tuple); nullopt for any other length.
std::optional<std::array<std::int64_t, 2>> pair(const nb::object& o) {
  if (!PyTuple_Check(o.ptr()) || PyTuple_GET_SIZE(o.ptr()) != 2) return std::nullopt;
  return std::array<std::int64_t, 2>{as_int(nb::borrow(PyTuple_GET_ITEM(o.ptr(), 0))),
                                     as_int(nb::borrow(PyTuple_GET_ITEM(o.ptr(), 1)))};
}

// A row-major CUDA tensor of a supported dtype: rows of `cols` elements `ld` apart.
struct RowMajor {
  char precision;  // one per registered dtype: equal letters, equal dtypes
  int device;
  std::int64_t rows, cols, ld;
};

std::optional<RowMajor> row_major(nb::handle t) {
  const Names& s = names();
  const nb::object dtype = attr(t, s.dtype);
  char precision = 0;
  for (size_t i = 0; i < torch_.dtypes.size(); ++i)
    if (torch_.dtypes[i] == dtype.ptr()) precision = torch_.letters[i];
  if (!precision || attr(t, s.is_cuda).ptr() != Py_True) return std::nullopt;
  const int device = int(as_int(call(t, s.get_device)));
  const auto shape = pair(attr(t, s.shape));
  if (!shape) return std::nullopt;
  const auto stride = pair(call(t, s.stride));
  if (!stride) return std::nullopt;
  const auto [rows, cols] = *shape;
  const auto [ld, unit] = *stride;
  if (unit != 1 || !(ld >= cols && cols > 0) || rows == 0) return std::nullopt;
  return RowMajor{precision, device, rows, cols, ld};
}

// alpha or beta as (real, imaginary) from a Python int, float or complex; nullopt for anything
// else, which the general path converts or refuses.
std::optional<std::complex<double>> scalar(nb::handle x) {
  PyObject* o = x.ptr();
  if (PyFloat_CheckExact(o)) return PyFloat_AS_DOUBLE(o);
  if (PyComplex_CheckExact(o))
    return std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o));
  if (PyLong_CheckExact(o)) {
    const double v = PyLong_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return v;
  }
  return std::nullopt;
}

void launch_or_record(const ColumnMajorCall& q) {
  if (!torch_.launch || torch_.launch == Py_None) return python::launch(q);
  const char ops[2][2] = {{q.op_a, 0}, {q.op_b, 0}};
  nb::handle(torch_.launch)(nb::str(&q.precision, 1), nb::str(ops[0]), nb::str(ops[1]), q.m, q.n,
                            q.k, q.alpha_re, q.alpha_im, q.a, q.lda, q.b, q.ldb, q.beta_re,
                            q.beta_im, q.c, q.ldc, q.stream, q.device);
}

// Python truthiness, as the general path reads the flags (1, numpy.bool_ and the like).
bool truthy(nb::handle x) {
  const int v = PyObject_IsTrue(x.ptr());
  if (v < 0) throw nb::python_error();
  return v != 0;
}

nb::object torch_gemm(nb::handle a, nb::handle b, nb::handle c, nb::handle alpha, nb::handle beta,
                      nb::handle trans_a_flag, nb::handle trans_b_flag) {
  const PyTypeObject* tensor = torch_.tensor;
  if (!tensor || Py_TYPE(a.ptr()) != tensor || Py_TYPE(b.ptr()) != tensor ||
      (!c.is_none() && Py_TYPE(c.ptr()) != tensor))
    return nb::none();
  const bool trans_a = truthy(trans_a_flag), trans_b = truthy(trans_b_flag);
  const auto ma = row_major(a);
  if (!ma) return nb::none();
  const auto mb = row_major(b);
  if (!mb || mb->precision != ma->precision || mb->device != ma->device) return nb::none();
  const auto [m, k] = trans_a ? std::pair{ma->cols, ma->rows} : std::pair{ma->rows, ma->cols};
  const auto [kb, n] = trans_b ? std::pair{mb->cols, mb->rows} : std::pair{mb->rows, mb->cols};
  const Names& s = names();
  const auto pa = std::uintptr_t(as_int(call(a, s.data_ptr)));
  const auto pb = std::uintptr_t(as_int(call(b, s.data_ptr)));
  if (kb != k || pa % 16 || pb % 16) return nb::none();
  const auto alpha_z = scalar(alpha);
  auto beta_z = scalar(beta);
  const bool complex = ma->precision == 'c' || ma->precision == 'z';
  // A complex scalar on real arrays: the general path words the error.
  if (!alpha_z || !beta_z || (!complex && (alpha_z->imag() != 0 || beta_z->imag() != 0)))
    return nb::none();
  nb::object out;
  std::int64_t ldc = n;
  if (c.is_none()) {
    out = checked(PyObject_CallMethodOneArg(a.ptr(), s.new_empty, nb::make_tuple(m, n).ptr()));
    beta_z = 0.0;
  } else {
    const auto mc = row_major(c);
    if (!mc || mc->precision != ma->precision || mc->device != ma->device || mc->rows != m ||
        mc->cols != n)
      return nb::none();
    out = nb::borrow(c);
    ldc = mc->ld;
  }
  ColumnMajorCall q;
  // Row-major operands are column-major transposes: c^T = op(b)^T op(a)^T, operands swapped.
  q.precision = ma->precision;
  q.op_a = trans_b ? 't' : 'n';
  q.op_b = trans_a ? 't' : 'n';
  q.m = n;
  q.n = m;
  q.k = k;
  q.alpha_re = alpha_z->real();
  q.alpha_im = alpha_z->imag();
  q.a = pb;
  q.lda = mb->ld;
  q.b = pa;
  q.ldb = ma->ld;
  q.beta_re = beta_z->real();
  q.beta_im = beta_z->imag();
  q.c = std::uintptr_t(as_int(call(out, s.data_ptr)));
  q.ldc = ldc;
  q.device = ma->device;
  q.stream = std::uintptr_t(
      as_int(checked(PyObject_CallOneArg(torch_.raw_stream, nb::int_(ma->device).ptr()))));
  launch_or_record(q);
  return out;
}

}  // namespace

void define_torch_call(nb::module_& m) {
  m.def(
      "torch_register",
      [](nb::handle tensor_type, const nb::list& dtypes, nb::handle raw_stream, nb::handle launch) {
        if (!PyType_Check(tensor_type.ptr()))
          throw nb::type_error("tensor_type must be torch.Tensor's type");
        if (nb::len(dtypes) != torch_.dtypes.size())
          throw nb::value_error("dtypes must list the four (dtype, precision letter) pairs");
        std::array<std::pair<nb::handle, char>, 4> entries;
        for (size_t i = 0; i < entries.size(); ++i) {
          const nb::handle entry = dtypes[i];
          if (!PyTuple_Check(entry.ptr()) || PyTuple_GET_SIZE(entry.ptr()) != 2)
            throw nb::value_error("each dtypes entry must be a (dtype, precision letter) pair");
          const std::string letter =
              nb::cast<std::string>(nb::borrow(PyTuple_GET_ITEM(entry.ptr(), 1)));
          if (letter.size() != 1 ||
              std::string_view("sdcz").find(letter[0]) == std::string_view::npos)
            throw nb::value_error("a precision letter must be one of s, d, c, z");
          entries[i] = {nb::borrow(PyTuple_GET_ITEM(entry.ptr(), 0)), letter[0]};
        }
        Py_INCREF(tensor_type.ptr());
        Py_XDECREF(reinterpret_cast<PyObject*>(torch_.tensor));
        torch_.tensor = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
        for (size_t i = 0; i < entries.size(); ++i) {
          hold(torch_.dtypes[i], entries[i].first.ptr());
          torch_.letters[i] = entries[i].second;
        }
        hold(torch_.raw_stream, raw_stream.ptr());
        hold(torch_.launch, launch.ptr());
      },
      "tensor_type"_a, "dtypes"_a, "raw_stream"_a, "launch"_a.none());
  m.def("torch_gemm", &torch_gemm, "a"_a.none(), "b"_a.none(), "c"_a.none(), "alpha"_a.none(),
        "beta"_a.none(), "trans_a"_a.none(), "trans_b"_a.none());
}

}  // namespace gemmtune::python
