// The rows of results.csv. Internal to the host.
//
// Each subsystem fills its columns of the rows whose times its last step passed (its own
// values at those times where it has them, DenseOutputs; otherwise linear interpolation
// between the step's ends); a row is written once every recording subsystem has
// filled it. Rows reach the file whole (RowFile), at least every 50 ms of wall time and at the
// end: a crash loses at most that much, and never leaves half a row; the SIGUSR1 handler of a
// supervised run (g_pending_rows) may write the complete rows still in memory. Under iterative
// coupling and rejected macro steps, rows after the last accepted communication point wait
// (hold_after/accept), and a repeated macro step takes back what its subsystems filled
// (rewind).
//
// String and Binary columns (Node::text_cols) hold, in each row, the value at the latest
// communication point of their subsystem at or before the row's time (text is never
// interpolated), written as CSV text in double quotes; Binary values as hexadecimal digits.
//
// Event rows (record/event_rows; one recording subsystem, no repeated macro steps, so every
// row is written as soon as its subsystem fills it): a step that ends at an event (EventOutputs)
// adds, at the event's time, a row with the values just before it and one with those after;
// where a row of the grid falls on the event's time, it is the row after and only the row
// before is added ahead of it.
//
// An observer of the loop's steps (run/observer.hpp): a subsystem's step is seen when it
// passes the time of the next row it fills. One thread. The row ring has room for `capacity`
// rows (what the longest step spans) and only grows (allocating) when a step spans more.
#pragma once

#include <filesystem>
#include <limits>
#include <vector>

#include "core/event_outputs.hpp"
#include "run/observer.hpp"
#include "run/row_file.hpp"
#include "run/run_state.hpp"
#include "core/text_signal.hpp"

namespace stride::host {

struct RunBeacon;

class Recorder final : public Observer {
 public:
  // Creates results.csv with its header. Throws Stop.
  Recorder(const Graph& g, const std::filesystem::path& csv, double t0, double interval, double end,
           std::size_t capacity, RunBeacon* beacon, bool event_rows = false);
  ~Recorder() override;
  unsigned events() const override { return steps; }
  double time_of(std::size_t k) const { return grid_.time(k); }
  // Times (t_prev, t] of node n passed: fill its columns.
  void passed(NodeState& n) override;
  // Rows after t wait until accepted().
  void hold_after(double t) override { accepted_ = t; }
  void accepted(double t) override;
  // Node n is back at an earlier state whose next row to fill was `next`.
  void rewound(NodeState& n, std::size_t next) override;
  std::size_t rows_written() const { return file_.rows(); }
  // Every complete row reaches the file (before summary.json claims them). Throws Stop when
  // the disk refuses.
  void finish() { commit(true); }
  // A real-time run: rows reach the file from a writer thread (RowFile::write_in_background),
  // never by a write on the stepping path. Before initialize().
  void write_in_background() { file_.write_in_background(); }

 private:
  struct Row {
    std::vector<double> values;
    std::size_t filled;
  };
  // String and Binary columns of row k (numbers only: none). Beside the rows, not in them: a
  // Row stays 32 bytes, and finding row k in the ring a shift.
  std::vector<std::string>& texts_of(std::size_t k) { return row_texts_[k % row_texts_.size()]; }
  static std::string header(const Graph& g);
  bool records(const NodeState& n) const { return n.node->recorded || recording_nodes_ == 0; }
  // n wakes the recorder when its time reaches that of row k; the exact test is passed()'s
  // (tk <= t + 1e-9 dt), this one is a little earlier so that it never misses a row.
  // With event rows, after every step (an event may end any of them).
  void wake_for(NodeState& n, std::size_t k) const {
    const double tk = time_of(k);
    if (!(tk > end_ + 1e-9 * dt_)) n.observe_at = std::min(n.observe_at, event_rows_ ? n.t : tk - 2e-9 * dt_);
  }
  void format_complete_rows();
  void put_row(double t, const std::vector<double>& values);
  [[gnu::cold, gnu::noinline]] void put_text_row(double t, std::size_t k);  // row k, with String and Binary columns
  void fill_texts(std::size_t k, const Node& d, double tk, bool before = false);
  void put_event_row(const NodeState& n, std::span<const double> y, bool before = false);
  void expose();
  void commit(bool last = false);
  void grow();
  double t0_, dt_, end_;
  RecordGrid grid_;
  bool event_rows_;
  std::size_t ncols_;
  RunBeacon* beacon_;
  RowFile file_;
  std::size_t recording_nodes_ = 0;
  std::vector<const TextSignal*> text_col_;  // per column: its text, null for a number (empty: none)
  bool texts_ = false;                        // any text column
  std::vector<Row> rows_;
  std::vector<std::vector<std::string>> row_texts_;  // as rows_, with text columns only
  std::size_t formatted_ = 0;
  double accepted_ = std::numeric_limits<double>::infinity();
};

}  // namespace stride::host
