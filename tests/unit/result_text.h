// For tests of functions that return a Result: the error's message, so a
// failed REQUIRE says why.
#pragma once

#include "shardlab/support/result.h"

#include <string>

/// The error of a failed Result ("" when it succeeded).
template <class T> std::string errorOf(const shardlab::Result<T> &result) {
  return result ? std::string() : result.error().message;
}
