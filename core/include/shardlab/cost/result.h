// Result<T>: a value or an error message, the cost model's way of reporting
// bad user input (tables, options, queries) without throwing.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace shardlab::cost {

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

/// Builds an Error from a message.
inline Error MakeError(std::string message) {
  return Error{std::move(message)};
}

} // namespace shardlab::cost
