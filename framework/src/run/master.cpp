// The co-simulation masters (Jacobi, Gauss–Seidel, multirate slowest-/fastest-first), the
// results writer and the run summary.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "graph/graph.hpp"
#include "stride/host/run/run.hpp"
#include "run/run_log.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/supervise.hpp"

namespace stride::host {
namespace fs = std::filesystem;

double on_grid(double t, double t0, double h, double taken) {
  const double k = std::floor((t - t0) / h + 0.5);  // t >= t0
  const double tk = t0 + k * h;
  // Within round-off of the step actually taken: a step shortened to land on a communication
  // point (or a step far longer than the run) must not be pulled back to its grid point.
  // (Two doubles' spacing at t is round-off at any step.)
  return std::abs(t - tk) <= std::max(1e-9 * std::min(h, taken), 4.5e-16 * std::abs(t)) ? tk : t;
}

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::completed: return "completed";
    case RunStatus::diverged: return "diverged";
    case RunStatus::failed: return "failed";
    case RunStatus::interrupted: return "interrupted";
  }
  return "?";
}

namespace {

// Ends the run: status and message.
struct Stop {
  RunStatus status;
  std::string message;
};

// A CSV file written in whole rows: rows are appended to buffer() and reach the file by
// write(2), when commit() is called; a write the disk refuses cuts the file back to its last
// complete row and throws Stop (later rows are not written).
class RowFile {
 public:
  RowFile(const fs::path& path, const std::string& header) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Stop{RunStatus::failed, "cannot write " + path.string() + ": " + std::strerror(errno)};
    buffer_.reserve(kBufferBytes + 4096);
    buffer_ = header + "\n";
    commit();
  }
  ~RowFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;

  std::string& buffer() { return buffer_; }
  int fd() const { return fd_; }
  std::size_t rows() const { return committed_rows_; }
  bool lost() const { return lost_; }
  // A commit is due: the buffer is large or 50 ms of wall time have passed since the last one.
  bool due() const {
    return buffer_.size() >= kBufferBytes || std::chrono::steady_clock::now() - last_commit_ >= std::chrono::milliseconds(50);
  }
  void commit() {
    last_commit_ = std::chrono::steady_clock::now();
    if (buffer_.empty() || lost_) return;
    std::size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
        // Keep the complete rows that reached the file and cut the rest: the file ends with a
        // whole row.
        const auto last = buffer_.rfind('\n', done ? done - 1 : 0);
        const std::size_t keep = done && last != std::string::npos ? last + 1 : 0;
        committed_rows_ += static_cast<std::size_t>(std::count(buffer_.begin(), buffer_.begin() + static_cast<long>(keep), '\n'));
        if (committed_bytes_ == 0 && keep > 0) --committed_rows_;  // the header line
        committed_bytes_ += keep;
        if (::ftruncate(fd_, static_cast<off_t>(committed_bytes_)) != 0) {
        }
        buffer_.clear();
        lost_ = true;
        throw Stop{RunStatus::failed, "cannot write " + path_.string() + ": " + why + "; the " +
                                          std::to_string(committed_rows_) + " rows written before are kept"};
      }
      done += static_cast<std::size_t>(n);
    }
    const bool header = committed_bytes_ == 0;
    committed_bytes_ += buffer_.size();
    committed_rows_ += static_cast<std::size_t>(std::count(buffer_.begin(), buffer_.end(), '\n')) - (header ? 1 : 0);
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kBufferBytes = 1 << 16;
  fs::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::size_t committed_rows_ = 0, committed_bytes_ = 0;
  bool lost_ = false;  // the disk refused: later rows are not written
  std::chrono::steady_clock::time_point last_commit_{};
};

void put_number(std::string& out, double v) {
  char num[32];
  out.append(num, static_cast<std::size_t>(std::to_chars(num, num + sizeof num, v, std::chars_format::general, 12).ptr - num));
}

// Rows of the results table, filled by each subsystem as its time passes the record times;
// a row is written once every recording subsystem has filled it. Rows go to the file whole
// (RowFile), at least every 50 ms of wall time and at the end: a crash loses at most that
// much, and never leaves half a row. Under iterative coupling, rows after the last accepted
// communication point wait (hold_after/accept), and a repeated macro step takes back what its
// subsystems filled (rewind).
class Recorder {
 public:
  Recorder(Graph& g, const fs::path& csv, double t0, double interval, double end, std::size_t capacity,
           RunBeacon* beacon)
      : g_(g), t0_(t0), dt_(interval), end_(end), ncols_(g.columns.size()), beacon_(beacon),
        file_(csv, header(g)) {
    for (auto& n : g.nodes)
      if (!n->record_cols.empty()) ++recording_nodes_;
    rows_.assign(capacity, Row{std::vector<double>(ncols_, 0.0), 0});
  }
  ~Recorder() { g_pending_rows.fd = -1; }
  double time_of(std::size_t k) const { return t0_ + static_cast<double>(k) * dt_; }
  // Times (t_prev, t] of node n passed: fill its columns by linear interpolation.
  void advance(Node& n) {
    if (n.record_cols.empty() && recording_nodes_ > 0) return;
    for (;;) {
      const std::size_t k = n.next_record;
      const double tk = time_of(k);
      if (tk > n.t + 1e-9 * dt_ || tk > end_ + 1e-9 * dt_) break;
      if (k >= formatted_ + rows_.size()) grow();
      Row& r = rows_[k % rows_.size()];
      const double span = n.t - n.t_prev;
      const double w = span > 0 ? std::clamp((tk - n.t_prev) / span, 0.0, 1.0) : 1.0;
      for (std::size_t i = 0; i < n.record_cols.size(); ++i) {
        const std::size_t e = n.record_elem[i];
        r.values[n.record_cols[i]] = (1 - w) * n.y_prev[e] + w * n.y[e];
      }
      ++r.filled;
      ++n.next_record;
      format_complete_rows();
    }
  }
  void hold_after(double t) { accepted_ = t; }
  void accept(double t) {
    accepted_ = t;
    format_complete_rows();
  }
  // Node n is back at an earlier state whose next row to fill was `next`.
  void rewind(Node& n, std::size_t next) {
    if (n.record_cols.empty() && recording_nodes_ > 0) return;
    for (std::size_t k = next; k < n.next_record; ++k) --rows_[k % rows_.size()].filled;
    n.next_record = next;
  }
  std::size_t rows_written() const { return file_.rows(); }
  // Every complete row reaches the file (before summary.json claims them). Throws Stop when
  // the disk refuses.
  void finish() { commit(); }

