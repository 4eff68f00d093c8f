// String and Binary values over a run (framework/src/core/text_signal.hpp): what a connection
// between two FMUs passes and results.csv records, checked against the rules it states (a hold
// between communication points, a rewind drops what came after, only what a reader can still
// reach is kept); and text fields of results.csv written and read back (run/row_file.hpp, as
// sweeps read results). The runs through FMUs are in fmu.cpp.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run/row_file.hpp"
#include "core/text_signal.hpp"

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

TEST_CASE("text signal: CSV text fields are read back as written, whatever bytes they hold") {
  const std::vector<std::string> texts = {"",         "plain",       "a,b",          "\"",          "\"\"",
                                          "line\nbreak", "cr\r\nlf",     std::string(1, '\0'), "trailing\"",
                                          std::string(100000, ',') + "\n\""};
  std::string csv = "time,s,x\n";
  for (std::size_t i = 0; i < texts.size(); ++i) {
    stride::host::put_number(csv, 0.5 * double(i));
    csv += ',';
    stride::host::put_text(csv, texts[i]);
    csv += ",1.25\n";
  }
  std::istringstream in(csv);
  std::vector<std::vector<std::string>> records;
  stride::host::each_csv_record(in, [&](const std::vector<std::string>& f) { records.push_back(f); });
  REQUIRE(records.size() == texts.size() + 1);
  CHECK(records[0] == std::vector<std::string>{"time", "s", "x"});
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(i);
    REQUIRE(records[i + 1].size() == 3);
    CHECK(records[i + 1][1] == texts[i]);
    CHECK(records[i + 1][2] == "1.25");
  }
  // A row cut short (a crash while writing) is the fields it has, unterminated.
  std::istringstream cut("time,s\n0,\"ab");
  std::vector<std::size_t> sizes;
  stride::host::each_csv_record(cut, [&](const std::vector<std::string>& f) { sizes.push_back(f.size()); });
  CHECK(sizes == std::vector<std::size_t>{2, 2});
}
