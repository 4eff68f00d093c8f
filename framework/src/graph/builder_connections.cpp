// The builder's add_connections: element ranges, sizes, units and conversions, the
// extrapolators.
#include "graph/builder_detail.hpp"
#include "input/units.hpp"
#include "run/run_log.hpp"

namespace stride::host {
using namespace builder_detail;

namespace {

std::string unit_of(const PortSpec& p) { return p.unit.empty() ? "1" : p.unit; }

}  // namespace

// ---- add_connections ------------------------------------------------------------------------

void GraphBuilder::add_connections() {
  for (const auto& cc : manifest_.connections) add_connection(cc);
}

Node* GraphBuilder::find_node(const std::string& name, const std::string& pointer) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  const auto& declared = manifest_.declared_subsystems;
  if (std::find(sub_names_.begin(), sub_names_.end(), name) != sub_names_.end() ||
      std::find(declared.begin(), declared.end(), name) != declared.end())
    return nullptr;  // reported already
  std::string msg = "unknown subsystem \"" + name + "\"";
  if (auto c = closest(name, sub_names_); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
  error(pointer, msg + "; subsystems: " + list(sub_names_));
  return nullptr;
}

int GraphBuilder::find_port(const Node& n, const std::string& port, Direction dir, const std::string& pointer) {
  int i = n.port_index(port);
  std::vector<std::string> candidates, described;
  for (const auto& p : n.ports)
    if (p.direction == dir) candidates.push_back(p.name), described.push_back(describe_port(p));
  const char* what = dir == Direction::input ? "input" : "output";
  if (i < 0) {
    std::string msg = "subsystem \"" + n.name + "\" has no port \"" + port + "\"";
    if (auto c = closest(port, candidates); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(pointer, msg + "; its " + what + "s: " + list(described));
    return -1;
  }
  if (n.ports[static_cast<std::size_t>(i)].direction != dir) {
    error(pointer, "expected an " + std::string(what) + " port, found \"" + n.name + "." + port + "\", which is an " +
                       (dir == Direction::input ? "output" : "input") + "; " + what + "s of \"" + n.name +
                       "\": " + list(described));
    return -1;
  }
  return i;
}

// Element ranges inside their ports, and as many elements on both ends.
bool GraphBuilder::ranges_ok(const ConnectionConfig& cc, const PortSpec& so, const PortSpec& di) {
  bool ok = true;
  const std::size_t s_first = cc.from_first, s_count = cc.from_count ? cc.from_count : so.size;
  const std::size_t d_first = cc.to_first, d_count = cc.to_count ? cc.to_count : di.size;
  if (s_first >= so.size || s_count > so.size - s_first) {
    error(cc.pointer + "/from", "elements [" + std::to_string(s_first) + ", " + std::to_string(s_first + s_count) +
                                    ") out of range: " + cc.from_subsystem + "." + so.name + " has " +
                                    std::to_string(so.size) + " elements");
    ok = false;
  }
  if (d_first >= di.size || d_count > di.size - d_first) {
    error(cc.pointer + "/to", "elements [" + std::to_string(d_first) + ", " + std::to_string(d_first + d_count) +
                                  ") out of range: " + cc.to_subsystem + "." + di.name + " has " +
                                  std::to_string(di.size) + " elements");
    ok = false;
  }
  if (ok && s_count != d_count) {
    error(cc.pointer + "/to", "size mismatch: " + cc.from_text + " gives " + std::to_string(s_count) + " element(s), " +
                                  cc.to_text + " expects " + std::to_string(d_count));
    ok = false;
  }
  return ok;
}

void GraphBuilder::add_connection(const ConnectionConfig& cc) {
  Node* src = find_node(cc.from_subsystem, cc.pointer + "/from");
  Node* dst = find_node(cc.to_subsystem, cc.pointer + "/to");
  if (text_connection(cc, src, dst)) return;  // String and Binary variables, beside the ports
  int sp = src ? find_port(*src, cc.from_port, Direction::output, cc.pointer + "/from") : -1;
  int dp = dst ? find_port(*dst, cc.to_port, Direction::input, cc.pointer + "/to") : -1;
  const LoadedPlugin* ep = resolve(cc.extrapolator, Kind::extrapolator, cc.extrapolator.pointer);
  if (sp < 0 || dp < 0) return;
  const PortSpec& so = src->ports[static_cast<std::size_t>(sp)];
  const PortSpec& di = dst->ports[static_cast<std::size_t>(dp)];
  bool ok = ranges_ok(cc, so, di);
  const std::size_t s_first = cc.from_first, s_count = cc.from_count ? cc.from_count : so.size;
  const std::size_t d_first = cc.to_first, d_count = cc.to_count ? cc.to_count : di.size;
  // Equal texts need no units library (an FMU may name a unit UDUNITS-2 does not know);
  // different spellings of one unit (kg*m/s^2 and N) convert with scale 1, i.e. not at all.
  std::optional<UnitConversion> conversion = UnitConversion{};
  if (cc.unit_conversion && unit_of(so) != unit_of(di)) {
    std::string why;
    conversion = unit_conversion(unit_of(so), unit_of(di), &why);
    if (!conversion) {
      error(cc.pointer + "/to", "unit mismatch: " + cc.from_subsystem + "." + so.name + " is in " + unit_of(so) + ", " +
                                    cc.to_subsystem + "." + di.name + " expects " + unit_of(di) + " (" + why + ")");
      ok = false;
    }
  }
  const auto k = static_cast<std::size_t>(std::find(dst->inputs.begin(), dst->inputs.end(), std::size_t(dp)) -
                                          dst->inputs.begin());
  if (ok)
    for (const Link* other : dst->in_links[k])
      if (d_first < other->dst_offset + other->width && other->dst_offset < d_first + d_count) {
        error(cc.pointer + "/to", "input \"" + cc.to_text + "\" is already fed by " + other->config.pointer +
                                      " (each input element takes one connection)");
        ok = false;
      }
  if (!ok || !ep) return;
  Link link;
  link.config = cc;
  link.src = src;
  link.src_offset = src->output_offset[static_cast<std::size_t>(sp)] + s_first;
  link.width = s_count;
  link.dst = dst;
  link.dst_input = k;
  link.dst_offset = d_first;
  if (conversion && !conversion->identity()) {
    link.convert = true;
    link.scale = conversion->scale;
    link.offset = conversion->offset;
    graph_->conversions.push_back(
        cc.from_text + " -> " + cc.to_text + ": " + unit_of(so) + " to " + unit_of(di) + " (x " +
        number_text(conversion->scale) +
        (conversion->offset != 0.0 ? " + " + number_text(conversion->offset) : std::string()) + ")");
  }
  if (cc.factor != 1.0 || cc.offset != 0.0) {  // f x + o in the source's unit, then converted
    link.offset = link.scale * cc.offset + link.offset;
    link.scale = link.scale * cc.factor;
    link.convert = true;
    graph_->conversions.push_back(cc.from_text + " -> " + cc.to_text + ": transformation x " + number_text(cc.factor) +
                                  " + " + number_text(cc.offset) + " (in " + unit_of(so) + ")");
  }
  link.extrapolator = created(cc.extrapolator.pointer, [&] {
    return reg_.create_extrapolator(cc.extrapolator.plugin, in_manifest(cc.extrapolator));
  });
  if (!link.extrapolator) return;
  link.extrapolator->bind_logger(graph_->log->sink(
      "connection " + cc.from_text + " -> " + cc.to_text + " (extrapolator " + cc.extrapolator.plugin + ")",
      "connection " + cc.pointer, dst->plugin_inputs->clock()));
  if (!created(cc.extrapolator.pointer, [&] {
        link.extrapolator->timing({src->step, dst->step, manifest_.coupling.macro_step});
        return true;
      }))
    return;
  link.index = static_cast<int>(graph_->links.size());
  graph_->links.push_back(std::move(link));
  dst->in_links[k].push_back(&graph_->links.back());
  src->out_links.push_back(&graph_->links.back());
}

}  // namespace stride::host