 private:
  struct Row {
    std::vector<double> values;
    std::size_t filled;
  };
  static std::string header(const Graph& g) {
    std::string h = "time";
    for (const auto& c : g.columns) h += "," + c;
    return h;
  }
  void format_complete_rows() {
    const std::size_t need = std::max<std::size_t>(recording_nodes_, 1);
    bool wrote = false;
    std::string& buffer = file_.buffer();
    while (rows_[formatted_ % rows_.size()].filled >= need && time_of(formatted_) <= accepted_ + 1e-9 * dt_) {
      Row& r = rows_[formatted_ % rows_.size()];
      g_pending_rows.busy = 1;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      put_number(buffer, time_of(formatted_));
      for (double v : r.values) {
        buffer += ',';
        put_number(buffer, v);
      }
      buffer += '\n';
      expose();
      r.filled = 0;
      ++formatted_;
      wrote = true;
    }
    if (wrote && file_.due()) commit();
  }
  // The buffer as the SIGUSR1 handler may write it (whole rows only).
  void expose() {
    g_pending_rows.fd = file_.fd();
    g_pending_rows.data = file_.buffer().data();
    g_pending_rows.size = file_.buffer().size();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_pending_rows.busy = 0;
  }
  void commit() {
    g_pending_rows.busy = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    try {
      file_.commit();
    } catch (...) {
      expose();
      throw;
    }
    if (beacon_) beacon_->rows.store(file_.rows(), std::memory_order_relaxed);
    expose();
  }
  void grow() {
    std::vector<Row> bigger(rows_.size() * 2, Row{std::vector<double>(ncols_, 0.0), 0});
    for (std::size_t k = formatted_; k < formatted_ + rows_.size(); ++k) bigger[k % bigger.size()] = rows_[k % rows_.size()];
    rows_ = std::move(bigger);
  }
  Graph& g_;
  double t0_, dt_, end_;
  std::size_t ncols_;
  RunBeacon* beacon_;
  RowFile file_;
  std::size_t recording_nodes_ = 0;
  std::vector<Row> rows_;
  std::size_t formatted_ = 0;
  double accepted_ = std::numeric_limits<double>::infinity();
};

class Progress {
 public:
  Progress(bool enabled, double t0, double t1) : on_(enabled), tty_(isatty(2)), t0_(t0), t1_(t1) {
    start_ = last_ = std::chrono::steady_clock::now();
  }
  bool enabled() const { return on_; }
  void update(double t) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    const double frac = std::clamp((t - t0_) / (t1_ - t0_), 0.0, 1.0);
    if (tty_) {
      if (since < 0.1) return;
      const int width = 40, filled = static_cast<int>(frac * width);
      std::fprintf(stderr, "\r[%.*s%*s] %5.1f%%  t = %.4g s", filled, "========================================",
                   width - filled, "", 100 * frac, t);
    } else {
      if (since < 5.0 && frac < next_) return;
      std::fprintf(stderr, "progress: %5.1f%%  t = %.6g s  wall %.1f s\n", 100 * frac, t,
                   std::chrono::duration<double>(now - start_).count());
      while (next_ <= frac) next_ += 0.1;
    }
    last_ = now;
  }
  void done(const char* status, double t) {
    if (!on_) return;
    if (tty_) std::fprintf(stderr, "\r%*s\r", 80, "");
    std::fprintf(stderr, "%s at t = %.6g s\n", status, t);
  }

 private:
  bool on_, tty_;
  double t0_, t1_, next_ = 0.1;
  std::chrono::steady_clock::time_point start_, last_;
};

// The adaptive macro step (StepControlConfig): before a macro step it notes each paired bond's
// energies, after it turns the residual the step added into the next step.
class MacroStepControl {
 public:
  void begin(const Graph& g, const CouplingConfig& c) {
    sc_ = c.step_control;
    H_ = c.macro_step;
    start_.assign(g.bond_pairs.size(), {});
  }
  // The end of the macro step from T: H, but no sliver under min_step left before the end.
  double next(double T, double end) const {
    double Tn = T + H_;
    if (end - Tn < sc_.min_step) Tn = end - T <= sc_.max_step ? end : T + 0.5 * (end - T);
    return Tn;
  }
  void before(const Graph& g) {
    for (std::size_t i = 0; i < g.bond_pairs.size(); ++i) {
      const BondPair& p = g.bond_pairs[i];
      start_[i] = {p.a->bonds[p.bond_a].energy, p.b->bonds[p.bond_b].energy};
    }
  }
  // After the macro step from T to Tn: false when it is to be repeated (may_reject, ε > 1 and
  // the step above min_step), with the shorter step set.
  bool after(const Graph& g, double T, double Tn, bool may_reject, RowFile* log) {
    double err = 0.0;
    for (std::size_t i = 0; i < g.bond_pairs.size(); ++i) {
      const BondPair& p = g.bond_pairs[i];
      const double ea = p.a->bonds[p.bond_a].energy - start_[i][0], eb = p.b->bonds[p.bond_b].energy - start_[i][1];
      err = std::max(err, std::abs(ea + eb) / (sc_.absolute_tolerance + sc_.tolerance * std::max(std::abs(ea), std::abs(eb))));
    }
    if (!std::isfinite(err)) err = std::numeric_limits<double>::max();
    const double taken = Tn - T;
    // (H_, not the step taken: T + H - T differs from H by round-off.)
    const bool redo = may_reject && err > 1 && H_ > sc_.min_step;
    if (log) {
      std::string& b = log->buffer();
      put_number(b, T);
      b += ',';
      put_number(b, taken);
      b += ',';
      put_number(b, err);
      b += redo ? ",0\n" : ",1\n";
      if (log->due()) log->commit();
    }
    if (redo) {
      ++rejected_;
      H_ = std::max(sc_.min_step, taken * std::clamp(sc_.safety / std::sqrt(err), 0.2, 0.9));
      return false;
    }
    ++steps_;
    smallest_ = std::min(smallest_, taken);
    largest_ = std::max(largest_, taken);
    largest_err_ = std::max(largest_err_, err);
    if (err > 1) ++over_;
    if (H_ <= sc_.min_step) ++at_min_;
    // PI control of ε ~ H^2 (Gustafsson's k_I = 0.3/2, k_P = 0.4/2).
    const double e = std::max(err, 1e-10);
    if (prev_ < 0) prev_ = e;
    const double factor = sc_.safety * std::pow(e, -0.15) * std::pow(prev_ / e, 0.2);
    prev_ = e;
    H_ = std::clamp(H_ * std::clamp(factor, 0.2, 2.0), sc_.min_step, sc_.max_step);
    return true;
  }
  json summary(double span) const {
    return {{"tolerance", sc_.tolerance},
            {"absolute_tolerance_J", sc_.absolute_tolerance},
            {"safety", sc_.safety},
            {"min_step", sc_.min_step},
            {"max_step", sc_.max_step},
            {"macro_steps", steps_},
            {"mean_step", steps_ ? span / double(steps_) : 0.0},
            {"smallest_step", steps_ ? smallest_ : 0.0},
            {"largest_step", largest_},
            {"steps_over_tolerance", over_},
            {"rejected_steps", rejected_},
            {"steps_at_min_step", at_min_},
            {"largest_error_ratio", largest_err_},
            {"per_macro_step", "steps.csv"}};
  }

