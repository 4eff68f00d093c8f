#include "run/recorder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "fmi/values.hpp"  // to_hex
#include "stride/host/run/supervise.hpp"

namespace stride::host {

Recorder::Recorder(const Graph& g, const std::filesystem::path& csv, double t0, double interval, double end,
                   std::size_t capacity, RunBeacon* beacon, bool event_rows)
    : t0_(t0),
      dt_(interval),
      end_(end),
      grid_(t0, interval),
      event_rows_(event_rows),
      ncols_(g.columns.size()),
      beacon_(beacon),
      file_(csv, header(g)) {
  for (const Node& n : g.nodes) {
    if (n.recorded) ++recording_nodes_;
    if (!n.text_cols.empty()) text_col_.resize(ncols_, nullptr), texts_ = true;
    for (const Node::TextColumn& c : n.text_cols) text_col_[c.col] = c.signal.get();
  }
  for (const Node& n : g.nodes)
    if (auto* dense = dynamic_cast<DenseOutputs*>(n.sub.get()); dense && (n.recorded || recording_nodes_ == 0))
      dense->record_grid(t0, interval);
  rows_.assign(capacity, Row{std::vector<double>(ncols_, 0.0), 0});
  if (texts_) row_texts_.assign(capacity, std::vector<std::string>(ncols_));
}

Recorder::~Recorder() { g_pending_rows.fd = -1; }

void Recorder::passed(NodeState& n) {
  if (!records(n)) return;
  const Node& d = *n.node;
  bool event_row = event_rows_ && n.event_at_end && !(n.t > end_ + 1e-9 * dt_);  // the row before it is due
  for (;;) {
    const std::size_t k = n.next_record;
    const double tk = time_of(k);
    if (tk > n.t + 1e-9 * dt_ || tk > end_ + 1e-9 * dt_) break;
    if (event_row && tk >= n.t - 1e-9 * dt_) {  // the grid's row at the event is the row after it
      put_event_row(n, n.y_before_event, true);
      event_row = false;
    }
    if (k >= formatted_ + rows_.size()) grow();
    Row& r = rows_[k % rows_.size()];
    // The subsystem's own outputs inside the step (DenseOutputs), else linear between the
    // step's start and its end; a step that ended at an event ends, for the times before it,
    // at the values just before the event (the row at its time: those after).
    const bool before_event = n.event_at_end && tk < n.t - 1e-9 * dt_;
    const bool strictly_inside = tk > n.t_prev + 1e-9 * dt_ && tk < n.t - 1e-9 * dt_;
    const double* inside = n.dense && strictly_inside ? n.dense->outputs_at_row(k) : nullptr;
    if (inside) {
      for (std::size_t i = 0; i < d.record_cols.size(); ++i) r.values[d.record_cols[i]] = inside[d.record_elem[i]];
    } else {
      // A row within round-off of the step's end holds the end's values exactly (a blend
      // 1e-12 short of them would show in results.csv's full precision), and a value equal at
      // both ends is that value (std::lerp: a counter of 6 stays 6, not 5.9999999999999991).
      const double span = n.t - n.t_prev;
      const double w = span > 0 && tk < n.t - 1e-9 * dt_ ? std::clamp((tk - n.t_prev) / span, 0.0, 1.0) : 1.0;
      const std::span<const double> end = before_event ? std::span<const double>(n.y_before_event) : n.y;
      for (std::size_t i = 0; i < d.record_cols.size(); ++i) {
        const std::size_t e = d.record_elem[i];
        r.values[d.record_cols[i]] = std::lerp(n.y_prev[e], end[e], w);
      }
    }
    if (texts_) fill_texts(k, d, tk);
    ++r.filled;
    ++n.next_record;
    format_complete_rows();
  }
  if (event_row) {
    put_event_row(n, n.y_before_event, true);
    put_event_row(n, n.y);
  }
  wake_for(n, n.next_record);
}

// Every earlier row is written already (one recording subsystem, nothing held).
void Recorder::put_event_row(const NodeState& n, std::span<const double> y, bool before) {
  const Node& d = *n.node;
  Row& r = rows_[formatted_ % rows_.size()];  // the next grid row's, refilled later
  for (std::size_t i = 0; i < d.record_cols.size(); ++i) r.values[d.record_cols[i]] = y[d.record_elem[i]];
  if (!texts_) {
    put_row(n.t, r.values);
  } else {
    fill_texts(formatted_, d, n.t, before);
    put_text_row(n.t, formatted_);
  }
  if (file_.due()) commit();
}

void Recorder::accepted(double t) {
  accepted_ = t;
  format_complete_rows();
}

void Recorder::rewound(NodeState& n, std::size_t next) {
  if (!records(n)) return;
  for (std::size_t k = next; k < n.next_record; ++k) --rows_[k % rows_.size()].filled;
  wake_for(n, next);
}

std::string Recorder::header(const Graph& g) {
  std::string h = "time";
  for (const auto& c : g.columns) h += "," + c;
  return h;
}

void Recorder::format_complete_rows() {
  const std::size_t need = std::max<std::size_t>(recording_nodes_, 1);
  bool wrote = false;
  while (rows_[formatted_ % rows_.size()].filled >= need && time_of(formatted_) <= accepted_ + 1e-9 * dt_) {
    Row& r = rows_[formatted_ % rows_.size()];
    if (texts_) [[unlikely]]
      put_text_row(time_of(formatted_), formatted_);
    else
      put_row(time_of(formatted_), r.values);
    r.filled = 0;
    ++formatted_;
    wrote = true;
  }
  if (wrote && file_.due()) commit();
}

void Recorder::put_row(double t, const std::vector<double>& values) {
  std::string& buffer = file_.buffer();
  g_pending_rows.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  put_number(buffer, t);
  for (double v : values) {
    buffer += ',';
    put_number(buffer, v);
  }
  buffer += '\n';
  expose();
}

// Text holds the value of the latest communication point at or before the row (before an
// event at the step's end: the value from before it, published at an earlier point).
void Recorder::fill_texts(std::size_t k, const Node& d, double tk, bool before) {
  std::vector<std::string>& texts = texts_of(k);
  for (const Node::TextColumn& c : d.text_cols) texts[c.col] = c.signal->at(tk, 1e-9 * dt_, before).value;
}

void Recorder::put_text_row(double t, std::size_t k) {
  const std::vector<double>& values = rows_[k % rows_.size()].values;
  const std::vector<std::string>& texts = texts_of(k);
  std::string& buffer = file_.buffer();
  g_pending_rows.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  put_number(buffer, t);
  for (std::size_t i = 0; i < ncols_; ++i) {
    buffer += ',';
    if (!text_col_[i]) put_number(buffer, values[i]);
    else if (!text_col_[i]->binary()) put_text(buffer, texts[i]);
    else put_text(buffer, fmi::to_hex(reinterpret_cast<const std::uint8_t*>(texts[i].data()), texts[i].size()));
  }
  buffer += '\n';
  expose();
}

// The buffer as the SIGUSR1 handler may write it (whole rows only).
void Recorder::expose() {
  g_pending_rows.fd = file_.fd();
  g_pending_rows.data = file_.buffer().data();
  g_pending_rows.size = file_.buffer().size();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // While the writer thread writes earlier rows, the handler must not put later ones before them.
  g_pending_rows.busy = file_.in_flight() ? 1 : 0;
}

void Recorder::commit(bool last) {
  g_pending_rows.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  try {
    if (last) file_.finish_writing();
    else file_.commit();
  } catch (...) {
    expose();
    throw;
  }
  if (beacon_) beacon_->rows.store(file_.rows(), std::memory_order_relaxed);
  expose();
}

void Recorder::grow() {
  std::vector<Row> bigger(rows_.size() * 2, Row{std::vector<double>(ncols_, 0.0), 0});
  for (std::size_t k = formatted_; k < formatted_ + rows_.size(); ++k)
    bigger[k % bigger.size()] = rows_[k % rows_.size()];
  if (texts_) {
    std::vector<std::vector<std::string>> more(bigger.size(), std::vector<std::string>(ncols_));
    for (std::size_t k = formatted_; k < formatted_ + rows_.size(); ++k) more[k % more.size()] = std::move(texts_of(k));
    row_texts_ = std::move(more);
  }
  rows_ = std::move(bigger);
}

}  // namespace stride::host
