// Result<T>: a value or an error message. The way every layer reports an
// error that has no place in a module's text (a flag, an option, a table, a
// file, a query) without throwing; errors about a module's text are
// Diagnostics (ir/diagnostics.h). See CONTRIBUTING.md, "Errors".
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace shardlab {

/// A human-readable error: what went wrong, where, and what was expected.
struct Error {
  std::string message;
};

/// Either a value of type T or an Error.
template <class T> class Result {
public:
  Result(T value) : data_(std::move(value)) {}
  Result(Error error) : data_(std::move(error)) {}

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T &value() const { return std::get<0>(data_); }
  T &value() { return std::get<0>(data_); }
  const T &operator*() const { return value(); }
  T &operator*() { return value(); }
  const T *operator->() const { return &value(); }
  T *operator->() { return &value(); }
  const Error &error() const { return std::get<1>(data_); }

private:
  std::variant<T, Error> data_;
};

/// Success or an Error, for a function whose result is its effect.
using Status = Result<std::monostate>;
inline Status success() { return Status(std::monostate{}); }

/// Builds an Error from a message.
inline Error makeError(std::string message) {
  return Error{std::move(message)};
}

} // namespace shardlab