 private:
  StepControlConfig sc_;
  double H_ = 0.0;
  double prev_ = -1.0;
  std::vector<std::array<double, 2>> start_;
  long steps_ = 0, over_ = 0, at_min_ = 0, rejected_ = 0;
  double smallest_ = std::numeric_limits<double>::infinity(), largest_ = 0.0, largest_err_ = 0.0;
};

class Master {
 public:
  Master(Graph& g, const CouplingConfig& c, double residual_limit, Recorder& rec, Progress& prog,
         const volatile int* stop, RunBeacon* beacon, RowFile* macro_log)
      : g_(g),
        c_(c),
        rec_(rec),
        prog_(prog),
        stop_(stop),
        beacon_(beacon ? beacon : &own_beacon_),
        // Relative to the macro step, but never below the spacing of doubles at the end time.
        eps_(std::max(1e-9 * std::min(c.macro_step, c.end - c.start),
                      9e-16 * std::max(std::abs(c.start), std::abs(c.end)))),
        residual_limit_(residual_limit),
        macro_log_(macro_log) {}

  void initialize() {
    const double t0 = c_.start;
    for (auto& n : g_.nodes) n->input_view.prepare();
    for (auto& n : g_.nodes) guarded(*n, [&] { n->sub->initialize(t0); });
    for (auto& n : g_.nodes) n->t = n->t_prev = t0;
    // Feedthrough outputs need their inputs: start every connection from zeros, evaluate every
    // subsystem once (outputs without feedthrough are exact then), and re-evaluate a subsystem
    // in pass k only when it has a feedthrough output at the end of a chain of k feedthrough
    // outputs: its inputs are exact after pass k - 1. A graph without feedthrough takes no
    // further pass; each pass visits only the subsystems of its depth.
    beacon_->phase.store(1);
    pushed_.assign(g_.links.size(), {});
    for (auto& l : g_.links) {
      std::fill(l->src->y.begin(), l->src->y.end(), 0.0);
      push_initial(*l, t0);
    }
    const auto passes = feedthrough_passes();
    for (const auto& pass : passes)
      for (Node* n : pass) {
        read_outputs(*n);
        for (Link* l : n->out_links) push_initial(*l, t0);
      }
    // Consistent initialization (e.g. static equilibrium), then fresh outputs.
    for (Node* n : g_.order) {
      guarded(*n, [&] { n->sub->equilibrate(t0); });
      read_outputs(*n);
      for (Link* l : n->out_links) push_initial(*l, t0);
    }
    for (Node* n : g_.order) {
      read_outputs(*n);
      for (Link* l : n->out_links) push_initial(*l, t0);
      n->y_prev = n->y;
      for (Bond& b : n->bonds) {
        b.power = bond_power(*n, b);
        b.rectangle = true;
        for (Link* l : n->in_links[b.input])
          if (l->dst_offset < b.element + b.width && b.element < l->dst_offset + l->width)
            b.rectangle = b.rectangle && std::isfinite(l->extrapolator->holds_from());
      }
    }
    pushed_ = {};
    for (auto& n : g_.nodes) {
      rec_.advance(*n);
      guarded(*n, [&] { n->energy0 = n->sub->energy(); });
    }
  }

  // Who is evaluated in each initialization pass: pass 0 every subsystem (in the order), pass k
  // those with a feedthrough output whose longest chain of feedthrough outputs before it
  // (through connections) has k - 1 links, i.e. depth k. Depths by Kahn's algorithm over the
  // feedthrough outputs, O(subsystems + connections · outputs).
  std::vector<std::vector<Node*>> feedthrough_passes() const {
    std::vector<std::vector<Node*>> passes(1, g_.order);
    // Feedthrough outputs of each node, and the output port each link reads.
    std::vector<std::vector<std::size_t>> ft(g_.nodes.size());
    std::vector<std::size_t> first(g_.nodes.size() + 1, 0);
    for (auto& n : g_.nodes) {
      for (std::size_t i = 0; i < n->ports.size(); ++i)
        if (n->ports[i].direction == Direction::output && n->ports[i].feedthrough) ft[n->index].push_back(i);
    }
    for (std::size_t k = 0; k < g_.nodes.size(); ++k) first[k + 1] = first[k] + ft[k].size();
    const std::size_t nv = first.back();
    if (nv == 0) return passes;
    auto vertex = [&](const Node* n, std::size_t port) -> long {
      for (std::size_t j = 0; j < ft[n->index].size(); ++j)
        if (ft[n->index][j] == port) return static_cast<long>(first[n->index] + j);
      return -1;
    };
    // Edge: a feedthrough output feeding a subsystem -> each feedthrough output of that subsystem.
    std::vector<std::vector<std::size_t>> next(nv);
    std::vector<std::size_t> indegree(nv, 0);
    for (auto& l : g_.links) {
      const Node& s = *l->src;
      const std::size_t at = s.output_port_at(l->src_offset);
      const long from = at < s.ports.size() ? vertex(&s, at) : -1;
      if (from < 0) continue;
      for (std::size_t j = 0; j < ft[l->dst->index].size(); ++j) {
        next[static_cast<std::size_t>(from)].push_back(first[l->dst->index] + j);
        ++indegree[first[l->dst->index] + j];
      }
    }
    std::vector<std::size_t> depth(nv, 1), queue;
    for (std::size_t v = 0; v < nv; ++v)
      if (indegree[v] == 0) queue.push_back(v);
    for (std::size_t q = 0; q < queue.size(); ++q)
      for (std::size_t w : next[queue[q]]) {
        depth[w] = std::max(depth[w], depth[queue[q]] + 1);
        if (--indegree[w] == 0) queue.push_back(w);
      }
    if (queue.size() < nv) {
      // A feedthrough cycle (the graph check refuses these): as many passes as subsystems.
      passes.assign(g_.nodes.size() + 2, g_.order);
      return passes;
    }
    std::size_t longest = 0;
    for (std::size_t d : depth) longest = std::max(longest, d);
    passes.resize(longest + 1);
    for (Node* n : g_.order) {
      std::vector<std::size_t> ds;
      for (std::size_t j = 0; j < ft[n->index].size(); ++j) ds.push_back(depth[first[n->index] + j]);
      std::sort(ds.begin(), ds.end());
      ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
      for (std::size_t d : ds) passes[d].push_back(n);
    }
    return passes;
  }

