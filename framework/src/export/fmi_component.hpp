// The state machine an exported FMU's entry points share (fmi2_binary.cpp, fmi3_binary.cpp):
// the phases of the FMI standard around one ExportedInstance, every exception turned into an
// error status with its reason through the importer's logger. Internal to the FMU binaries.
#pragma once

#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "export/instance.hpp"

namespace stride::host::fmu_export {

enum class Phase { instantiated, initializing, stepping, failed, terminated };

inline const char* phase_name(Phase p) {
  switch (p) {
    case Phase::instantiated: return "instantiated";
    case Phase::initializing: return "initialization mode";
    case Phase::stepping: return "step mode";
    case Phase::failed: return "failed (an earlier call returned an error)";
    case Phase::terminated: return "terminated";
  }
  return "?";
}

// `Status` is fmi2Status or fmi3Status: OK and Error are what the state machine returns.
template <class Status, Status OK, Status Error>
struct Component {
  std::string name, token, resources;
  // The importer's logger: (error?, category, message).
  std::function<void(bool, const char*, const std::string&)> sink;
  bool logging = false;
  Phase phase = Phase::instantiated;
  double start = 0.0;
  std::unique_ptr<ExportedInstance> x;

  void log(bool is_error, const char* category, const std::string& message) const {
    if (sink) sink(is_error, category, message);
  }
  Status error(const std::string& call, const std::string& message) {
    log(true, "logStatusError", call + ": " + message);
    return Error;
  }
  // Runs f, turning every exception into Error with its message.
  template <class F>
  Status guarded(const char* call, F&& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      return error(call, e.what());
    } catch (...) {
      return error(call, "unknown exception");
    }
  }
  bool in(const char* call, std::initializer_list<Phase> allowed) {
    for (Phase p : allowed)
      if (phase == p) return true;
    error(call, std::string("not allowed in state ") + phase_name(phase));
    return false;
  }
  // The instance from the resources: false (and the reason logged) when it cannot be made.
  bool make(const char* call) {
    return guarded(call, [&] {
             // Warnings and errors always, the other messages with debug logging on.
             x = std::make_unique<ExportedInstance>(
                 folder_of_uri(resources), token, [this](LogLevel level, const std::string& message) {
                   if (level >= LogLevel::warning || logging)
                     log(level >= LogLevel::error,
                         level >= LogLevel::error     ? "logStatusError"
                         : level >= LogLevel::warning ? "logStatusWarning"
                                                      : "logInfo",
                         message);
                 });
             start = x->start();
             return OK;
           }) == OK;
  }
  Status setup(const char* call, double start_time, bool stop_defined, double stop) {
    return guarded(call, [&] {
      if (std::abs(start_time - x->start()) > 1e-12 * std::max(1.0, std::abs(start_time)))
        return error(call, "start time " + std::to_string(start_time) + " s: the exported experiment starts at " +
                               std::to_string(x->start()) + " s");
      if (stop_defined && stop > x->end() * (1 + 1e-12) + 1e-12)
        return error(call, "stop time " + std::to_string(stop) + " s is past the exported experiment's end " +
                               std::to_string(x->end()) + " s");
      start = start_time;
      return OK;
    });
  }
  Status exit_initialization(const char* call) {
    if (!in(call, {Phase::initializing})) return Error;
    const Status s = guarded(call, [&] {
      x->initialize(start);
      return OK;
    });
    phase = s == OK ? Phase::stepping : Phase::failed;
    return s;
  }
  Status do_step(const char* call, double t, double h) {
    if (!in(call, {Phase::stepping})) return Error;
    const Status s = guarded(call, [&] {
      x->do_step(t, h);
      return OK;
    });
    if (s != OK) phase = Phase::failed;
    return s;
  }
  Status terminate(const char* call) {
    if (!in(call, {Phase::stepping, Phase::failed, Phase::initializing})) return Error;
    phase = Phase::terminated;
    return OK;
  }
  // FMU state: a new ExportedInstance::State in *state (or the one there, reused), put back,
  // freed.
  Status get_state(const char* call, void** state) {
    if (!state) return error(call, "no state pointer");
    if (!in(call, {Phase::stepping})) return Error;
    return guarded(call, [&] {
      auto* s = static_cast<ExportedInstance::State*>(*state);
      std::unique_ptr<ExportedInstance::State> made;
      if (!s) made = std::make_unique<ExportedInstance::State>(), s = made.get();
      x->save(*s);
      made.release();
      *state = s;
      return OK;
    });
  }
  Status set_state(const char* call, const void* state) {
    if (!state) return error(call, "no state");
    if (!in(call, {Phase::stepping})) return Error;
    return guarded(call, [&] {
      x->restore(*static_cast<const ExportedInstance::State*>(state));
      return OK;
    });
  }
  static Status free_state(void** state) {
    if (!state) return Error;
    delete static_cast<ExportedInstance::State*>(*state);
    *state = nullptr;
    return OK;
  }
  Status reset(const char* call) {
    x.reset();
    phase = Phase::failed;  // until the new instance stands
    if (!make(call)) return Error;
    phase = Phase::instantiated;
    return OK;
  }
};

}  // namespace stride::host::fmu_export
