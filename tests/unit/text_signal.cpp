// String and Binary values over a run (framework/src/run/text_signal.hpp): what a connection
// between two FMUs passes and results.csv records, checked against the rules it states (a hold
// between communication points, a rewind drops what came after, only what a reader can still
// reach is kept). The runs through FMUs are in fmu.cpp.
#include <doctest/doctest.h>

#include <string>

#include "run/text_signal.hpp"

TEST_CASE("text signal: holds values between communication points, goes back with a rewind and keeps only what readers can reach") {
  using stride::host::TextSignal;
  TextSignal s(false);
  const std::size_t owner = s.add_reader(), reader = s.add_reader();
  CHECK(s.at(0.0, 1e-9).serial == 0);  // nothing published: the reader keeps its start value
  s.publish(0.0, "a");
  s.publish(0.1, "a");  // unchanged: no new entry
  s.publish(0.2, "b");
  CHECK(s.entries() == 2);
  CHECK(s.at(0.15, 1e-9).value == "a");                   // held, never interpolated
  CHECK(s.at(0.2 - 1e-12, 1e-9).value == "b");            // one time within the tolerance
  CHECK(s.at(0.2, 1e-9, true).value == "a");              // strictly before: the value before the change
  CHECK(s.at(5.0, 1e-9).value == "b");
  // A repeated macro step: what was published after 0.1 is gone.
  s.forget_after(0.1);
  CHECK(s.at(0.3, 1e-9).value == "a");
  s.publish(0.2, "c");
  CHECK(s.at(0.25, 1e-9).value == "c");
  // A value that changes every step stays a few entries while the readers keep up...
  auto value = [](int k) { return std::string(100, char('a' + k % 26)); };
  for (int k = 3; k < 100000; ++k) {
    const double t = 0.1 * k;
    s.set_floor(owner, t - 0.1);
    s.set_floor(reader, t - 0.2);
    s.publish(t, value(k));
  }
  CHECK(s.entries() <= 3);
  CHECK(s.at(0.1 * 99997, 1e-9).value == value(99997));
  // ...and everything from a reader's floor on is kept (a snapshot it may go back to).
  s.set_floor(reader, 0.1 * 99999);
  for (int k = 100000; k < 100100; ++k) s.set_floor(owner, 0.1 * k), s.publish(0.1 * k, value(k));
  CHECK(s.entries() == 101);
  CHECK(s.at(0.1 * 99999, 1e-9).value == value(99999));
  CHECK(s.at(0.1 * 100050 + 0.05, 1e-9).value == value(100050));
}