  void run() {
    beacon_->phase.store(2);
    switch (c_.scheme) {
      case Scheme::jacobi:
        c_.iteration.enabled ? iterative_loop(false) : c_.step_control.reject ? rejecting_loop() : macro_loop(false);
        break;
      case Scheme::gauss_seidel: c_.iteration.enabled ? iterative_loop(true) : macro_loop(true); break;
      case Scheme::multirate: multirate_loop(); break;
    }
  }

  // Adaptive macro step, for summary.json (time_reached: the run may have stopped early).
  json step_control_summary() const { return control_.summary(time_reached() - c_.start); }

  // Iterative coupling, for summary.json.
  json iteration_summary() const {
    const IterationConfig& ic = c_.iteration;
    return {{"max_iterations", ic.max_iterations},
            {"relaxation", ic.relaxation},
            {"tolerance", ic.tolerance},
            {"absolute_tolerance", ic.absolute_tolerance},
            {"macro_steps", iter_.macro_steps},
            {"passes", iter_.passes},
            {"mean_passes_per_macro_step", iter_.macro_steps ? double(iter_.passes) / double(iter_.macro_steps) : 0.0},
            {"most_passes_in_a_macro_step", iter_.most_passes},
            {"unconverged_macro_steps", iter_.unconverged},
            {"first_unconverged_time", iter_.first_unconverged},
            {"largest_final_residual", iter_.largest_final},
            {"per_macro_step", "iterations.csv"}};
  }

  double time_reached() const {
    double t = c_.end;
    for (auto& n : g_.nodes) t = std::min(t, n->t);
    return t;
  }

 private:
  // Every call into plugin code goes through here: the beacon says who is inside, and
  // whatever it throws ends the run with a report naming it.
  template <class Fn>
  void guarded(Node& n, Fn&& fn) {
    beacon_->node.store(n.index, std::memory_order_relaxed);
    beacon_->node_time.store(n.t, std::memory_order_relaxed);
    try {
      fn();
    } catch (const StepFailure& e) {
      throw Stop{RunStatus::diverged, "subsystem \"" + n.name + "\" (" + n.plugin + ") failed at t = " +
                                          std::to_string(n.t) + " s: " + e.what()};
    } catch (const PluginError& e) {
      throw Stop{RunStatus::failed, "subsystem \"" + n.name + "\": " + e.what()};
    } catch (const Stop&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw Stop{RunStatus::failed, "out of memory in plugin \"" + n.plugin + "\" of subsystem \"" + n.name + "\""};
    } catch (const std::exception& e) {
      throw Stop{RunStatus::failed, "plugin \"" + n.plugin + "\" of subsystem \"" + n.name + "\" threw: " + e.what()};
    } catch (...) {
      throw Stop{RunStatus::failed, "plugin \"" + n.plugin + "\" of subsystem \"" + n.name +
                                        "\" threw an exception that is not a std::exception"};
    }
    beacon_->node.store(-1, std::memory_order_relaxed);
  }
  template <class Fn>
  void guarded(Link& l, Fn&& fn) {
    beacon_->link.store(l.index, std::memory_order_relaxed);
    try {
      fn();
    } catch (const Stop&) {
      throw;
    } catch (const std::exception& e) {
      throw Stop{RunStatus::failed, "extrapolator \"" + l.config.extrapolator.plugin + "\" of connection " +
                                        l.config.from_text + " -> " + l.config.to_text + " threw: " + e.what()};
    } catch (...) {
      throw Stop{RunStatus::failed, "extrapolator \"" + l.config.extrapolator.plugin + "\" of connection " +
                                        l.config.from_text + " -> " + l.config.to_text +
                                        " threw an exception that is not a std::exception"};
    }
    beacon_->link.store(-1, std::memory_order_relaxed);
  }

  void push(Link& l, double t) {
    if (t > l.last_push) guarded(l, [&] { l.push_now(t); });
  }
  // During initialization: a connection's extrapolator restarts from the source's outputs at
  // t0 only when they differ from what it was last given.
  void push_initial(Link& l, double t) {
    auto& last = pushed_[static_cast<std::size_t>(l.index)];
    const double* y = l.src->y.data() + l.src_offset;
    if (last.size() == l.width && std::equal(last.begin(), last.end(), y)) return;
    reset_and_push(l, t);
    last.assign(y, y + l.width);
  }
  void reset_and_push(Link& l, double t) {
    guarded(l, [&] {
      l.extrapolator->reset(l.width);
      l.last_push = -std::numeric_limits<double>::infinity();
      l.push(t);
    });
  }

  void read_outputs(Node& n) {
    guarded(n, [&] { n.sub->outputs(n.y); });
    for (std::size_t i = 0; i < n.y.size(); ++i)
      if (!std::isfinite(n.y[i])) {
        const std::size_t p = n.output_port_at(i);
        const std::string port = p < n.ports.size() ? n.ports[p].name : "";
        throw Stop{RunStatus::diverged, "subsystem \"" + n.name + "\": output \"" + port + "\" is not finite at t = " +
                                            std::to_string(n.t) + " s"};
      }
  }

  void check_monitors(Node& n) {
    for (const auto& b : n.bounds) {
      const double v = n.y[b.element];
      if (v < b.min || v > b.max)
        throw Stop{RunStatus::diverged, "output " + b.label + " = " + std::to_string(v) + " left its declared bounds [" +
                                            std::to_string(b.min) + ", " + std::to_string(b.max) + "] at t = " +
                                            std::to_string(n.t) + " s"};
    }
  }
  void check_residuals() {
    for (const auto& p : g_.bond_pairs) {
      const double r = p.residual();
      if (!(std::abs(r) <= residual_limit_))
        throw Stop{RunStatus::diverged, "energy residual of power bond " + p.name() + " is " + std::to_string(r) +
                                            " J, beyond the limit " + std::to_string(residual_limit_) + " J at t = " +
                                            std::to_string(time_reached()) + " s"};
    }
  }

  double bond_power(Node& n, Bond& b) {
    auto u = n.input_view.at(b.input, n.t);
    double p = 0;
    for (std::size_t i = 0; i < b.width; ++i) p += u[b.element + i] * n.y[b.output_offset + i];
    return b.sign * p;
  }

