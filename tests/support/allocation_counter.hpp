// Counts heap allocations in the whole process (plugins, Eigen and SUNDIALS included) by
// interposing glibc's malloc family. Include in exactly one file of a test executable.
#pragma once

#include <atomic>
#include <cstddef>

namespace stride_test {
inline std::atomic<long> allocations{0};
}

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t n) {
  stride_test::allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  stride_test::allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  stride_test::allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
}
