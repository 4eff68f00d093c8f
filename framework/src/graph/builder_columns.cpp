// The builder's add_record_columns: the columns of results.csv, patterns expanded.
#include <algorithm>
#include <set>

#include "fmi/model.hpp"
#include "graph/builder_detail.hpp"

namespace stride::host {
using namespace builder_detail;

void GraphBuilder::add_port_columns(Node& n, std::size_t pi) {
  const PortSpec& p = n.ports[pi];
  for (std::size_t e = 0; e < p.size; ++e) {
    std::string col = n.name + "." + p.name;
    if (p.size > 1) col += "." + (e < p.elements.size() ? p.elements[e] : std::to_string(e));
    n.record_cols.push_back(graph_->columns.size());
    n.record_elem.push_back(n.output_offset[pi] + e);
    n.recorded = true;
    graph_->columns.push_back(col);
  }
}

// The names of an FMU's variables beyond its outputs that the record chooses, by name or by
// pattern ("s.*", "*.der(*)"), each variable once. A pattern takes the variable's own name or
// else the first FMI 3 alias it matches; it never takes the independent variable (time is the
// first column already).
std::vector<std::string> GraphBuilder::recorded_fmu_variables(const std::string& sub, const FmuModel& fmu) {
  std::vector<std::string>& known = fmu_variables_[sub];
  for (const ModelVariable& v : fmu.variables())
    if ((v.observable || v.text_recordable) && v.causality != "independent") known.push_back(v.name);
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const std::string& entry : manifest_.record.variables) {
    const auto dot = entry.find('.');
    const std::string s = entry.substr(0, dot), port = entry.substr(dot + 1);
    if (s != sub && !(is_pattern(s) && pattern_match(s, sub))) continue;
    if (!is_pattern(port) || fmu.variable(port)) {
      add(port);
      continue;
    }
    for (const ModelVariable& v : fmu.variables()) {
      if (!v.observable || v.causality == "independent") continue;
      if (pattern_match(port, v.name)) add(v.name);
      else if (auto a = std::find_if(v.aliases.begin(), v.aliases.end(),
                                     [&](const std::string& n) { return pattern_match(port, n); });
               a != v.aliases.end())
        add(*a);
    }
  }
  return names;
}

// One entry of record/variables that is a pattern and names no port exactly: every output port
// of every subsystem it matches, in the subsystems' order and each one's port order (an FMU's
// outputs first, then its other variables in the order of modelDescription.xml). Ports recorded
// by an earlier entry are not repeated; a pattern that matches nothing is an error listing what
// there is.
void GraphBuilder::add_pattern_columns(const std::string& sub, const std::string& port, const std::string& ptr) {
  std::vector<Node*> nodes;
  if (!is_pattern(sub)) {
    if (Node* n = find_node(sub, ptr)) nodes.push_back(n);
    else return;
  } else {
    for (Node& n : graph_->nodes)
      if (pattern_match(sub, n.name)) nodes.push_back(&n);
    const bool failed =
        std::any_of(sub_names_.begin(), sub_names_.end(), [&](const std::string& n) { return pattern_match(sub, n); });
    if (nodes.empty() && !failed)
      error(ptr, "the pattern \"" + sub + "\" matches no subsystem; subsystems: " + listed(sub_names_));
    if (nodes.empty()) return;  // those it matches were not built, reported already
  }
  bool any = false, fmu = false;
  std::vector<std::string> there;
  for (Node* n : nodes) {
    for (std::size_t i = 0; i < n->ports.size(); ++i) {
      if (n->ports[i].direction != Direction::output) continue;
      there.push_back(n->name + "." + n->ports[i].name);
      if (!pattern_match(port, n->ports[i].name)) continue;
      any = true;
      if (recorded_.insert({n, i}).second) add_port_columns(*n, i);
    }
    // Its String and Binary ports after the numbers, by name or else the first alias matched.
    for (const TextPortSpec& t : n->text_ports) {
      if (t.input()) continue;
      const std::string* name = pattern_match(port, t.name) ? &t.name : nullptr;
      for (const std::string& a : t.aliases)
        if (!name && pattern_match(port, a)) name = &a;
      if (!name) continue;
      any = true;
      add_text_column(*n, *name, t, ptr);
    }
    const auto f = fmu_variables_.find(n->name);
    if (f == fmu_variables_.end()) continue;
    fmu = true;
    for (const std::string& v : f->second)
      if (std::find(there.begin(), there.end(), n->name + "." + v) == there.end()) there.push_back(n->name + "." + v);
  }
  if (any) return;
  const std::size_t shown = 40, more = there.size() > shown ? there.size() - shown : 0;
  there.resize(there.size() - more);
  error(ptr, "the pattern \"" + sub + "." + port + "\" matches no output" + (fmu ? " or recordable variable" : "") +
                 "; there are: " + listed(there) + (more ? " and " + std::to_string(more) + " more" : ""));
}

void GraphBuilder::add_record_columns() {
  add_named_columns();
  if (!manifest_.record.event_rows) return;
  // The rows at an event's time are written when the subsystem's step reaches it; another
  // subsystem's columns would need their values at that time after they have passed it.
  std::vector<std::string> recording;
  for (const Node& n : graph_->nodes)
    if (n.recorded) recording.push_back(n.name);
  if (recording.size() > 1)
    error("/record/event_rows", "event rows need every recorded column from one subsystem, found columns of " +
                                    listed(recording) + "; name one subsystem's variables in /record/variables");
}

void GraphBuilder::add_named_columns() {
  if (manifest_.record.variables.empty()) {
    for (Node& n : graph_->nodes)
      for (std::size_t i = 0; i < n.ports.size(); ++i)
        if (n.ports[i].direction == Direction::output) add_port_columns(n, i);
    return;
  }
  for (std::size_t i = 0; i < manifest_.record.variables.size(); ++i) {
    const auto& v = manifest_.record.variables[i];
    const std::string ptr = "/record/variables/" + std::to_string(i);
    auto dot = v.find('.');
    const std::string sub = v.substr(0, dot), port = v.substr(dot + 1);
    if (is_pattern(sub) || is_pattern(port)) {
      auto it = by_name_.find(sub);  // a name with "*" or "?" in it is itself first
      if (it == by_name_.end() || it->second->port_index(port) < 0) {
        add_pattern_columns(sub, port, ptr);
        continue;
      }
    }
    Node* n = find_node(sub, ptr);
    if (!n) continue;
    if (const TextPortSpec* text = n->text_port(port)) {
      add_text_column(*n, port, *text, ptr);
      continue;
    }
    const int pi = find_port(*n, port, Direction::output, ptr);
    if (pi >= 0 && recorded_.insert({n, std::size_t(pi)}).second) add_port_columns(*n, static_cast<std::size_t>(pi));
  }
}

}  // namespace stride::host
