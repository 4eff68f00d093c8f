// ABI handshake between the Stride host and a plugin library.
//
// Every plugin library carries its handshake twice:
//  - as text in the ELF section ".stride_handshake" ("stride-plugin;abi=N;<fingerprint>"),
//    which the host reads from the file before loading it, so that a library it refuses never
//    runs any code (not even its static constructors);
//  - through its one exported C symbol, `stride_plugin`, returning a StrideHandshake. After
//    loading, the host reads `abi_version` first (its offset never changes), then
//    `struct_size`, then compares `fingerprint` field by field; only when all match does it
//    call `plugin()`.
// Plugins exchange C++ objects with the host, so compiler, standard library and the
// layout-affecting options of nlohmann::json must agree.
#pragma once

#include <cstdint>

#ifndef JSON_DIAGNOSTICS
#define JSON_DIAGNOSTICS 1
#endif

#include <Eigen/Core>
#include <nlohmann/json.hpp>

// 3: the handshake section (read before loading).
// 4: state snapshots (Subsystem/OdeSystem::can_save_state, save_state, restore_state).
// 5: messages (LogSource, the base of every plugin object; log.hpp), the table, matrix and
//    integer-list parameter types, input discontinuities (Subsystem, Integrator, Formulation),
//    OdeSystem::states(), Extrapolator::timing(), Plugin::implements().
// 6: PluginInfo::process_per_run (sweeps run many points in one process),
//    MultibodyModel::force_derivatives().
// 7: accuracy verdicts (Component::accuracy, Formulation::accuracy; a run whose subsystem
//    answers outside its bounds ends "inaccurate"), MultibodyModel::constraint_labels().
//    Events of ODE systems (OdeSystem::event_indicator_count, event_indicators, handle_event),
//    MultibodyModel::outputs_need_dynamics().
// 8: Inputs::output_read (outputs nobody reads in a run need not be computed).
#define STRIDE_ABI_VERSION 8

#define STRIDE_STR2(x) #x
#define STRIDE_STR(x) STRIDE_STR2(x)

#if defined(__clang__)
#define STRIDE_COMPILER "clang-" STRIDE_STR(__clang_major__) "." STRIDE_STR(__clang_minor__)
#elif defined(__GNUC__)
#define STRIDE_COMPILER "gcc-" STRIDE_STR(__GNUC__) "." STRIDE_STR(__GNUC_MINOR__)
#else
#define STRIDE_COMPILER "unknown"
#endif

#if defined(_GLIBCXX_RELEASE)
#define STRIDE_STDLIB "libstdc++-" STRIDE_STR(_GLIBCXX_RELEASE) "-cxx11abi" STRIDE_STR(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define STRIDE_STDLIB "libc++-" STRIDE_STR(_LIBCPP_VERSION)
#else
#define STRIDE_STDLIB "unknown"
#endif

// Semicolon-separated key=value pairs; the host names each key that differs.
#ifndef STRIDE_FINGERPRINT
#define STRIDE_FINGERPRINT                                                                  \
  "compiler=" STRIDE_COMPILER ";stdlib=" STRIDE_STDLIB ";cplusplus=" STRIDE_STR(__cplusplus) \
  ";json=" STRIDE_STR(NLOHMANN_JSON_VERSION_MAJOR) "." STRIDE_STR(NLOHMANN_JSON_VERSION_MINOR) \
  ";json_diagnostics=" STRIDE_STR(JSON_DIAGNOSTICS)                                          \
  ";eigen=" STRIDE_STR(EIGEN_WORLD_VERSION) "." STRIDE_STR(EIGEN_MAJOR_VERSION)               \
  ";sizeof_pointer=" STRIDE_STR(__SIZEOF_POINTER__) ";sizeof_long=" STRIDE_STR(__SIZEOF_LONG__) \
  ";sizeof_long_double=" STRIDE_STR(__SIZEOF_LONG_DOUBLE__) ";sizeof_size_t=" STRIDE_STR(__SIZEOF_SIZE_T__)
#endif

#if defined(_WIN32)
#define STRIDE_EXPORT __declspec(dllexport)
#else
#define STRIDE_EXPORT __attribute__((visibility("default")))
#endif

namespace stride {
class Plugin;
}

extern "C" {
struct StrideHandshake {
  std::uint32_t abi_version;  // must stay the first member
  std::uint32_t struct_size;  // sizeof(StrideHandshake) as the plugin saw it
  const char* fingerprint;    // STRIDE_FINGERPRINT of the plugin's build
  const stride::Plugin* (*plugin)();
};
}

// The handshake section; `abi` is the ABI version as a literal (a test plugin may lie).
#define STRIDE_HANDSHAKE_SECTION(abi)                                                          \
  extern "C" __attribute__((section(".stride_handshake"), used, visibility("hidden")))         \
  const char stride_handshake_text[] = "stride-plugin;abi=" STRIDE_STR(abi) ";" STRIDE_FINGERPRINT;

// Defines the library's single entry point for the plugin class `PluginClass`
// (default-constructible, derived from stride::Plugin), and its handshake section.
#define STRIDE_REGISTER_PLUGIN(PluginClass)                                            \
  STRIDE_HANDSHAKE_SECTION(STRIDE_ABI_VERSION)                                         \
  extern "C" STRIDE_EXPORT const StrideHandshake* stride_plugin() {                    \
    static const StrideHandshake handshake{                                            \
        STRIDE_ABI_VERSION, static_cast<std::uint32_t>(sizeof(StrideHandshake)),       \
        STRIDE_FINGERPRINT, []() -> const stride::Plugin* {                            \
          static const PluginClass instance;                                           \
          return &instance;                                                            \
        }};                                                                            \
    return &handshake;                                                                 \
  }
