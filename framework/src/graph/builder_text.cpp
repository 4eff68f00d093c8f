// The builder's String and Binary ports (an FMU's variables of those types): their connections
// and their columns.
#include "graph/builder_detail.hpp"
#include "core/text_signal.hpp"

namespace stride::host {
using namespace builder_detail;

// ---- String and Binary ports ------------------------------------------------------------

// What the other end of a String or Binary connection is, for messages.
std::string GraphBuilder::text_partner(const Node& n, const std::string& port) const {
  if (const TextPortSpec* t = n.text_port(port)) return std::string("a ") + t->type() + " variable";
  const int i = n.port_index(port);
  if (i >= 0)
    return (n.fmu ? std::string("a numeric port of an FMU") : "a port of plugin " + n.plugin) + ": " +
           describe_port(n.ports[std::size_t(i)]);
  return "no port or variable of subsystem \"" + n.name + "\"";
}

// A connection naming a String or Binary variable at either end (true: made or refused here).
bool GraphBuilder::text_connection(const ConnectionConfig& cc, Node* src, Node* dst) {
  const TextPortSpec* from = src ? src->text_port(cc.from_port) : nullptr;
  const TextPortSpec* to = dst ? dst->text_port(cc.to_port) : nullptr;
  if (!from && !to) return false;
  if (src && dst) add_text_connection(cc, *src, from, *dst, to);
  return true;
}

// A String feeds a String input of another FMU and a Binary a Binary input: the value the
// source held at the latest communication point, set with the destination's inputs.
void GraphBuilder::add_text_connection(const ConnectionConfig& cc, Node& src, const TextPortSpec* from, Node& dst,
                                       const TextPortSpec* to) {
  const std::string type = (from ? from : to)->type();
  if (!from || !to || from->binary != to->binary) {
    const bool at_to = from != nullptr;
    error(cc.pointer + (at_to ? "/to" : "/from"),
          "\"" + (at_to ? cc.from_text : cc.to_text) + "\" is " + with_article(type) +
              " variable of an FMU: it connects only to " + with_article(type) + (at_to ? " input" : " variable") +
              " of an FMU, and \"" + (at_to ? cc.to_text : cc.from_text) + "\" is " +
              (at_to ? text_partner(dst, cc.to_port) : text_partner(src, cc.from_port)));
    return;
  }
  bool ok = true;
  auto refuse = [&](const std::string& where, const std::string& why) {
    error(cc.pointer + where, why);
    ok = false;
  };
  if (from->input())
    refuse("/from",
           "\"" + cc.from_text + "\" is an input: a connection reads an output (or a variable that is no input)");
  if (!to->input())
    refuse("/to",
           "\"" + cc.to_text + "\" is no input (causality \"" + to->causality + "\"): a connection feeds an input");
  const bool ranged = cc.from_first || cc.from_count || cc.to_first || cc.to_count;
  if (ranged && !from->array && !to->array)
    refuse("/from", "a " + type + " connection takes the whole variable: remove the element range");
  if (cc.factor != 1.0 || cc.offset != 0.0)
    refuse("/transformation", "a " + type + " value takes no transformation (factor and offset are for numbers)");
  if (cc.extrapolator.pointer != cc.pointer && cc.extrapolator.plugin != "zoh")
    refuse("/extrapolator", "a " + type +
                                " connection passes the value held at each communication point and takes no "
                                "extrapolator (\"" +
                                cc.extrapolator.plugin + "\"): remove it");
  auto* out = dynamic_cast<TextPorts*>(src.sub.get());
  auto* in = dynamic_cast<TextPorts*>(dst.sub.get());
  if (!ok || !out || !in) return;
  // Element ranges and sizes as for numeric ports (an FMI 3 array's size from its structural
  // parameters); element by element, each one fed once.
  PortSpec so, di;
  so.name = cc.from_port, so.size = from->size;
  di.name = cc.to_port, di.size = to->size;
  if (!ranges_ok(cc, so, {0, cc.from_first, cc.from_count}, di, {0, cc.to_first, cc.to_count})) return;
  const std::size_t count = cc.to_count ? cc.to_count : di.size;
  std::vector<std::string>& fed = text_fed_[{&dst, to->name}];
  fed.resize(di.size);
  for (std::size_t e = cc.to_first; e < cc.to_first + count; ++e)
    if (!fed[e].empty()) return refuse("/to", "input \"" + cc.to_text + "\" is already fed by " + fed[e]);
  for (std::size_t e = cc.to_first; e < cc.to_first + count; ++e) fed[e] = cc.pointer;
  created(cc.pointer, [&] {
    for (std::size_t i = 0; i < count; ++i)
      in->text_input(to->name, cc.to_first + i, out->text_output(cc.from_port, cc.from_first + i));
    ++graph_->text_connections;
    return true;
  });
}

// One column of a String or Binary port (not an input: those are what a connection set), per
// element of an array, named as a numeric array's.
void GraphBuilder::add_text_column(Node& n, const std::string& name, const TextPortSpec& t, const std::string& ptr) {
  if (t.input()) {
    error(ptr, "\"" + n.name + "." + name + "\" is " + with_article(t.type()) +
                   " input: results.csv records outputs and other variables, not inputs; record what feeds it");
    return;
  }
  auto* ports = dynamic_cast<TextPorts*>(n.sub.get());
  if (!ports || !recorded_text_.insert({&n, t.name}).second) return;
  created(ptr, [&] {
    for (std::size_t e = 0; e < t.size; ++e) {
      n.text_cols.push_back({graph_->columns.size(), ports->text_output(name, e)});
      graph_->columns.push_back(n.name + "." + name + (t.size > 1 ? "." + std::to_string(e) : std::string()));
    }
    n.recorded = true;
    return true;
  });
}

}  // namespace stride::host
