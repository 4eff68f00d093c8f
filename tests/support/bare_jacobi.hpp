// The least a Jacobi host can do, as a second implementation of the master to check it against
// and as the benchmark's floor: subsystems made from the plugins, every input a held value
// (the source's outputs of the last communication point, read through the SDK's inline
// Inputs::at), per macro step each subsystem whose step starts before the communication point
// steps and computes its outputs, then all new outputs are published. Times are kept on the
// subsystems' grids as the host keeps them. No extrapolators, checks, monitors, bonds or
// records; initialization in the host's order (initialize, outputs until feedthrough chains
// settle, equilibrate in the order the subsystems were added, outputs).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <stride/host/graph/experiment.hpp>
#include <stride/host/run/run.hpp>
#include <stride/subsystem.hpp>

namespace stride_test {

// A subsystem's time after a step, as the host keeps it: on its own grid (host::on_grid), then
// on the communication point T when within eps of it.
inline double grid_time(double t, double t0, double h, double T, double eps) {
  t = stride::host::on_grid(t, t0, h);
  return std::abs(t - T) <= eps ? T : t;
}

class BareJacobi {
 public:
  void add(const std::string& name, std::shared_ptr<stride::Subsystem> sub, double step) {
    auto n = std::make_unique<Node>();
    n->name = name;
    n->sub = std::move(sub);
    n->h = step;
    n->ports = n->sub->ports();
    std::size_t width = 0;
    for (const auto& p : n->ports)
      if (p.direction == stride::Direction::output) width += p.size;
    n->y.assign(width, 0.0);
    n->published.assign(width, 0.0);
    nodes_.push_back(std::move(n));
  }

  // "sub.port" -> "sub.port", whole ports.
  void connect(const std::string& from, const std::string& to) { wires_[to] = from; }
  // Before finalize(): tell the subsystems that only the wired outputs and `also` ("sub.port")
  // are read (Inputs::output_read), as the host's run() does; published() of any other output
  // is then left as it was.
  void read_only_wired(std::vector<std::string> also) {
    only_wired_ = true;
    also_read_ = std::move(also);
  }

  // Wires every input and binds the subsystems; call once, after add() and connect().
  void finalize() {
    for (auto& n : nodes_) {
      std::vector<const double*> sources;
      std::vector<std::size_t> sizes;
      for (const auto& p : n->ports) {
        if (p.direction != stride::Direction::input) continue;
        const auto it = wires_.find(n->name + "." + p.name);
        if (it == wires_.end()) throw std::runtime_error("bare Jacobi: input " + n->name + "." + p.name + " is not connected");
        sources.push_back(published(it->second).data());
        sizes.push_back(p.size);
      }
      n->inputs.wire(sources, sizes);
      if (only_wired_) {
        n->read.reset(new bool[n->y.size()]);
        std::size_t offset = 0;
        for (const auto& p : n->ports) {
          if (p.direction != stride::Direction::output) continue;
          const std::string name = n->name + "." + p.name;
          bool read = std::find(also_read_.begin(), also_read_.end(), name) != also_read_.end();
          for (const auto& w : wires_) read = read || w.second == name;
          std::fill(n->read.get() + offset, n->read.get() + offset + p.size, read);
          offset += p.size;
        }
        n->inputs.outputs_read(n->read.get(), n->y.size());
      }
      n->sub->bind(n->inputs);
    }
  }

  void run(double t0, double end, double macro) {
    const double eps = 1e-9 * macro;
    for (auto& n : nodes_) {
      n->sub->initialize(t0);
      n->t = t0;
      std::fill(n->published.begin(), n->published.end(), 0.0);
    }
    for (std::size_t pass = 0; pass <= nodes_.size(); ++pass)
      for (auto& n : nodes_) publish(*n);
    for (auto& n : nodes_) {
      n->sub->equilibrate(t0);
      publish(*n);
    }
    for (auto& n : nodes_) publish(*n);
    std::vector<Node*> stepped;
    stepped.reserve(nodes_.size());
    long k = 0;
    double T = t0;
    while (T < end - eps) {
      ++k;
      const double Tn = std::min(t0 + static_cast<double>(k) * macro, end);
      stepped.clear();
      for (auto& n : nodes_) {
        if (!(n->t < Tn - eps)) continue;
        do {
          n->t = grid_time(n->sub->step(n->t, n->h), t0, n->h, Tn, eps);
          n->sub->outputs(n->y);
        } while (n->t < Tn - eps);
        stepped.push_back(n.get());
      }
      for (Node* n : stepped) std::copy(n->y.begin(), n->y.end(), n->published.begin());
      T = Tn;
    }
  }

  // The outputs of "sub.port" published at the last communication point.
  std::span<const double> published(const std::string& sub_port) const {
    const auto dot = sub_port.find('.');
    for (const auto& n : nodes_) {
      if (n->name != sub_port.substr(0, dot)) continue;
      std::size_t offset = 0;
      for (const auto& p : n->ports) {
        if (p.direction != stride::Direction::output) continue;
        if (p.name == sub_port.substr(dot + 1)) return {n->published.data() + offset, p.size};
        offset += p.size;
      }
    }
    throw std::runtime_error("bare Jacobi: no output " + sub_port);
  }

 private:
  // Each port points into its source's published outputs, known for all times.
  class HeldInputs final : public stride::Inputs {
   public:
    void wire(const std::vector<const double*>& sources, const std::vector<std::size_t>& sizes) {
      known_.resize(sources.size());
      for (std::size_t k = 0; k < sources.size(); ++k)
        known_[k] = Known{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), sources[k], sizes[k]};
      set_known(known_.data(), known_.size());
    }
    void outputs_read(const bool* read, std::size_t count) { set_outputs_read(read, count); }

   protected:
    std::span<const double> evaluate(std::size_t port, double) override {
      throw std::logic_error("bare Jacobi: input " + std::to_string(port) + " is not wired");
    }

   private:
    std::vector<Known> known_;
  };

  struct Node {
    std::string name;
    std::shared_ptr<stride::Subsystem> sub;
    std::vector<stride::PortSpec> ports;
    HeldInputs inputs;
    std::vector<double> y, published;  // published: never reallocated after add()
    std::unique_ptr<bool[]> read;      // read_only_wired(): which output elements are read
    double t = 0.0, h = 0.0;
  };

  static void publish(Node& n) {
    n.sub->outputs(n.y);
    std::copy(n.y.begin(), n.y.end(), n.published.begin());
  }

  std::vector<std::unique_ptr<Node>> nodes_;
  bool only_wired_ = false;
  std::vector<std::string> also_read_;
  std::map<std::string, std::string> wires_;  // destination -> source
};

}  // namespace stride_test
