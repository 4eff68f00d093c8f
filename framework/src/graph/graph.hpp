// The co-simulation graph shared by graph.cpp (building and checking) and master.cpp
// (stepping). Internal to the host.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "stride/host/graph/experiment.hpp"

namespace stride::host {

struct Node;

// One connection: source output port -> destination input port, through an extrapolator.
// The fields a push and a read touch come first (the master visits every connection of every
// subsystem that stepped, each macro step: with thousands of subsystems they are cache misses).
struct alignas(64) Link {
  Node* src = nullptr;
  std::size_t src_offset = 0;  // into src->y
  std::size_t width = 0;
  Node* dst = nullptr;
  std::size_t dst_input = 0;   // input index at the destination
  std::size_t dst_offset = 0;  // first element of that input fed by this link
  std::shared_ptr<Extrapolator> extrapolator;
  double last_push = -std::numeric_limits<double>::infinity();
  // `value` is the extrapolator's evaluation at value_time after `pushes` pushes: evaluation
  // is a const function of the pushed samples and t, so a second read at the same time with
  // no push in between (a plugin reading an input several times in one step, the power of a
  // bond after outputs()) reuses it instead of evaluating again.
  std::uint64_t pushes = 0;
  std::uint64_t value_pushes = ~std::uint64_t(0);
  double value_time = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> value;  // last evaluated input
  int index = 0;               // in Graph::links
  bool whole_port = false;     // the only link into that input, covering all of it
  // Unit conversion from the source's unit to the destination's (kN -> N, bar -> Pa): samples
  // are converted before the extrapolator sees them.
  bool convert = false;
  double scale = 1.0, offset = 0.0;
  std::vector<double> converted;
  // Iterative coupling: while a macro step [iter_t0, iter_t1] is repeated, the input is the
  // straight line from iter_start (its value at iter_t0) to iter_end (the relaxed iterate at
  // iter_t1) instead of the extrapolator's value. A change of either counts as a push.
  bool iterating = false;
  double iter_t0 = 0.0, iter_t1 = 0.0;
  std::vector<double> iter_start, iter_end;
  ConnectionConfig config;

  // Pushes the source's current outputs when newer than the last push.
  void push(double t) {
    if (t > last_push) push_now(t);
  }
  void push_now(double t);
};

// Power bond of one subsystem: an effort input with the flow output of the same bond (or a
// flow input with an effort output). Power in = sign · u·y.
// One bond per connection feeding a bonded input (an input port fed element-wise by several
// subsystems has one bond per feeding subsystem).
struct Bond {
  std::string name;
  std::size_t input = 0;          // input index
  std::size_t element = 0;        // first element of the input in this bond
  std::size_t output_offset = 0;  // into y: the conjugate output's element matching `element`
  std::size_t width = 0;
  double sign = 1.0;
  double power = 0.0;   // at the last step end
  // ∫ power dt over the subsystem's steps (Rahikainen 2020 §2.3.2): the rectangle rule with
  // the power at the step end when every link into the bond holds its samples (extrapolation
  // of order 0), the trapezoidal rule otherwise.
  double energy = 0.0;
  bool rectangle = false;
};

class NodeInputs final : public Inputs {
 public:
  explicit NodeInputs(Node& n) : node_(n) {}
  // Allocates the table of known values (initialization; reads never allocate).
  void prepare();
  // A push into a link feeding `port` ends what was known of it.
  void forget(std::size_t port) { known_[port] = Known{}; }
  // The port's value is `value` for every time from `from` on (a held sample).
  void know(std::size_t port, double from, std::span<const double> value) {
    known_[port] = Known{from, std::numeric_limits<double>::infinity(), value.data(), value.size()};
  }

 protected:
  std::span<const double> evaluate(std::size_t port, double t) override;

 private:
  Node& node_;
  std::vector<Known> known_;
};

struct alignas(64) Node {
  struct Bound {
    std::size_t element;
    double min, max;
    std::string label;
  };
  // What every step reads and writes, first and together (the master visits every subsystem
  // each macro step: with thousands of subsystems these are cache misses).
  double t = 0.0, t_prev = 0.0;
  double step = 0.0;
  long steps = 0;
  bool inputs_renewed = false;  // a new sample arrived since the last step
  std::shared_ptr<Subsystem> sub;
  std::vector<double> y, y_prev;
  std::vector<Link*> out_links;
  std::vector<Bond> bonds;
  std::vector<Bound> bounds;                 // divergence monitors on outputs
  std::vector<std::size_t> record_cols;      // CSV column of each recorded output element
  std::size_t next_record = 0;               // first record index not yet written by this node
  int index = 0;                             // in Graph::nodes
  std::vector<std::size_t> record_elem;      // the output element (index into y) of each column
  NodeInputs input_view{*this};

  std::string name;
  std::string plugin;  // plugin(s) for error reports
  bool fmu = false;    // an FMU: its unconnected inputs keep their start values
  std::string pointer;
  std::vector<PortSpec> ports;
  std::vector<std::size_t> inputs;         // port indices of the inputs, in order
  std::vector<std::size_t> output_offset;  // per port index (outputs only)
  std::size_t output_width = 0;
  std::vector<std::vector<Link*>> in_links;  // per input index: the links feeding its elements
  std::vector<std::vector<double>> input_value;  // per input index, assembled from several links
  std::vector<Bond> bond_ports;  // per bonded input port, whole width (expanded per link into bonds)
  double energy0 = std::numeric_limits<double>::quiet_NaN();  // stored energy after initialization

  // The output port holding element `offset` of y; ports.size() when none does.
  std::size_t output_port_at(std::size_t offset) const {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (ports[i].direction == Direction::output && offset >= output_offset[i] && offset < output_offset[i] + ports[i].size)
        return i;
    return ports.size();
  }
  int port_index(const std::string& port) const {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (ports[i].name == port) return static_cast<int>(i);
    return -1;
  }
};

// Two subsystems exchanging power through conjugate bonds: the effort output of one feeds the
// effort input of the other and the flow outputs likewise. Exact coupling makes the energies
// that enter both through the bond cancel; their sum is the generalized energy residual.
struct BondPair {
  Node* a;
  std::size_t bond_a;
  Node* b;
  std::size_t bond_b;
  double residual() const;
  std::string name() const;
  // Subsystems that pass the bond's values on (PortSpec::through), from a to b and back.
  std::vector<Node*> via_ab, via_ba;
};

class RunLog;

struct Graph {
  // First, so that it is destroyed last: plugin objects may log until they are gone.
  std::unique_ptr<RunLog> log;
  std::vector<BondPair> bond_pairs;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::string> columns;  // CSV columns after "time"
  std::vector<Node*> order;          // Gauss–Seidel order / initialization order
  std::vector<std::string> conversions;  // connections that convert units, for `validate`
  std::vector<std::string> bond_warnings;  // bonds left without a partner, for `validate`
  std::vector<std::string> bond_delays;    // communication delay of each paired bond's paths
  std::vector<std::string> unconnected;    // FMU inputs kept at their start values, for `validate`
};

}  // namespace stride::host
