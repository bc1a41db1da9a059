// gemmtune._gemmtune: the app layer and the runtime's gemm() for Python. Results cross as the
// command's JSON records turned into dicts and lists; C++ InputError becomes ValueError.
#include <cuda_runtime.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "app/app.hpp"
#include "python/launch.hpp"
#include "python/torch_call.hpp"
#include "runtime/runtime.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace app = gemmtune::app;

namespace {

nb::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return nb::none();
    case nlohmann::json::value_t::boolean:
      return nb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return nb::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return nb::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return nb::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return nb::str(j.get_ref<const std::string&>().c_str());
    case nlohmann::json::value_t::array: {
      nb::list out;
      for (const auto& x : j) out.append(to_python(x));
      return out;
    }
    case nlohmann::json::value_t::object: {
      nb::dict out;
      for (const auto& [key, value] : j.items()) out[key.c_str()] = to_python(value);
      return out;
    }
    default:
      throw gemmtune::InputError("a JSON value of an unexpected kind: " + j.dump());
  }
}

// The problem keywords (the command's option names) from a dict the Python layer builds.
app::ProblemOptions problem_from(const nb::dict& d) {
  app::ProblemOptions o;
  for (auto [key, value] : d) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "precision")
      o.precision = nb::cast<std::string>(value);
    else if (name == "opa")
      o.op_a = nb::cast<std::string>(value);
    else if (name == "opb")
      o.op_b = nb::cast<std::string>(value);
    else if (name == "m")
      o.m = nb::cast<std::int64_t>(value);
    else if (name == "n")
      o.n = nb::cast<std::int64_t>(value);
    else if (name == "k")
      o.k = nb::cast<std::int64_t>(value);
    else if (name == "lda")
      o.lda = nb::cast<std::int64_t>(value);
    else if (name == "ldb")
      o.ldb = nb::cast<std::int64_t>(value);
    else if (name == "ldc")
      o.ldc = nb::cast<std::int64_t>(value);
    else if (name == "batch")
      o.batch = nb::cast<std::int64_t>(value);
    else if (name == "alpha")
      o.alpha = nb::cast<double>(value);
    else if (name == "beta")
      o.beta = nb::cast<double>(value);
    else
      throw gemmtune::InputError("'" + name + "' is not a problem option");
  }
  return o;
}

std::string db_or_default(const std::optional<std::string>& db) {
  return db ? *db : gemmtune::Database::default_path();
}

}  // namespace

