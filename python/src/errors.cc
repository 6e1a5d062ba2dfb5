// pixpath.Error: every pixpath failure raised into Python, carrying pixpath's Error fields.
#include <string>

#include "pypixpath.h"

namespace pixpath::python {
namespace {

PyObject* g_error = nullptr;    // pixpath.Error (a new reference kept for the process)
PyObject* g_warning = nullptr;  // pixpath.DecodeWarning

// The ErrorCode's own name ("InvalidArgument"), for matching in Python code.
const char* code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::OutOfRange: return "OutOfRange";
    case ErrorCode::LimitExceeded: return "LimitExceeded";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::CorruptData: return "CorruptData";
    case ErrorCode::Truncated: return "Truncated";
    case ErrorCode::ReadOnly: return "ReadOnly";
    case ErrorCode::WrongMemoryKind: return "WrongMemoryKind";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::Io: return "Io";
    case ErrorCode::Protocol: return "Protocol";
    case ErrorCode::Unavailable: return "Unavailable";
    case ErrorCode::Cancelled: return "Cancelled";
    case ErrorCode::Busy: return "Busy";
    case ErrorCode::Internal: return "Internal";
  }
  return "Internal";
}

}  // namespace

void register_errors(py::module_& m) {
  py::dict ns;
  ns["__doc__"] = py::str(
      "A pixpath failure. Attributes: code (e.g. 'CorruptData', 'ReadOnly', 'Unavailable'),\n"
      "coding (the subject: the coding such as 'jpeg', or the object such as 'picture'),\n"
      "stage (what it was doing, e.g. 'decode', 'read header') and reason (in words).");
  g_error = PyErr_NewException("pixpath.Error", PyExc_Exception, ns.ptr());
  if (!g_error) throw py::error_already_set();
  m.add_object("Error", py::handle(g_error));
  g_warning = PyErr_NewExceptionWithDoc(
      "pixpath.DecodeWarning",
      "A recoverable decode problem (e.g. a JPEG that ends early): the picture is usable.",
      PyExc_UserWarning, nullptr);
  if (!g_warning) throw py::error_already_set();
  m.add_object("DecodeWarning", py::handle(g_warning));
}

void raise_error(const Error& error) {
  py::object exc = py::reinterpret_steal<py::object>(
      PyObject_CallFunction(g_error, "s", error.message().c_str()));
  if (!exc) throw py::error_already_set();
  exc.attr("code") = py::str(code_name(error.code()));
  exc.attr("coding") = py::str(error.subject());
  exc.attr("stage") = py::str(error.stage());
  exc.attr("reason") = py::str(error.reason());
  PyErr_SetObject(g_error, exc.ptr());
  throw py::error_already_set();
}

void warn(const Error& warning) {
  if (PyErr_WarnEx(g_warning, warning.message().c_str(), 2) != 0) {
    throw py::error_already_set();
  }
}

}  // namespace pixpath::python
