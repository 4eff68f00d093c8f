// A multibody model + formulation run through the host adapter, with named access to its
// outputs.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include <stride/host/graph/adapters.hpp>

#include "shipped_plugins.hpp"

namespace stride_test {

struct MultibodyRun {
  std::unique_ptr<stride::Subsystem> sub;
  std::vector<stride::PortSpec> ports;
  std::vector<double> y;
  double t = 0.0;

  MultibodyRun(const std::string& model, const stride::json& mparams, const std::string& form,
               const stride::json& fparams, stride::Inputs& in) {
    sub = stride::host::make_multibody_subsystem(registry().create_model(model, mparams),
                                                 registry().create_formulation(form, fparams));
    ports = sub->ports();
    std::size_t size = 0;
    for (const auto& p : ports)
      if (p.direction == stride::Direction::output) size += p.size;
    y.assign(size, 0.0);
    sub->bind(in);
    sub->initialize(0.0);
    sub->outputs(y);
  }
  double out(const std::string& port, std::size_t element = 0) const {
    std::size_t o = 0;
    for (const auto& p : ports) {
      if (p.direction != stride::Direction::output) continue;
      if (p.name == port) return y[o + element];
      o += p.size;
    }
    FAIL("no output port " << port);
    return 0.0;
  }
  void step(double h) {
    t = sub->step(t, h);
    sub->outputs(y);
  }
  stride::json stats() const { return sub->statistics()["formulation"]; }
};

}  // namespace stride_test