NB_MODULE(_gemmtune, m) {
  m.doc() = "gemmtune's C++ layer; use the gemmtune package's functions";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const gemmtune::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def(
      "predict",
      [](const nb::dict& problem, const std::string& gpu, int top, const std::string& domain,
         const std::optional<std::string>& db, const std::string& calibration, bool shortlist,
         int compiled_shortlist, const std::optional<std::string>& cache) {
        app::PredictRequest q;
        q.problem = problem_from(problem);
        q.gpu = gpu;
        q.top = top;
        q.domain = domain;
        q.db = db_or_default(db);
        q.calibration = calibration;
        q.shortlist = shortlist;
        q.compiled_shortlist = compiled_shortlist;
        if (cache) q.cache = *cache;
        nlohmann::json out;
        {
          nb::gil_scoped_release unlocked;  // ranking runs on every core for a while
          out = app::to_json(app::predict(q));
        }
        return to_python(out);
      },
      "problem"_a, "gpu"_a, "top"_a, "domain"_a, "db"_a.none(), "calibration"_a, "shortlist"_a,
      "compiled_shortlist"_a, "cache"_a.none());

  m.def(
      "space",
      [](const nb::dict& problem, const std::string& gpu, const std::vector<std::string>& disable,
         const std::string& domain, bool list) {
        app::SpaceRequest q;
        q.problem = problem_from(problem);
        q.gpu = gpu;
        q.disable = disable;
        q.domain = domain;
        q.list = list;
        nlohmann::json out;
        {
          nb::gil_scoped_release unlocked;
          out = app::to_json(app::space(q));
        }
        return to_python(out);
      },
      "problem"_a, "gpu"_a, "disable"_a, "domain"_a, "list"_a);

  m.def(
      "source",
      [](const std::string& config, const nb::dict& problem, const std::string& gpu, bool check) {
        app::SourceRequest q;
        q.config = config;
        q.problem = problem_from(problem);
        q.gpu = gpu;
        q.check = check;
        return app::source(q);
      },
      "config"_a, "problem"_a, "gpu"_a, "check"_a);

  m.def("devices", [] { return to_python(app::devices()); });

  m.def(
      "attempts",
      [](const std::optional<std::string>& db, const std::string& device,
         const std::optional<nb::dict>& problem) {
        std::optional<gemmtune::Problem> p;
        if (problem) p = problem_from(*problem).problem();
        return to_python(app::attempt_rows(db_or_default(db), device, p));
      },
      "db"_a.none(), "device"_a, "problem"_a.none());

  m.def(
      "best",
      [](const std::optional<std::string>& db, const std::string& device) {
        return to_python(app::best_rows(db_or_default(db), device));
      },
      "db"_a.none(), "device"_a);

  m.def(
      "references",
      [](const std::optional<std::string>& db, const std::string& device) {
        return to_python(app::reference_rows(db_or_default(db), device));
      },
      "db"_a.none(), "device"_a);

  m.def(
      "import_attempts",
      [](const std::optional<std::string>& db, const std::string& path) {
        const gemmtune::CsvImportReport r = app::import_attempts(db_or_default(db), path);
        nb::dict out;
        out["imported"] = r.imported;
        out["rejected"] = r.rejected;
        out["unknown_columns"] = r.unknown_columns;
        return out;
      },
      "db"_a.none(), "path"_a);

  m.def(
      "counters_beside_model",
      [](const nb::dict& problem, const std::string& gpu, const std::string& config,
         const std::string& counters_json, int registers, const std::optional<std::string>& db,
         const std::string& calibration) {
        return to_python(app::counters_beside_model(problem_from(problem).problem(), gpu, config,
                                                    nlohmann::json::parse(counters_json), registers,
                                                    db_or_default(db), calibration));
      },
      "problem"_a, "gpu"_a, "config"_a, "counters_json"_a, "registers"_a, "db"_a.none(),
      "calibration"_a);

  m.def("default_db", [] { return gemmtune::Database::default_path(); });

  // The launch behind gemmtune.gemm(): column-major BLAS arguments the Python layer derived from
  // the arrays, device pointers as integers. The calling thread's CUDA device is switched to the
  // arrays' one, as the runtime dispatches on the current device.
  m.def(
      "gemm",
      [](char precision, char op_a, char op_b, std::int64_t m, std::int64_t n, std::int64_t k,
         double alpha_re, double alpha_im, std::uintptr_t a, std::int64_t lda, std::uintptr_t b,
         std::int64_t ldb, double beta_re, double beta_im, std::uintptr_t c, std::int64_t ldc,
         std::uintptr_t stream, int device) {
        gemmtune::python::launch({precision, op_a, op_b, m, n, k, alpha_re, alpha_im, a, lda, b,
                                  ldb, beta_re, beta_im, c, ldc, stream, device});
      },
      "precision"_a, "op_a"_a, "op_b"_a, "m"_a, "n"_a, "k"_a, "alpha_re"_a, "alpha_im"_a, "a"_a,
      "lda"_a, "b"_a, "ldb"_a, "beta_re"_a, "beta_im"_a, "c"_a, "ldc"_a, "stream"_a, "device"_a);
  gemmtune::python::define_torch_call(m);

  m.def("cuda_device_count", [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
  });
  // The CUDA device holding a pointer, for arrays whose interface does not say.
  m.def("pointer_device", [](std::uintptr_t ptr) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(ptr)) != cudaSuccess ||
        (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)) {
      cudaGetLastError();
      throw gemmtune::InputError("pointer " + std::to_string(ptr) + " is not CUDA device memory");
    }
    return attributes.device;
  });

  // Any DLPack array: (pointer, shape, strides in elements, dtype name, DLPack device type, id).
  m.def("dlpack_matrix", [](nb::handle x) {
    nb::ndarray<nb::ro> a = nb::cast<nb::ndarray<nb::ro>>(x);
    std::vector<std::int64_t> shape, strides;
    for (size_t i = 0; i < a.ndim(); ++i) {
      shape.push_back(std::int64_t(a.shape(i)));
      strides.push_back(a.stride(i));
    }
    const nb::dlpack::dtype t = a.dtype();
    using Code = nb::dlpack::dtype_code;
    struct Named {
      Code code;
      std::uint8_t bits;
      const char* name;
    };
    static constexpr Named kNames[] = {
        {Code::Float, 32, "float32"},     {Code::Float, 64, "float64"},
        {Code::Complex, 64, "complex64"}, {Code::Complex, 128, "complex128"},
        {Code::Float, 16, "float16"},     {Code::Bfloat, 16, "bfloat16"}};
    std::string dtype = "other";
    for (const Named& n : kNames)
      if (t.lanes == 1 && t.code == std::uint8_t(n.code) && t.bits == n.bits) dtype = n.name;
    return nb::make_tuple(std::uintptr_t(a.data()), shape, strides, dtype, a.device_type(),
                          a.device_id());
  });

  m.def("set_dispatch_database", &gemmtune::set_dispatch_database, "path"_a);
}