  // One step of node n of at most h.
  void step(Node& n, double h) {
    if (stop_ && *stop_) throw Stop{RunStatus::interrupted, "interrupted by signal " + signal_name(*stop_)};
    n.t_prev = n.t;
    std::swap(n.y_prev, n.y);
    double t_new = n.t;
    guarded(n, [&] {
      if (n.inputs_renewed) n.sub->input_discontinuity(n.t);
      t_new = n.sub->step(n.t, h);
    });
    n.inputs_renewed = false;
    if (!(t_new > n.t) || t_new > n.t + h * (1 + 1e-12))
      throw Stop{RunStatus::failed, "subsystem \"" + n.name + "\" (" + n.plugin + ") returned time " +
                                        std::to_string(t_new) + " from a step at t = " + std::to_string(n.t) +
                                        " of at most " + std::to_string(h) + " s"};
    n.t = on_grid(t_new, c_.start, n.step, t_new - n.t_prev);
    ++n.steps;
    read_outputs(n);
    if (!defer_monitors_) {
      check_monitors(n);
    } else if (!violation_) {
      try {
        check_monitors(n);
      } catch (const Stop& s) {
        violation_ = s;
      }
    }
    for (Bond& b : n.bonds) {
      const double p = bond_power(n, b);
      b.energy += (b.rectangle ? p : 0.5 * (p + b.power)) * (n.t - n.t_prev);
      b.power = p;
    }
    rec_.advance(n);
  }

  // Every subsystem is at the communication point T: the progress, and the energy residuals.
  void reached(double T) {
    beacon_->time_reached.store(T, std::memory_order_relaxed);
    check_residuals();
    if (prog_.enabled()) prog_.update(time_reached());
  }

  // Advances n until it reaches `target` (Jacobi / Gauss–Seidel); false when it is there already.
  bool advance_to(Node& n, double target) {
    if (!(n.t < target - eps_)) return false;
    do {
      // The manifest's step exactly when it ends on the target within round-off (n.t is on the
      // grid, and snapped below), the remainder only when the target falls inside the step.
      double h = n.step;
      if (c_.align && n.t + h > target + eps_) h = target - n.t;
      step(n, h);
      if (std::abs(n.t - target) <= eps_) n.t = target;
    } while (n.t < target - eps_);
    return true;
  }

  void macro_loop(bool sequential) {
    double T = c_.start;
    long k = 0;
    // Nodes that stepped in this macro step: only their outputs are new. A slow subsystem
    // on a long step (align: false) is skipped for most macro steps.
    std::vector<Node*> stepped;
    stepped.reserve(g_.order.size());
    const bool controlled = c_.step_control.enabled;
    if (controlled) control_.begin(g_, c_);
    while (T < c_.end - eps_) {
      ++k;
      const double Tn = controlled ? control_.next(T, c_.end)
                                   : std::min(c_.start + static_cast<double>(k) * c_.macro_step, c_.end);
      if (controlled) control_.before(g_);
      stepped.clear();
      for (Node* n : g_.order)
        if (advance_to(*n, Tn)) {
          if (sequential)
            for (Link* l : n->out_links) push(*l, n->t);
          else
            stepped.push_back(n);
        }
      for (Node* n : stepped)
        for (Link* l : n->out_links) push(*l, n->t);
      if (controlled) control_.after(g_, T, Tn, false, macro_log_);
      T = Tn;
      reached(T);
    }
  }

  // Jacobi with the adaptive macro step and rejection: every macro step from snapshots, repeated
  // shorter while the energy residual it adds is over the tolerance. Inputs come from the
  // extrapolators, which get the outputs once a step is accepted; rows of results.csv and
  // output bounds are taken from the accepted step only.
  void rejecting_loop() {
    std::vector<NodeSnapshot> snapshots(g_.nodes.size());
    std::vector<char> renewed(g_.nodes.size());
    defer_monitors_ = true;
    control_.begin(g_, c_);
    double T = c_.start;
    while (T < c_.end - eps_) {
      rec_.hold_after(T);
      for (auto& n : g_.nodes) {
        save(*n, snapshots[static_cast<std::size_t>(n->index)]);
        renewed[static_cast<std::size_t>(n->index)] = n->inputs_renewed;
      }
      double Tn = T;
      for (;;) {
        violation_.reset();
        Tn = control_.next(T, c_.end);
        control_.before(g_);
        for (Node* n : g_.order) advance_to(*n, Tn);
        if (control_.after(g_, T, Tn, true, macro_log_)) break;
        for (auto& n : g_.nodes) {
          restore(*n, snapshots[static_cast<std::size_t>(n->index)]);
          n->inputs_renewed = renewed[static_cast<std::size_t>(n->index)];
        }
      }
      for (Node* n : g_.order)
        for (Link* l : n->out_links) push(*l, n->t);
      rec_.accept(Tn);
      if (violation_) throw *violation_;
      T = Tn;
      reached(T);
    }
  }

  // A subsystem's state at a communication point, for repeating a macro step: the host's part
  // (time, outputs, record position, bond energies) and the subsystem's own snapshot.
  struct NodeSnapshot {
    double t = 0.0, t_prev = 0.0;
    long steps = 0;
    std::size_t next_record = 0;
    std::vector<double> y, y_prev, bond_energy, bond_power;
    std::unique_ptr<SavedState> state;
  };
  void save(Node& n, NodeSnapshot& s) {
    s.t = n.t, s.t_prev = n.t_prev, s.steps = n.steps, s.next_record = n.next_record;
    s.y = n.y, s.y_prev = n.y_prev;
    s.bond_energy.resize(n.bonds.size());
    s.bond_power.resize(n.bonds.size());
    for (std::size_t i = 0; i < n.bonds.size(); ++i) s.bond_energy[i] = n.bonds[i].energy, s.bond_power[i] = n.bonds[i].power;
    guarded(n, [&] { n.sub->save_state(s.state); });
    if (!s.state)
      throw Stop{RunStatus::failed, "subsystem \"" + n.name + "\" (" + n.plugin + ") saved no state at t = " + std::to_string(n.t) + " s"};
  }
  void restore(Node& n, const NodeSnapshot& s) {
    guarded(n, [&] { n.sub->restore_state(*s.state); });
    rec_.rewind(n, s.next_record);
    n.t = s.t, n.t_prev = s.t_prev, n.steps = s.steps;
    n.y = s.y, n.y_prev = s.y_prev;
    for (std::size_t i = 0; i < n.bonds.size(); ++i) n.bonds[i].energy = s.bond_energy[i], n.bonds[i].power = s.bond_power[i];
  }
  // The source's output as the destination reads it (unit conversion applied).
  static void source_value(const Link& l, std::span<double> out) {
    const double* y = l.src->y.data() + l.src_offset;
    for (std::size_t i = 0; i < l.width; ++i) out[i] = l.convert ? y[i] * l.scale + l.offset : y[i];
  }
  static void set_iterating(Link& l, bool on) {
    l.iterating = on;
    ++l.pushes;  // the value cached for a time is stale
    l.dst->inputs_renewed = true;
    l.dst->input_view.forget(l.dst_input);
  }

