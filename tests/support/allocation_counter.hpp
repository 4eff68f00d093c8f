// Counts heap allocations in the whole process (plugins, Eigen and SUNDIALS included) by
// interposing glibc's malloc family, or through AddressSanitizer's allocation hook when it owns
// malloc (scripts/sanitize). Include in exactly one file of a test executable.
#pragma once

#include <atomic>
#include <cstddef>

namespace stride_test {
inline std::atomic<long> allocations{0};
}

#if defined(__SANITIZE_ADDRESS__)
#define STRIDE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRIDE_TEST_ASAN 1
#endif
#endif

#ifdef STRIDE_TEST_ASAN
#include <sanitizer/allocator_interface.h>

namespace stride_test {
inline void count_allocation(const volatile void*, std::size_t) { allocations.fetch_add(1, std::memory_order_relaxed); }
inline void ignore_free(const volatile void*) {}
inline const bool hooks_installed = __sanitizer_install_malloc_and_free_hooks(count_allocation, ignore_free) != 0;
}  // namespace stride_test
#else
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
#endif
