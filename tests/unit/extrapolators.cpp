// Extrapolator plugins: polynomial exactness up to the order (and not beyond), the sample
// selection rule of González 2011 Sect. 2.1, zero-order hold, and window averaging
// (González 2011 Sect. 2.2).
#include <doctest/doctest.h>

#include "allocation_counter.hpp"
#include "shipped_plugins.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <stride/host/load/registry.hpp>

using stride::json;
using stride::host::PluginRegistry;


namespace {

using stride_test::registry;

std::shared_ptr<stride::Extrapolator> make(const std::string& name, const json& params, std::size_t width) {
  auto e = registry().create_extrapolator(name, params);
  REQUIRE(e);
  e->reset(width);
  return e;
}

// Two-component polynomial with random coefficients of the given degree.
struct Polynomial {
  std::vector<double> a, b;
  Polynomial(int degree, std::mt19937& rng) {
    std::uniform_real_distribution<double> c(-2.0, 2.0);
    for (int k = 0; k <= degree; ++k) a.push_back(c(rng)), b.push_back(c(rng));
    // Keep the top coefficient away from zero so "degree" really is the degree.
    a.back() = a.back() < 0 ? a.back() - 1.0 : a.back() + 1.0;
    b.back() = b.back() < 0 ? b.back() - 1.0 : b.back() + 1.0;
  }
  static double eval(const std::vector<double>& c, double t) {
    double v = 0.0;
    for (auto it = c.rbegin(); it != c.rend(); ++it) v = v * t + *it;
    return v;
  }
  void operator()(double t, std::span<double> y) const { y[0] = eval(a, t), y[1] = eval(b, t); }
};

// Irregular sample times: 12 samples, steps between 0.05 and 0.15.
std::vector<double> irregular_times(std::mt19937& rng) {
  std::uniform_real_distribution<double> dt(0.05, 0.15);
  std::vector<double> t{1.0};
  while (t.size() < 12) t.push_back(t.back() + dt(rng));
  return t;
}

// Largest relative deviation of the extrapolator from p over interior and beyond-the-end times.
double max_relative_error(stride::Extrapolator& e, const Polynomial& p, const std::vector<double>& times) {
  double worst = 0.0;
  std::vector<double> query;
  for (std::size_t k = 0; k + 1 < times.size(); ++k) {
    query.push_back(times[k]);                                  // at a sample
    query.push_back(times[k] + 0.37 * (times[k + 1] - times[k]));  // between samples
  }
  for (double d : {0.0, 0.02, 0.1, 0.25}) query.push_back(times.back() + d);  // extrapolation
  double u[2], y[2];
  for (double t : query) {
    e.evaluate(t, u);
    p(t, y);
    for (int i = 0; i < 2; ++i) worst = std::max(worst, std::abs(u[i] - y[i]) / std::max(1.0, std::abs(y[i])));
  }
  return worst;
}

}  // namespace

TEST_CASE("lagrange of order P is exact on polynomials of degree <= P and not on degree P+1") {
  std::mt19937 rng(20110901);
  for (int order = 0; order <= 4; ++order) {
    const auto times = irregular_times(rng);
    for (int degree = 0; degree <= order + 1; ++degree) {
      const Polynomial p(degree, rng);
      auto e = make("lagrange", {{"order", order}}, 2);
      double y[2];
      for (double t : times) {
        p(t, y);
        e->push(t, y);
      }
      const double err = max_relative_error(*e, p, times);
      INFO("order ", order, " degree ", degree, " error ", err);
      if (degree <= order) CHECK(err < 1e-9);
      else CHECK(err > 1e-4);  // the test can fail: one degree too many is visible
    }
  }
}

TEST_CASE("linear is exact on straight lines, not on parabolas, and equals lagrange order 1") {
  std::mt19937 rng(7);
  const auto times = irregular_times(rng);
  for (int degree : {1, 2}) {
    const Polynomial p(degree, rng);
    auto lin = make("linear", json::object(), 2);
    auto lag = make("lagrange", {{"order", 1}}, 2);
    double y[2];
    for (double t : times) {
      p(t, y);
      lin->push(t, y);
      lag->push(t, y);
    }
    const double err = max_relative_error(*lin, p, times);
    if (degree == 1) CHECK(err < 1e-9);
    else CHECK(err > 1e-4);
    double a[2], b[2];
    for (double t = times.front(); t < times.back() + 0.3; t += 0.013) {
      lin->evaluate(t, a);
      lag->evaluate(t, b);
      CHECK(a[0] == b[0]);
      CHECK(a[1] == b[1]);
    }
  }
}

