// String and Binary values over a run: an FMU's String or Binary variable as it was at the FMU's
// communication points, what a connection passes to another FMU's input and what results.csv
// records. Internal to the host: the FMU subsystems publish (fmi/), the destination FMUs and the
// recorder read (run/recorder.hpp); the graph builder wires them (TextPorts).
//
// Text is not a number: it travels beside the numeric ports, never through an extrapolator.
//   publish(t, v)  after the owner reached t: what was published after t is dropped (a repeated
//                  macro step goes back), then v is kept when it differs from the value before
//   at(t)          the value at the latest communication point at or before t (a hold: never
//                  interpolated, never extrapolated); before = true: strictly before t
// Values are kept as changes, so a value that never changes is one entry. Each reader says the
// earliest time it may still read (set_floor: its last read, or its snapshot's time when
// earlier); publish() drops the entries no reader can reach any more. Serials tell a reader
// whether the value changed since it last read, without comparing texts. One thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <stride/abi.hpp>  // nlohmann::json with the SDK's options

namespace stride::host {

class TextSignal {
 public:
  struct Entry {
    double t = -std::numeric_limits<double>::infinity();
    std::string value;
    std::uint64_t serial = 0;  // 0: nothing published yet
  };
  // binary: an FMI 3 Binary (raw bytes; results.csv writes them as hexadecimal text).
  explicit TextSignal(bool binary) : binary_(binary) {}
  bool binary() const { return binary_; }

  // A reader of the signal: its index for set_floor(). Until it sets one, nothing is dropped.
  std::size_t add_reader() {
    floors_.push_back(-std::numeric_limits<double>::infinity());
    return floors_.size() - 1;
  }
  void set_floor(std::size_t reader, double t) { floors_[reader] = t; }

  void publish(double t, std::string_view value) {
    while (!entries_.empty() && entries_.back().t >= t) entries_.pop_back();
    if (entries_.empty() || entries_.back().value != value) entries_.push_back({t, std::string(value), ++serial_});
    // Keep the entry in force at the earliest time a reader may still ask for, and the later ones.
    double floor = std::numeric_limits<double>::infinity();
    for (double f : floors_) floor = std::min(floor, f);
    std::size_t drop = 0;
    while (drop + 1 < entries_.size() && entries_[drop + 1].t <= floor) ++drop;
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<long>(drop));
  }

  // The owner went back to t.
  void forget_after(double t) {
    while (!entries_.empty() && entries_.back().t > t) entries_.pop_back();
  }

  // The entry in force at t (times within tol are one time); the first one for a time before
  // it (a reader before anything was published reads the empty entry).
  const Entry& at(double t, double tol, bool before = false) const {
    static const Entry none;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (before ? it->t < t - tol : it->t <= t + tol) return *it;
    return entries_.empty() ? none : entries_.front();
  }
  std::size_t entries() const { return entries_.size(); }

 private:
  std::deque<Entry> entries_;
  std::vector<double> floors_;
  std::uint64_t serial_ = 0;
  bool binary_;
};

// A String or Binary port of a subsystem (an FMU's variable of either type), declared when the
// subsystem is created, beside its numeric ports (PortSpec) and sized for its parameters as they
// are. An input is what a connection feeds; any other may be recorded and may feed an input.
struct TextPortSpec {
  std::string name;
  std::vector<std::string> aliases;  // other names of it (FMI 3)
  bool binary = false;               // raw bytes (results.csv writes them as hexadecimal text)
  std::string causality;             // the FMI word: input, output, local, parameter, ...
  bool array = false;                // an FMI 3 array: connections may take element ranges
  std::size_t size = 1;              // its elements for these parameters
  bool feedthrough = false;          // an output that depends on inputs at the same time
  std::string doc;                   // for `plugins describe`
  nlohmann::json start;              // the manifest's value, else the FMU's (null: none)
  bool input() const { return causality == "input"; }
  const char* type() const { return binary ? "Binary" : "String"; }
};

// A subsystem with String or Binary ports (an FMU): the graph builder asks for the signal of
// each element it records or connects, and gives an input's element the signal that feeds it.
// The names and elements are the subsystem's TextPortSpecs, checked by the builder.
class TextPorts {
 public:
  virtual ~TextPorts() = default;
  // Element `element` of variable `name`, published at t0 and after every step from now on (one
  // signal per element).
  virtual std::shared_ptr<TextSignal> text_output(const std::string& name, std::size_t element) = 0;
  // Element `element` of input `name` takes the value `source` holds at the time the FMU's
  // inputs are set.
  virtual void text_input(const std::string& name, std::size_t element, std::shared_ptr<TextSignal> source) = 0;
};

}  // namespace stride::host
