// A force element with a table parameter (mechanism tests): a vertical spring whose upward
// force is a piecewise-linear table of the attachment point's height, with viscous damping.
#include <stride/force_element.hpp>
#include <stride/stride.hpp>

using namespace stride;

class TableSpring final : public ForceElement {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "test_table_spring";
    i.version = "1.0";
    i.description = "upward force F(y) from a table of the attachment point's height, minus damping * y velocity";
    ParamSpec t;
    t.name = "force_table";
    t.type = ParamType::table;
    t.default_value = json::array({json::array({0.0, 0.0}), json::array({1.0, 0.0})});
    t.unit = "N";
    t.column_units = {"m", "N"};
    t.doc = "rows [height, upward force]";
    i.parameters = {t, real_param("damping", 0.0, "N*s/m", "viscous damping along y", 0.0)};
    return i;
  }
  explicit TableSpring(const Params& p) : force_(p.table("force_table")), c_(p.real("damping")) {}
  void evaluate(const ForceState& s, Wrench& w) const override {
    w.force = Eigen::Vector3d(0.0, force_(s.position.y()) - c_ * s.velocity.y(), 0.0);
    w.torque.setZero();
  }

 private:
  Table force_;
  double c_;
};

STRIDE_FORCE_ELEMENT(TableSpring)