  // Jacobi / Gauss–Seidel with every macro step repeated until the interface converges (see
  // IterationConfig). Pass 1 is the plain scheme (extrapolated inputs); pass k > 1 restarts
  // every subsystem from its snapshot with straight-line inputs to the relaxed iterates. Under
  // Gauss–Seidel a connection to a later subsystem in the order carries the value its source
  // produced in the same pass (that is what makes the scheme sequential); only the connections
  // back up the order are relaxed. Rows of results.csv inside a macro step are written once it
  // is accepted.
  void iterative_loop(bool sequential) {
    const IterationConfig& ic = c_.iteration;
    std::vector<NodeSnapshot> snapshots(g_.nodes.size());
    std::vector<std::size_t> place(g_.nodes.size());
    for (std::size_t i = 0; i < g_.order.size(); ++i) place[static_cast<std::size_t>(g_.order[i]->index)] = i;
    std::vector<char> forward(g_.links.size(), 0);
    std::size_t widest = 1;
    for (auto& l : g_.links) {
      forward[static_cast<std::size_t>(l->index)] =
          sequential && place[static_cast<std::size_t>(l->src->index)] < place[static_cast<std::size_t>(l->dst->index)];
      l->iter_start.assign(l->width, 0.0);
      l->iter_end.assign(l->width, 0.0);
      widest = std::max(widest, l->width);
    }
    std::vector<double> y(widest);
    defer_monitors_ = true;
    double T = c_.start;
    long k = 0;
    while (T < c_.end - eps_) {
      ++k;
      const double Tn = std::min(c_.start + static_cast<double>(k) * c_.macro_step, c_.end);
      rec_.hold_after(T);
      for (auto& n : g_.nodes) save(*n, snapshots[static_cast<std::size_t>(n->index)]);
      // The interface at T, and the extrapolators' prediction at Tn (what pass 1 uses).
      for (auto& l : g_.links) {
        guarded(*l, [&] {
          l->extrapolator->evaluate(T, l->iter_start);
          l->extrapolator->evaluate(Tn, l->iter_end);
        });
        l->iter_t0 = T;
        l->iter_t1 = Tn;
      }
      int pass = 0;
      bool converged = false;
      double ratio = 0.0, largest = 0.0;
      for (;;) {
        ++pass;
        violation_.reset();  // an output bound crossed by an iterate that is not accepted is no divergence
        if (pass > 1)
          for (auto& n : g_.nodes) restore(*n, snapshots[static_cast<std::size_t>(n->index)]);
        for (Node* n : g_.order) {
          advance_to(*n, Tn);
          if (sequential)
            for (Link* l : n->out_links)
              if (forward[static_cast<std::size_t>(l->index)]) {
                source_value(*l, l->iter_end);
                set_iterating(*l, true);
              }
        }
        // Each connection's new end value against the one its reader was given.
        converged = true;
        ratio = largest = 0.0;
        for (auto& l : g_.links) {
          source_value(*l, y);
          for (std::size_t i = 0; i < l->width; ++i) {
            const double r = std::abs(y[i] - l->iter_end[i]);
            const double bound = ic.absolute_tolerance + ic.tolerance * std::abs(y[i]);
            largest = std::max(largest, r);
            if (r > bound) {
              converged = false;
              ratio = std::max(ratio, bound > 0 ? r / bound : std::numeric_limits<double>::infinity());
            } else if (bound > 0) {
              ratio = std::max(ratio, r / bound);
            }
          }
        }
        if (converged || pass >= ic.max_iterations) break;
        for (auto& l : g_.links) {
          if (!forward[static_cast<std::size_t>(l->index)]) {
            source_value(*l, y);
            for (std::size_t i = 0; i < l->width; ++i) l->iter_end[i] += ic.relaxation * (y[i] - l->iter_end[i]);
          }
          set_iterating(*l, true);
        }
      }
      if (!converged && ic.stop_unconverged) {
        // The run ends at T, the last converged communication point: nothing of this macro
        // step reaches results.csv.
        for (auto& n : g_.nodes) restore(*n, snapshots[static_cast<std::size_t>(n->index)]);
        log_iteration(Tn, pass, largest, ratio, converged);
        throw Stop{RunStatus::diverged, "iterative coupling did not converge in " + std::to_string(pass) +
                                            " passes in the macro step from t = " + std::to_string(T) + " to " +
                                            std::to_string(Tn) + " s: the largest interface change was " +
                                            std::to_string(largest) + " (" + std::to_string(ratio) +
                                            " times the tolerance); the results end at t = " + std::to_string(T) + " s"};
      }
      // Accepted: the extrapolators get the samples at Tn, the rows up to Tn are written.
      for (auto& l : g_.links)
        if (l->iterating) set_iterating(*l, false);
      for (Node* n : g_.order)
        for (Link* l : n->out_links) push(*l, n->t);
      rec_.accept(Tn);
      log_iteration(Tn, pass, largest, ratio, converged);
      if (violation_) throw *violation_;
      T = Tn;
      reached(T);
    }
  }

  // One macro step of iterative coupling: the counts of summary.json and a row of iterations.csv.
  void log_iteration(double Tn, int pass, double largest, double ratio, bool converged) {
    ++iter_.macro_steps;
    iter_.passes += pass;
    iter_.most_passes = std::max(iter_.most_passes, pass);
    iter_.largest_final = std::max(iter_.largest_final, largest);
    if (!converged && iter_.unconverged++ == 0) iter_.first_unconverged = Tn;
    if (!macro_log_) return;
    std::string& b = macro_log_->buffer();
    put_number(b, Tn);
    b += ',' + std::to_string(pass) + ',';
    put_number(b, largest);
    b += ',';
    put_number(b, ratio);
    b += converged ? ",1\n" : ",0\n";
    if (macro_log_->due()) macro_log_->commit();
  }