TEST_CASE("lagrange picks t_P as the first sample after t, and the samples before it") {
  // Samples of t^3 at 0, 1, 2, 3.
  auto e1 = make("lagrange", {{"order", 1}}, 1);
  auto e2 = make("lagrange", {{"order", 2}}, 1);
  for (double t : {0.0, 1.0, 2.0, 3.0}) {
    const double y = t * t * t;
    e1->push(t, {&y, 1});
    e2->push(t, {&y, 1});
  }
  double u = 0.0;
  e1->evaluate(1.5, {&u, 1});
  CHECK(u == doctest::Approx(0.5 * (1.0 + 8.0)));  // line through t = 1, 2
  e1->evaluate(3.5, {&u, 1});
  CHECK(u == doctest::Approx(27.0 + 0.5 * 19.0));  // extrapolated from t = 2, 3
  e2->evaluate(1.5, {&u, 1});
  // Parabola through t = 0, 1, 2 (t_P = 2): 3t^2 - 2t; the one through 1, 2, 3 would give 3.0.
  CHECK(u == doctest::Approx(3.75));
  e2->evaluate(2.0, {&u, 1});
  CHECK(u == doctest::Approx(8.0));  // at a sample: through 1, 2, 3, exact there
}

TEST_CASE("a short history keeps the newest samples and stays exact") {
  std::mt19937 rng(3);
  const Polynomial p(2, rng);
  auto e = make("lagrange", {{"order", 2}, {"history", 5}}, 2);
  double y[2], u[2];
  for (int k = 0; k < 40; ++k) {
    const double t = 0.1 * k;
    p(t, y);
    e->push(t, y);
  }
  // Inside the kept samples (3.5 ... 3.9 s) and beyond them.
  for (double t : {3.75, 3.9, 4.2}) {
    e->evaluate(t, u);
    p(t, y);
    CHECK(u[0] == doctest::Approx(y[0]).epsilon(1e-9));
    CHECK(u[1] == doctest::Approx(y[1]).epsilon(1e-9));
  }
  // A time whose window reaches overwritten samples is an error, not an answer by another rule:
  // before the oldest kept sample, and between the two oldest (order 2 needs two before t_P).
  for (double t : {2.0, 3.45, 3.55}) {
    CAPTURE(t);
    CHECK_THROWS_WITH_AS(e->evaluate(t, u), doctest::Contains("needs samples older than the 5 kept"), std::runtime_error);
  }
  // Before anything is overwritten, a time before the first sample extrapolates backwards.
  auto fresh = make("lagrange", {{"order", 2}, {"history", 5}}, 2);
  for (int k = 0; k < 3; ++k) p(1.0 + 0.1 * k, y), fresh->push(1.0 + 0.1 * k, y);
  fresh->evaluate(0.5, u);
  p(0.5, y);
  CHECK(u[0] == doctest::Approx(y[0]).epsilon(1e-9));
  // A hold and a window mean: the same.
  for (const char* name : {"zoh", "smoothing"}) {
    CAPTURE(name);
    const bool hold = std::string(name) == "zoh";
    auto h = make(name, hold ? json{{"history", 4}} : json{{"history", 4}, {"window", 0.2}}, 2);
    for (int k = 0; k < 10; ++k) y[0] = y[1] = k, h->push(0.1 * k, y);  // kept: 0.6 ... 0.9 s
    h->evaluate(0.95, u);
    CHECK(u[0] == (hold ? 9.0 : 8.5));  // the mean over (0.75, 0.95]: samples 8 and 9
    CHECK_THROWS_WITH_AS(h->evaluate(0.55, u), doctest::Contains("raise the extrapolator's \"history\""), std::runtime_error);
  }
}

TEST_CASE("zoh holds the newest sample at or before t") {
  auto e = make("zoh", json::object(), 2);
  std::mt19937 rng(11);
  const auto times = irregular_times(rng);
  const Polynomial c(0, rng);  // exact on constants
  double y[2], u[2];
  for (double t : times) {
    const double v[2] = {t, -2.0 * t};
    e->push(t, v);
  }
  for (std::size_t k = 0; k + 1 < times.size(); ++k) {
    e->evaluate(times[k], u);
    CHECK(u[0] == times[k]);
    e->evaluate(0.5 * (times[k] + times[k + 1]), u);
    CHECK(u[0] == times[k]);
    CHECK(u[1] == -2.0 * times[k]);
  }
  e->evaluate(times.back() + 1.0, u);
  CHECK(u[0] == times.back());
  e->evaluate(times.front() - 1.0, u);
  CHECK(u[0] == times.front());
  auto ec = make("zoh", json::object(), 2);
  for (double t : times) {
    c(t, y);
    ec->push(t, y);
  }
  CHECK(max_relative_error(*ec, c, times) < 1e-15);
}

