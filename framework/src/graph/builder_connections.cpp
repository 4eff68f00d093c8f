// The builder's add_connections: element ranges, sizes, units and conversions, the
// extrapolators.
#include "graph/builder_detail.hpp"
#include "input/units.hpp"
#include "core/run_log.hpp"

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
  error(pointer, msg + "; subsystems: " + listed(sub_names_));
  return nullptr;
}

int GraphBuilder::find_port(const Node& n, const std::string& port, Direction dir, const std::string& pointer) {
  int i = n.port_index(port);
  std::vector<std::string> candidates, described;
  for (const auto& p : n.ports)
    if (p.direction == dir) candidates.push_back(p.name), described.push_back(describe_port(p));
  // The String and Binary ports too (named right, they take their own path before this).
  for (const TextPortSpec& t : n.text_ports)
    if (t.input() == (dir == Direction::input)) candidates.push_back(t.name), described.push_back(describe_port(t));
  const char* what = dir == Direction::input ? "input" : "output";
  if (i < 0) {
    std::string msg = "subsystem \"" + n.name + "\" has no port \"" + port + "\"";
    if (auto c = closest(port, candidates); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(pointer, msg + "; its " + what + "s: " + listed(described));
    return -1;
  }
  if (n.ports[static_cast<std::size_t>(i)].direction != dir) {
    error(pointer, "expected an " + std::string(what) + " port, found \"" + n.name + "." + port + "\", which is an " +
                       (dir == Direction::input ? "output" : "input") + "; " + what + "s of \"" + n.name +
                       "\": " + listed(described));
    return -1;
  }
  return i;
}

// "u[1]" may be the element the model itself names "u[1]" (an FMU's structured name, with the
// index as the FMU counts) or element 1 of port "u" in the manifest's element syntax (from 0).
// Where both exist and differ, the connection is refused with both readings and how to write each.
GraphBuilder::End GraphBuilder::connection_end(const Node& n, const std::string& written, const std::string& port,
                                               std::size_t first, std::size_t count, Direction dir,
                                               const std::string& pointer) {
  const auto facing = [&](int k) { return k >= 0 && n.ports[std::size_t(k)].direction == dir; };
  std::optional<End> own;  // the model's name: one element, or a whole port (its name as written)
  if (auto it = n.element_names.find(written); it != n.element_names.end())
    own = End{int(it->second.first), it->second.second, 1};
  else if (n.port_index(written) >= 0) own = End{n.port_index(written), 0, 0};
  if (own && !facing(own->port)) own.reset();
  int syntax = written != port && facing(n.port_index(port)) ? n.port_index(port) : -1;
  const std::size_t size = syntax >= 0 ? n.ports[std::size_t(syntax)].size : 0;
  if (own && first + std::max<std::size_t>(count, 1) > size) syntax = -1;  // out of range: only the model's name
  if (own && syntax >= 0) {
    if (own->port == syntax && own->first == first && (own->count ? own->count : size) == (count ? count : size))
      return *own;
    const std::string& p = n.ports[std::size_t(syntax)].name;
    std::string other;  // the model's name of the element the syntax gives
    for (const auto& [name, at] : n.element_names)
      if (count == 1 && at == std::pair<std::size_t, std::size_t>(std::size_t(syntax), first)) other = name;
    const auto range = [&](std::size_t a, std::size_t c) {
      return n.name + "." + p + "[" + std::to_string(a) + ":" + std::to_string(a + c) + "]";
    };
    error(pointer, "\"" + n.name + "." + written + "\" can be read two ways: the FMU's variable \"" + written +
                       "\", element " + std::to_string(own->first) + " of port \"" + p + "\" (write \"" +
                       range(own->first, 1) + "\"), or element " + std::to_string(first) + " of port \"" + p +
                       "\" counted from 0" + (other.empty() ? "" : ", the FMU's variable \"" + other + "\"") +
                       " (write \"" + range(first, count ? count : size - first) + "\")");
    return {};
  }
  if (own) return *own;
  if (syntax >= 0) return End{syntax, first, count};
  return End{find_port(n, port, dir, pointer), first, count};  // the error, with did-you-mean
}

GraphBuilder::End GraphBuilder::connection_end(const ConnectionConfig& cc, const Node* n, bool from) {
  if (!n) return {};
  const std::string& sub = from ? cc.from_subsystem : cc.to_subsystem;
  const std::string written = (from ? cc.from_text : cc.to_text).substr(sub.size() + 1);
  if (from)
    return connection_end(*n, written, cc.from_port, cc.from_first, cc.from_count, Direction::output,
                          cc.pointer + "/from");
  return connection_end(*n, written, cc.to_port, cc.to_first, cc.to_count, Direction::input, cc.pointer + "/to");
}

// Element ranges inside their ports, and as many elements on both ends.
bool GraphBuilder::ranges_ok(const ConnectionConfig& cc, const PortSpec& so, const End& s, const PortSpec& di,
                             const End& d) {
  bool ok = true;
  const std::size_t s_first = s.first, s_count = s.count ? s.count : so.size;
  const std::size_t d_first = d.first, d_count = d.count ? d.count : di.size;
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
  const End s = connection_end(cc, src, true), d = connection_end(cc, dst, false);
  const int sp = s.port, dp = d.port;
  const LoadedPlugin* ep = resolve(cc.extrapolator, Kind::extrapolator, cc.extrapolator.pointer);
  if (sp < 0 || dp < 0) return;
  const PortSpec& so = src->ports[static_cast<std::size_t>(sp)];
  const PortSpec& di = dst->ports[static_cast<std::size_t>(dp)];
  bool ok = ranges_ok(cc, so, s, di, d);
  const std::size_t s_first = s.first, s_count = s.count ? s.count : so.size;
  const std::size_t d_first = d.first, d_count = d.count ? d.count : di.size;
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