  // Every subsystem takes its own steps; outputs are pushed after every step.
  // Slowest-first: the subsystem furthest behind steps next, the slower one first on ties,
  // so slow subsystems run ahead and fast ones interpolate them. Fastest-first: the one whose
  // step ends earliest goes next, the faster one first on ties, so slow subsystems step
  // behind and interpolate the fast ones (González 2011, Table 1).
  void multirate_loop() {
    const bool sf = c_.synchronization == Synchronization::slowest_first;
    // The subsystems that have not reached the end, in a binary heap ordered by who steps next:
    // O(log N) per step instead of a scan of every subsystem. Keys within eps_ are a tie (they
    // are the same grid time up to round-off), broken by the step and then by the subsystem's
    // place in the manifest, as a scan in that order would. The heap holds the keys, so that
    // ordering it reads one array instead of every subsystem it compares.
    struct Entry {
      double key;
      double step;
      Node* node;
    };
    auto key = [&](const Node* n) { return sf ? n->t : n->t + n->step; };
    auto later = [&](const Entry& a, const Entry& b) {  // a steps after b
      if (a.key > b.key + eps_) return true;
      if (a.key < b.key - eps_) return false;
      if (a.step != b.step) return sf ? a.step < b.step : a.step > b.step;
      return a.node->index > b.node->index;
    };
    std::vector<Entry> heap;
    heap.reserve(g_.nodes.size());
    for (auto& n : g_.nodes)
      if (n->t < c_.end - eps_) heap.push_back({key(n.get()), n->step, n.get()});
    std::make_heap(heap.begin(), heap.end(), later);
    // Residuals and the time reached are checked every 64 steps, or once per step of every
    // subsystem when there are more: the check visits every bond and subsystem.
    const long check_every = std::max<long>(64, static_cast<long>(g_.nodes.size()));
    long count = 0;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Node* next = heap.back().node;
      step(*next, std::min(next->step, c_.end - next->t));
      for (Link* l : next->out_links) push(*l, next->t);
      if (next->t < c_.end - eps_) {
        heap.back().key = key(next);
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
      if (++count % check_every == 0) {
        beacon_->time_reached.store(time_reached(), std::memory_order_relaxed);
        check_residuals();
        if (prog_.enabled()) prog_.update(time_reached());
      }
    }
  }

  Graph& g_;
  const CouplingConfig& c_;
  Recorder& rec_;
  Progress& prog_;
  const volatile int* stop_;
  RunBeacon own_beacon_;
  RunBeacon* beacon_;
  double eps_;
  double residual_limit_;
  std::vector<std::vector<double>> pushed_;  // initialization: the values each connection was last given
  RowFile* macro_log_;  // iterations.csv or steps.csv
  MacroStepControl control_;
  // Iterative coupling: output bounds are judged on the accepted pass of a macro step only.
  bool defer_monitors_ = false;
  std::optional<Stop> violation_;
  struct {
    long macro_steps = 0, passes = 0, unconverged = 0;
    int most_passes = 0;
    double largest_final = 0.0;
    double first_unconverged = std::numeric_limits<double>::quiet_NaN();
  } iter_;
};

json statistics_of(Node& n) {
  try {
    return n.sub->statistics();
  } catch (const std::exception& e) {
    return json{{"error", e.what()}};
  } catch (...) {
    return json{{"error", "an exception that is not a std::exception"}};
  }
}

}  // namespace

json running_summary(const Experiment& ex) {
  const Manifest& m = ex.manifest();
  json order = json::array();
  for (const auto& sc : m.subsystems) order.push_back(sc.name);
  return {{"status", "running"},
          {"message", "the run has not ended (or its process was killed before it could say how it ended): "
                      "nothing here is a result"},
          {"pid", ::getpid()},
          {"manifest", fs::absolute(m.file).string()},
          {"start_time", m.coupling.start},
          {"end_time", m.coupling.end},
          {"coupling", m.document.value("coupling", json::object())},
          {"results", "results.csv"},
          {"subsystem_order", order}};
}

// Wall time per simulated second (below 1: faster than real time); the time reached counts, so a
// run that stopped early is not flattered.
static void add_real_time_factor(json& s, const RunResult& res, double start) {
  if (const double simulated = res.end_time_reached - start; simulated > 0.0)
    s["real_time_factor"] = res.wall_time / simulated;
}

