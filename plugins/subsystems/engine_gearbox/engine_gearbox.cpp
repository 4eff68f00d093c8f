// `engine_gearbox`: a four-cylinder spark-ignition engine (mean-value model of Crossley & Cook
// 1991, mean_value_engine.hpp), a torque converter and an automatic gearbox, as one OdeSystem
// (González et al. 2011 Sect. 4, Fig. 12: the engine and gearbox block). It reads the speed of
// the gearbox output shaft and delivers its torque (power bond "drive"); the final drive and
// the wheels belong to the vehicle.
//
// State x = [omega_e (rad/s), P_m (bar), m_cyl (g), phi (rad), W_e, W_loss, W_out (J)]:
// crank speed, manifold pressure, air pumped since the last intake event, crank angle since
// it, and the work of the engine (integral of T_e omega_e), the work lost in the converter
// and the work delivered at the output shaft. Discrete state: the air charges of the last two
// intake events, the gear, and a shift under way.
//
// Events (OdeSystem::event_indicators, located by the host inside the step):
//   z0 = phi - pi                                     intake event: the charge moves on
//   z1 = omega_out - upshift(theta, gear)            (not shifting, gear < n)
//   z2 = downshift(theta, gear) - omega_out          (not shifting, gear > 1)
//   z3 = t - (t_shift + shift_time)                  (shifting): the shift ends
// During a shift the ratio moves smoothly from the old gear's to the new one's
// (shifting_ratio): the turbine speed follows the ratio, the output torque is ratio * T_t.
#include <array>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "mean_value_engine.hpp"

