#pragma once
// Exceptions that reach Python as the type PyTorch would raise.
// std::out_of_range -> IndexError, std::invalid_argument -> ValueError (pybind11 built-ins),
// tt::TypeError -> TypeError (translator in cpp/python/module.cpp), the rest -> RuntimeError.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tt {

struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };

namespace detail {
inline void stream_all(std::ostringstream&) {}
template <class T, class... R> void stream_all(std::ostringstream& s, const T& v, const R&... r) {
  s << v;
  stream_all(s, r...);
}
}  // namespace detail

template <class... A> std::string str_cat(const A&... a) {
  std::ostringstream s;
  detail::stream_all(s, a...);
  return s.str();
}

std::string shape_str(const std::vector<int64_t>& shape);  // "[2, 3]"

}  // namespace tt

// TT_CHECK(cond, "op: message ", value, ...) throws RuntimeError with the joined message.
#define TT_CHECK_AS(EXC, COND, ...) \
  do { if (!(COND)) throw EXC(::tt::str_cat(__VA_ARGS__)); } while (0)
#define TT_CHECK(COND, ...) TT_CHECK_AS(std::runtime_error, COND, __VA_ARGS__)
#define TT_CHECK_INDEX(COND, ...) TT_CHECK_AS(std::out_of_range, COND, __VA_ARGS__)
#define TT_CHECK_VALUE(COND, ...) TT_CHECK_AS(std::invalid_argument, COND, __VA_ARGS__)
#define TT_CHECK_TYPE(COND, ...) TT_CHECK_AS(::tt::TypeError, COND, __VA_ARGS__)