RunResult run(Experiment& ex, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Manifest& m = ex.manifest();
  Graph& g = ex.graph();
  RunResult res;
  res.output = opt.output.empty() ? m.output : opt.output;
  std::optional<OutputFolder> own_folder;
  const OutputFolder* folder = opt.folder;
  if (!folder) folder = &own_folder.emplace(res.output, running_summary(ex));  // throws OutputError
  res.output = folder->path();
  RunBeacon* beacon = opt.beacon;
  ::signal(SIGXFSZ, SIG_IGN);
  // Plugin messages from now on (and those from creating the plugins) go to log.txt.
  g.log->open(folder->log());  // a file-size limit is a refused write, not a killed process

  // Rows a step spans are filled before they are written (see Limits::max_buffered_rows).
  const double span = m.coupling.end - m.coupling.start;
  const double interval = m.record.interval > 0 ? m.record.interval : std::min(m.coupling.macro_step, span);
  const double longest_macro = m.coupling.step_control.enabled ? m.coupling.step_control.max_step : m.coupling.macro_step;
  double widest = std::min(longest_macro, span);
  for (auto& n : g.nodes) {
    const bool clipped = m.coupling.scheme != Scheme::multirate && m.coupling.align;
    widest = std::max(widest, std::min(clipped ? std::min(n->step, longest_macro) : n->step, span));
  }
  const std::size_t capacity =
      static_cast<std::size_t>(std::min(std::ceil(widest / interval), Limits::max_buffered_rows)) * 2 + 8;

  Progress prog(opt.progress, m.coupling.start, m.coupling.end);
  std::optional<Recorder> rec;
  std::optional<RowFile> macro_log;  // iterations.csv or steps.csv
  std::optional<Master> master;
  try {
    rec.emplace(g, folder->results(), m.coupling.start, interval, m.coupling.end, capacity, beacon);
    if (m.coupling.iteration.enabled)
      macro_log.emplace(folder->path() / "iterations.csv", "time,passes,largest_change,change_over_tolerance,converged");
    else if (m.coupling.step_control.enabled)
      macro_log.emplace(folder->path() / "steps.csv", "time,macro_step,residual_over_tolerance,accepted");
    master.emplace(g, m.coupling, m.monitor.energy_residual_limit, *rec, prog, opt.stop, beacon,
                   macro_log ? &*macro_log : nullptr);
    const auto init0 = std::chrono::steady_clock::now();
    master->initialize();
    res.initialization_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - init0).count();
    const auto step0 = std::chrono::steady_clock::now();
    master->run();
    res.stepping_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - step0).count();
    rec->finish();
    res.status = RunStatus::completed;
  } catch (const Stop& s) {
    res.status = s.status;
    res.message = s.message;
  } catch (const std::bad_alloc&) {
    res.status = RunStatus::failed;
    res.message = "out of memory";
  } catch (const std::exception& e) {
    res.status = RunStatus::failed;
    res.message = e.what();
  } catch (...) {
    res.status = RunStatus::failed;
    res.message = "an exception that is not a std::exception";
  }
  if (rec && res.status != RunStatus::completed) {
    try {
      rec->finish();
    } catch (const Stop& s) {
      res.message += "; " + s.message;
    }
  }
  if (macro_log) {
    try {
      macro_log->commit();
    } catch (const Stop& s) {
      if (res.status == RunStatus::completed) res.status = RunStatus::failed, res.message = s.message;
      else res.message += "; " + s.message;
    }
  }
  if (beacon) beacon->phase.store(3);
  res.end_time_reached = m.coupling.end;
  for (auto& n : g.nodes) res.end_time_reached = std::min(res.end_time_reached, n->t);
  res.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  prog.done(to_string(res.status), res.end_time_reached);
  g.log->close();

  json s;
  s["status"] = to_string(res.status);
  if (!res.message.empty()) s["message"] = res.message;
  s["manifest"] = fs::absolute(m.file).string();
  s["start_time"] = m.coupling.start;
  s["end_time"] = m.coupling.end;
  s["end_time_reached"] = res.end_time_reached;
  s["wall_time_s"] = res.wall_time;
  add_real_time_factor(s, res, m.coupling.start);
  s["coupling"] = m.document.value("coupling", json::object());
  s["results"] = "results.csv";
  s["rows"] = rec ? rec->rows_written() : 0;
  json subs = json::object();
  // Energy balance (Rahikainen 2020 §2.3.2, system level): for each subsystem that reports its
  // stored energy, the change over the run against the energy that entered through its power
  // bonds; the difference was made or lost inside it (sources, dissipation, integration error).
  double total_energy = 0, total_change = 0, total_bond_in = 0;
  bool energy_known = true;
  for (auto& n : g.nodes) {
    json j;
    j["plugin"] = n->plugin;
    j["step"] = n->step;
    j["steps"] = n->steps;
    j["time_reached"] = n->t;
    j["statistics"] = statistics_of(*n);
    double bond_in = 0;
    for (auto& b : n->bonds) bond_in += b.energy;
    try {
      json r = n->sub->report();
      if (!r.empty()) j["report"] = r;
      const double e = n->sub->energy();
      if (std::isfinite(e)) {
        j["energy_J"] = e;
        total_energy += e;
        if (std::isfinite(n->energy0)) {
          j["energy_balance"] = {{"initial_J", n->energy0},
                                 {"change_J", e - n->energy0},
                                 {"bond_energy_in_J", bond_in},
                                 {"internal_J", e - n->energy0 - bond_in}};
          total_change += e - n->energy0;
          total_bond_in += bond_in;
        } else {
          energy_known = false;
        }
      } else {
        energy_known = false;
      }
    } catch (const std::exception& e) {
      j["report_error"] = e.what();
      energy_known = false;
    } catch (...) {
      j["report_error"] = "an exception that is not a std::exception";
      energy_known = false;
    }
    const RunLog::Counts said = g.log->counts(n->name);
    j["messages"] = {{"warnings", said.warnings}, {"errors", said.errors}, {"left_out", said.suppressed}};
    if (!n->bonds.empty()) {
      json bonds = json::array();
      for (auto& b : n->bonds) bonds.push_back({{"bond", b.name}, {"energy_in_J", b.energy}});
      j["bonds"] = bonds;
    }
    subs[n->name] = j;
  }
  s["subsystems"] = subs;
  {
    const RunLog::Counts all = g.log->total();
    const LogConfig& lc = g.log->config();
    s["log"] = {{"file", "log.txt"},
                {"level", to_string(lc.level)},
                {"stderr_level", to_string(lc.stderr_level)},
                {"repeats", lc.repeats},
                {"warnings", all.warnings},
                {"errors", all.errors},
                {"left_out", all.suppressed}};
    if (auto e = g.log->error(); !e.empty()) s["log"]["error"] = e;
  }
  if (master && m.coupling.iteration.enabled) s["iteration"] = master->iteration_summary();
  if (master && m.coupling.step_control.enabled) s["step_control"] = master->step_control_summary();
  if (energy_known && !g.nodes.empty()) {
    s["total_subsystem_energy_J"] = total_energy;
    // Every subsystem reports energy: the whole system's change against what crossed its
    // bonds (the energy residuals of coupled bonds plus any bond left unpaired).
    s["energy_balance"] = {{"change_J", total_change},
                           {"bond_energy_in_J", total_bond_in},
                           {"internal_J", total_change - total_bond_in}};
  }
  json conns = json::array();
  for (auto& l : g.links) {
    json c{{"from", l->config.from_text},
           {"to", l->config.to_text},
           {"extrapolator", l->config.extrapolator.plugin}};
    for (auto& b : l->dst->bonds)
      if (b.input == l->dst_input && b.element == l->dst_offset) c["bond"] = b.name, c["energy_J"] = b.energy;
    if (const std::size_t i = l->src->output_port_at(l->src_offset); i < l->src->ports.size())
      c["direct_feedthrough"] = l->src->ports[i].feedthrough;
    if (const RunLog::Counts said = g.log->counts("connection " + l->config.pointer); said.warnings + said.errors + said.suppressed > 0)
      c["messages"] = {{"warnings", said.warnings}, {"errors", said.errors}, {"left_out", said.suppressed}};
    conns.push_back(c);
  }
  s["connections"] = conns;
  json pairs = json::array();
  double total_residual = 0;
  for (const auto& p : g.bond_pairs) {
    pairs.push_back({{"bond", p.name()},
                     {"energy_in_J", {{p.a->name, p.a->bonds[p.bond_a].energy}, {p.b->name, p.b->bonds[p.bond_b].energy}}},
                     {"residual_J", p.residual()}});
    total_residual += p.residual();
  }
  s["power_bonds"] = pairs;
  if (!g.bond_pairs.empty()) s["energy_residual_J"] = total_residual;
  res.summary = s;
  res.summary_error = folder->write_summary(s);
  return res;
}

}  // namespace stride::host