namespace {

using namespace stride;
namespace en = stride::engine;

// Outputs of the engine and gearbox at (t, x).
struct Operating {
  double theta = 0, ratio = 0, T_e = 0, w_t = 0, T_out = 0, m_ai = 0, m_ao = 0;
  en::ConverterTorques conv;
};

class EngineGearbox final : public OdeSystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "engine_gearbox";
    i.kind = Kind::subsystem;
    i.form = Form::ode;
    i.version = "1.0";
    i.description =
        "Mean-value SI engine (Crossley & Cook 1991), torque converter and automatic gearbox with shift events";
    i.parameters = {
        table_param("throttle", json::array({{0.0, 15.0}}), {"s", "deg"},
                    "throttle angle over time (linear between rows)", 0.0, 90.0),
        real_param("inertia", 0.14, "kg*m^2", "crank, flywheel and impeller inertia J (MSL Engine: 0.14)", 1e-4),
        real_param("engine_speed0", 209.0, "rad/s", "crank speed at t0 (MSL Engine: 209)", 20.0, 1000.0),
        real_param("air_fuel_ratio", 14.6, "1", "AFR of the torque law (MSL TorqueGeneration: 14.6)", 8.0, 25.0),
        real_param("spark_advance", 15.0, "deg", "spark advance sigma before top dead centre (MSL: 15)", 0.0, 60.0),
        real_list_param("gear_ratios", {2.393, 1.450, 1.000, 0.677}, "1", "gearbox ratios, first gear first (sf_car)"),
        integer_param("initial_gear", 1, "gear at t0", 1, 16),
        table_param("upshift", upshift_default(), {},
                    "rows [theta (deg), output shaft speed (rad/s) of the upshift from gear 1, 2, ...]"),
        table_param("downshift", downshift_default(), {},
                    "rows [theta (deg), output shaft speed (rad/s) of the downshift to gear 1, 2, ...]"),
        real_param("shift_time", 0.2, "s", "duration of a shift (the ratio changes smoothly over it)", 1e-3, 5.0),
        table_param(
            "converter", en::sf_car_converter_table(), {"1", "1", "1"},
            "rows [speed ratio, K-factor (rad/s per sqrt(N*m)), torque ratio] up to the coupling point (sf_car)", 0.0),
        real_param("converter_capacity_scale", 1.0, "1",
                   "factor on K: a converter sized for a smaller engine has a larger K", 1e-3, 1e3),
    };
    return i;
  }

  explicit EngineGearbox(const Params& p)
      : throttle_(p.table("throttle")),
        J_(p.real("inertia")),
        w0_(p.real("engine_speed0")),
        ratios_(p.reals("gear_ratios")),
        up_(p.table("upshift")),
        down_(p.table("downshift")),
        shift_time_(p.real("shift_time")),
        converter_(p.table("converter"), p.real("converter_capacity_scale")) {
    cc_.afr = p.real("air_fuel_ratio");
    cc_.sigma = p.real("spark_advance");
    check(p);
    d_.gear = int(p.integer("initial_gear"));
    shifts_.reserve(kKeptShifts);
  }

  std::vector<PortSpec> ports() const override {
    return {
        bonded(input("shaft_speed", 1, "rad/s", "speed of the gearbox output shaft (the vehicle's final drive input)"),
               BondRole::flow, "drive"),
        bonded(output("shaft_torque", 1, "N*m", "torque at the gearbox output shaft: ratio * turbine torque", true),
               BondRole::effort, "drive"),
        output("engine_speed", 1, "rad/s", "crank speed"),
        output("engine_torque", 1, "N*m", "brake torque of the engine (Crossley-Cook torque law)"),
        output("manifold_pressure", 1, "Pa", "intake manifold pressure"),
        output("air_charge", 1, "kg", "air charge of the event before last (the one burning)"),
        output("throttle", 1, "deg", "throttle angle"),
        output("gear", 1, "1", "engaged gear (during a shift: the gear being left)"),
        output("gear_ratio", 1, "1", "gearbox ratio (moves between two gears during a shift)"),
        output("speed_ratio", 1, "1", "converter speed ratio turbine / impeller", true),
        with(output("work", 3, "J", "work of the engine, lost in the converter, delivered at the output shaft", false),
             {"engine", "converter_loss", "delivered"}),
    };
  }

  std::size_t state_size() const override { return 7; }
  std::vector<StateSpec> states() const override {
    return {{"omega_e", "rad/s", 100}, {"P_m", "bar", 1}, {"m_cyl", "g", 0.1}, {"phi", "rad", 1},
            {"W_engine", "J", 1e4},   {"W_loss", "J", 1e4}, {"W_out", "J", 1e4}};
  }

  // Manifold at equilibrium with the throttle at t0, charges of a steady engine.
  void initial_state(double t0, std::span<double> x) override {
    const double p_m = cc_.equilibrium_pressure(throttle_(t0), w0_);
    x[0] = w0_, x[1] = p_m, x[2] = 0.0, x[3] = 0.0, x[4] = x[5] = x[6] = 0.0;
    d_.m_latched = d_.m_burning = std::max(en::CrossleyCook::pumping(w0_, p_m), 0.0) * M_PI / w0_;
  }

  void derivatives(double t, std::span<const double> x, std::span<double> dx) override {
    const double w_out = inputs().at(0, t)[0];
    const Operating o = operating(t, x, w_out);
    dx[0] = (o.T_e - o.conv.impeller) / J_;
    dx[1] = cc_.rt_vm * (o.m_ai - o.m_ao);
    dx[2] = o.m_ao;
    dx[3] = x[0];
    dx[4] = o.T_e * x[0];
    dx[5] = o.conv.impeller * x[0] - o.conv.turbine * o.w_t;
    dx[6] = o.T_out * w_out;
  }

  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    const double w_out = inputs().at(0, t)[0];
    const Operating o = operating(t, x, w_out);
    const double out[] = {o.T_out, x[0], o.T_e, x[1] * 1e5, d_.m_burning * 1e-3, o.theta, double(d_.gear), o.ratio,
                          o.conv.speed_ratio, x[4], x[5], x[6]};
    std::copy(std::begin(out), std::end(out), y.begin());
  }
  double energy_at(double, std::span<const double> x) const override { return 0.5 * J_ * x[0] * x[0]; }

  // ---- Events ---------------------------------------------------------------------------------
  std::size_t event_indicator_count() const override { return 4; }
  void event_indicators(double t, std::span<const double> x, std::span<double> z) override {
    const double w_out = inputs().at(0, t)[0], theta = throttle_(t);
    const int n = int(ratios_.size());
    z[0] = x[3] - M_PI;
    z[1] = !d_.shifting && d_.gear < n ? w_out - up_(theta, std::size_t(d_.gear - 1)) : -1.0;
    z[2] = !d_.shifting && d_.gear > 1 ? down_(theta, std::size_t(d_.gear - 2)) - w_out : -1.0;
    z[3] = d_.shifting ? t - (d_.t_shift + shift_time_) : -1.0;
  }
  void handle_event(double t, std::span<double> x) override {
    if (x[3] >= M_PI) {  // intake event: the charge just collected burns one event later
      x[3] -= M_PI;
      d_.m_burning = d_.m_latched;
      d_.m_latched = x[2];
      x[2] = 0.0;
      ++intake_events_;
    }
    if (d_.shifting && t >= d_.t_shift + shift_time_ - 1e-9 * shift_time_) {
      d_.gear = d_.to;
      d_.shifting = false;
    }
    if (!d_.shifting) decide_shift(t);
  }

  // ---- Snapshots (iterative coupling): x is the host's, the discrete state is ours ------------
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    save_value(slot, Saved{d_, shifts_.size(), intake_events_});
  }
  void restore_state(const SavedState& s) override {
    const auto& v = saved_value<Saved>(s);
    d_ = v.d;
    shifts_.resize(v.shifts);
    intake_events_ = v.intake_events;
  }

  json statistics() const override { return {{"intake_events", intake_events_}, {"shifts", shifts_.size()}}; }
  json report() const override {
    json s = json::array();
    for (const auto& sh : shifts_) s.push_back({{"time", sh.t}, {"from", sh.from}, {"to", sh.to}});
    return {{"shifts", s}, {"gear_ratios", ratios_}, {"converter_coupling_point", converter_.coupling_point()}};
  }

 private:
  struct Discrete {
    int gear = 1, to = 1;
    bool shifting = false;
    double t_shift = 0.0;
    double m_latched = 0.0, m_burning = 0.0;  // g: charge of the last event, of the one before
  };
  struct Shift {
    double t;
    int from, to;
  };
  struct Saved {
    Discrete d;
    std::size_t shifts;
    long intake_events;
  };
  static constexpr std::size_t kKeptShifts = 64;

  static PortSpec with(PortSpec p, std::vector<std::string> e) {
    p.elements = std::move(e);
    return p;
  }
  // sf_car's shift schedule (vehicle speeds in mph) as output shaft speeds: final drive 3.23,
  // wheel radius 1 ft, so omega_out = 3.23 * 0.44704 / 0.3048 * mph = 4.7373 * mph.
  static json upshift_default() {
    const double k = 3.23 * 0.44704 / 0.3048;
    return json::array({{0.0, 10 * k, 30 * k, 50 * k}, {25.0, 10 * k, 30 * k, 50 * k}, {35.0, 15 * k, 30 * k, 50 * k},
                        {50.0, 23 * k, 41 * k, 60 * k}, {90.0, 40 * k, 70 * k, 100 * k}});
  }
  static json downshift_default() {
    const double k = 3.23 * 0.44704 / 0.3048;
    return json::array({{0.0, 0.0, 5 * k, 20 * k}, {5.0, 0.0, 5 * k, 20 * k}, {40.0, 0.0, 5 * k, 25 * k},
                        {50.0, 0.0, 5 * k, 30 * k}, {90.0, 0.0, 30 * k, 50 * k}});
  }

  void check(const Params& p) const {
    if (ratios_.empty()) throw ParameterError("/gear_ratios", "expected at least one gear ratio, found none");
    for (std::size_t g = 0; g < ratios_.size(); ++g)
      if (!(ratios_[g] > 0.0) || !std::isfinite(ratios_[g]))
        throw ParameterError("/gear_ratios/" + std::to_string(g),
                             "expected a positive gear ratio, found " + std::to_string(ratios_[g]));
    const std::size_t n = ratios_.size();
    if (p.integer("initial_gear") > long(n))
      throw ParameterError("/initial_gear", "expected a gear in [1, " + std::to_string(n) + "], found " +
                                                std::to_string(p.integer("initial_gear")));
    for (const auto& [name, t] : {std::pair<const char*, const Table*>{"upshift", &up_}, {"downshift", &down_}})
      if (n > 1 && t->columns() != n - 1)
        throw ParameterError(std::string("/") + name, "expected rows [theta, one speed per shift] with " +
                                                          std::to_string(n - 1) + " speeds for " + std::to_string(n) +
                                                          " gears, found " + std::to_string(t->columns()));
    // Hysteresis: a downshift speed below the upshift speed that led into the gear.
    for (std::size_t g = 0; g + 1 < n; ++g)
      for (double th : up_.x)
        if (!(down_(th, g) < up_(th, g)))
          throw ParameterError("/downshift",
                               "the downshift to gear " + std::to_string(g + 1) + " at theta = " + std::to_string(th) +
                                   " deg is not below the upshift from it (no hysteresis: the gearbox would hunt)");
    const Table c = p.table("converter");
    if (!(c.x.front() == 0.0 && c.x.back() < 1.0))
      throw ParameterError("/converter", "expected speed ratios from 0 up to a coupling point below 1");
    for (std::size_t i = 0; i < c.x.size(); ++i)
      if (!(c.y[0][i] > 0.0) || c.y[1][i] * c.x[i] > 1.0)
        throw ParameterError("/converter/" + std::to_string(i),
                             "expected K > 0 and torque ratio * speed ratio <= 1 (a converter makes no energy)");
  }

  double ratio(double t) const {
    if (!d_.shifting) return ratios_[std::size_t(d_.gear - 1)];
    return en::shifting_ratio(ratios_[std::size_t(d_.gear - 1)], ratios_[std::size_t(d_.to - 1)], d_.t_shift,
                              shift_time_, t);
  }

  Operating operating(double t, std::span<const double> x, double w_out) const {
    Operating o;
    const double w_e = x[0], p_m = x[1];
    if (!(w_e > kStallSpeed))
      throw StepFailure("engine_gearbox: the engine stalled at t = " + std::to_string(t) + " s (crank speed " +
                        std::to_string(w_e) + " rad/s; below " + std::to_string(kStallSpeed) +
                        " rad/s the mean-value pumping law does not hold)");
    o.theta = throttle_(t);
    o.ratio = ratio(t);
    o.m_ai = cc_.throttle_flow(o.theta, p_m);
    o.m_ao = en::CrossleyCook::pumping(w_e, p_m);
    o.T_e = cc_.torque(d_.m_burning, w_e);
    o.w_t = o.ratio * w_out;
    o.conv = converter_(w_e, o.w_t);
    o.T_out = o.ratio * o.conv.turbine;
    return o;
  }

  void decide_shift(double t) {
    const double w_out = inputs().at(0, t)[0], theta = throttle_(t);
    const int n = int(ratios_.size());
    int to = d_.gear;
    if (d_.gear < n && w_out > up_(theta, std::size_t(d_.gear - 1))) to = d_.gear + 1;
    else if (d_.gear > 1 && w_out < down_(theta, std::size_t(d_.gear - 2))) to = d_.gear - 1;
    if (to == d_.gear) return;
    d_.shifting = true;
    d_.to = to;
    d_.t_shift = t;
    if (shifts_.size() < kKeptShifts) shifts_.push_back({t, d_.gear, to});
    else log_warning("more than {} shifts: the report lists the first {}", kKeptShifts, kKeptShifts);
  }

  static constexpr double kStallSpeed = 10.0;  // rad/s

  Table throttle_;
  double J_, w0_;
  std::vector<double> ratios_;
  Table up_, down_;
  double shift_time_;
  en::TorqueConverter converter_;
  en::CrossleyCook cc_;
  Discrete d_;
  std::vector<Shift> shifts_;
  long intake_events_ = 0;
};

}  // namespace

STRIDE_PLUGIN(EngineGearbox)