TEST_CASE("smoothing returns the mean of the samples in (t - window, t]") {
  auto e = make("smoothing", {{"window", 0.35}}, 1);
  for (int k = 0; k <= 10; ++k) {
    const double t = 0.1 * k, y = t;
    e->push(t, {&y, 1});
  }
  double u = 0.0;
  e->evaluate(1.0, {&u, 1});
  CHECK(u == doctest::Approx((0.7 + 0.8 + 0.9 + 1.0) / 4.0));
  e->evaluate(0.55, {&u, 1});  // (0.2, 0.55]: 0.3, 0.4, 0.5
  CHECK(u == doctest::Approx(0.4));
  e->evaluate(1.5, {&u, 1});  // empty window: hold the newest sample
  CHECK(u == doctest::Approx(1.0));

  // A fast oscillation averaged over whole periods vanishes: the slow consumer sees its mean.
  const double period = 0.1, dt = 1e-3, offset = 0.25;
  auto s = make("smoothing", {{"window", period}, {"history", 2000}}, 1);
  auto lag = make("lagrange", {{"order", 3}, {"history", 2000}}, 1);
  for (int k = 0; k <= 1000; ++k) {
    const double t = k * dt, y = offset + std::sin(2.0 * M_PI * t / period);
    s->push(t, {&y, 1});
    lag->push(t, {&y, 1});
  }
  for (double t : {0.5, 0.7315, 1.0}) {
    s->evaluate(t, {&u, 1});
    CHECK(u == doctest::Approx(offset).epsilon(1e-9));
  }
  lag->evaluate(0.7315, {&u, 1});  // a point value of the oscillation, far from the mean
  CHECK(std::abs(u - offset) > 0.5);
}

TEST_CASE("smoothing with window_end = newest holds the mean of the window ending at the newest sample") {
  auto e = make("smoothing", {{"window", 0.35}, {"window_end", "newest"}}, 1);
  for (int k = 0; k <= 10; ++k) {
    const double t = 0.1 * k, y = t;
    e->push(t, {&y, 1});
  }
  // The same mean, (0.65, 1.0] -> 0.7, 0.8, 0.9, 1.0, at every time asked until the next sample.
  double u = 0.0;
  for (double t : {0.55, 0.9, 1.0, 1.3}) {
    e->evaluate(t, {&u, 1});
    CHECK(u == doctest::Approx(0.85));
  }
  const double y = 1.1;
  e->push(1.1, {&y, 1});
  e->evaluate(1.05, {&u, 1});  // (0.75, 1.1]: 0.8 ... 1.1
  CHECK(u == doctest::Approx(0.95));
}

TEST_CASE("push() and evaluate() do not allocate, also once the history wraps around") {
  const std::vector<std::pair<std::string, json>> cases = {
      {"zoh", {{"history", 8}}},
      {"linear", {{"history", 8}}},
      {"lagrange", {{"order", 4}, {"history", 8}}},
      {"smoothing", {{"window", 0.05}, {"history", 8}}}};
  for (const auto& [name, params] : cases) {
    const long at_reset = stride_test::allocations.load();
    auto e = make(name, params, 3);
    CHECK(stride_test::allocations.load() > at_reset);  // the counter sees stride_test::allocations inside plugins
    double y[3], u[3];
    const long before = stride_test::allocations.load();
    for (int k = 0; k < 50; ++k) {
      const double t = 0.01 * k;
      y[0] = t, y[1] = -t, y[2] = t * t;
      e->push(t, y);
      e->evaluate(t - 0.005, u);
      e->evaluate(t + 0.005, u);
    }
    const long during = stride_test::allocations.load() - before;
    const std::string plugin = name;  // a structured binding cannot be captured (clang 14)
    INFO(plugin);
    CHECK(during == 0);
  }
}

TEST_CASE("holds_from: where a hold returns its newest sample, so the host may read it without evaluating") {
  // zoh and lagrange of order 0 hold their newest sample from (just before) its time on; the
  // higher orders, linear and smoothing vary with t and never hold.
  struct Case {
    const char* name;
    json params;
    bool holds;
  };
  const std::vector<Case> cases = {{"zoh", json::object(), true},
                                   {"lagrange", {{"order", 0}}, true},
                                   {"lagrange", {{"order", 1}}, false},
                                   {"lagrange", {{"order", 3}}, false},
                                   {"linear", json::object(), false},
                                   {"smoothing", {{"window", 0.05}}, false}};
  for (const auto& c : cases) {
    INFO(c.name << " " << c.params.dump());
    auto e = make(c.name, c.params, 1);
    CHECK(std::isinf(e->holds_from()));  // nothing pushed yet
    double u[1];
    for (int k = 0; k <= 20; ++k) {
      const double t = 0.01 * k, y[1] = {std::sin(3.0 * t) + 2.0};
      e->push(t, y);
      const double from = e->holds_from();
      if (!c.holds) {
        CHECK(std::isinf(from));
        continue;
      }
      CHECK(from <= t);
      CHECK(from > t - 1e-8);
      // Every time from `from` on (before the next push) gives exactly the newest sample.
      for (double tr : {from, t, t + 0.003, t + 0.01, t + 5.0}) {
        e->evaluate(tr, u);
        CHECK(u[0] == y[0]);
      }
      // zoh: just before `from`, the older sample (lagrange order 0 interpolates with the
      // sample after t, so it holds a little earlier than it says; the host only reads less).
      if (k > 0 && std::string(c.name) == "zoh") {
        e->evaluate(t - 0.005, u);
        CHECK(u[0] != y[0]);
      }
    }
  }
}
