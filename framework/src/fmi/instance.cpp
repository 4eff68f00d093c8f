// What FMI 1, FMI 2 and FMI 3 instances share: the log sink, the ports, unit conversion at the FMU's
// boundary (see instance.hpp).
#include "fmi/instance.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include <string.h>

#include "fmi/limits.hpp"
#include "fmi/values.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host::fmi {

namespace {

const char* const kStatus[] = {"ok", "warning", "discard", "error", "fatal", "pending"};
const char* const kStatusName[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};

// At most kMaxLogMessage bytes of `text` (cut at a character boundary, "..." appended), as a
// plugin's message is cut.
std::string cut(const char* text) {
  if (!text) return "";
  const std::size_t n = ::strnlen(text, kMaxLogMessage + 1);
  if (n <= kMaxLogMessage) return std::string(text, n);
  std::size_t end = kMaxLogMessage;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // inside a UTF-8 sequence
  return std::string(text, end) + "...";
}

}  // namespace

void LogSink::log(int status, const char* category, const char* message) {
  const bool known = status >= 0 && status <= 5;
  const char* s = known ? kStatus[status] : "?";
  std::string line = std::string(s) + (category && *category ? " [" + cut(category) + "]" : "") + ": " + cut(message);
  if (logger) {
    // OK and pending are information, warning a warning, discard/error/fatal errors; the
    // status is the rate-limited site.
    const LogLevel level = status <= 0 || status == 5 ? LogLevel::info
                           : status == 1              ? LogLevel::warning
                                                      : LogLevel::error;
    if (level >= logger->threshold()) logger->write(level, LogFormat("", known ? kStatusName[status] : "fmu", 0), line);
  } else {
    std::cerr << "fmu \"" << instance << "\": " << line << "\n";
  }
  if (status >= 1) {
    if (recent.size() >= 4) recent.erase(recent.begin());
    recent.push_back(line);
  }
}

std::string LogSink::tail() const {
  if (recent.empty()) return "";
  std::string s = "; the FMU said: ";
  for (std::size_t i = 0; i < recent.size(); ++i) s += (i ? " | " : "") + recent[i];
  return s;
}

Io io_of(const Variable& v, std::size_t size) {
  return {&v, v.value_reference, v.type, size, 0, v.unit_factor, v.unit_offset, {}, v.feedthrough};
}

namespace {

// The ports of one causality: one per variable, or per FMI 2 structured array (x[1]..x[n]).
template <class Add>
void each_port(const ModelDescription& md, const Shape& shape, const char* causality, Add&& add) {
  for (std::size_t i = 0; i < md.variables.size(); ++i) {
    const Variable& v = md.variables[i];
    if (v.causality != causality || !is_numeric(v.type) || shape.size[i] == 0) continue;
    const std::vector<std::size_t> run = structured_array(md, i);
    if (run.empty()) {
      add(io_of(v, shape.size[i]));
      continue;
    }
    Io io = io_of(v, run.size());
    io.label = structured_array_name(v);
    for (std::size_t j : run) {
      io.vrs.push_back(md.variables[j].value_reference);
      io.feedthrough = io.feedthrough || md.variables[j].feedthrough;
    }
    add(std::move(io));
    i = run.back();
  }
}

}  // namespace

Interface::Interface(const ModelDescription& md, const Shape& shape) {
  each_port(md, shape, "input", [&](Io io) {
    scratch_size = std::max(scratch_size, io.size);
    in.push_back(std::move(io));
  });
  std::size_t offset = 0;
  each_port(md, shape, "output", [&](Io io) {
    io.offset = offset;
    offset += io.size;
    scratch_size = std::max(scratch_size, io.size);
    any_feedthrough = any_feedthrough || io.feedthrough;
    out.push_back(std::move(io));
  });
}

void Interface::observe(const ModelDescription& md, const Shape& shape, const std::vector<std::string>& names) {
  std::vector<char> state(md.variables.size(), 0);
  for (std::size_t d : md.derivatives)
    if (md.variables[d].derivative_of >= 0) state[std::size_t(md.variables[d].derivative_of)] = 1;
  std::size_t offset = out.empty() ? 0 : out.back().offset + out.back().size;
  for (const std::string& name : names) {
    const Variable* v = md.find(name);
    if (!v || !observable(*v)) continue;
    const std::size_t i = std::size_t(v - md.variables.data());
    if (shape.size[i] == 0) continue;
    Io io = io_of(*v, shape.size[i]);
    io.label = name == v->name ? std::string() : name;
    io.offset = offset;
    // Unknown dependencies: depends on the inputs at once, unless a parameter or a state.
    io.feedthrough = !v->is_parameter() && !state[i] && !in.empty();
    offset += io.size;
    scratch_size = std::max(scratch_size, io.size);
    any_feedthrough = any_feedthrough || io.feedthrough;
    out.push_back(std::move(io));
  }
}

namespace {

std::string port_doc(const Variable& v, int version) {
  std::string d = (v.description.empty() ? std::string() : v.description + "; ") + type_name(v.type, version) +
                  (v.type == VarType::boolean ? " (0 or 1)" : "") + ", value reference " +
                  std::to_string(v.value_reference);
  if (!v.items.empty()) d += "; " + v.items;
  if (v.negated)
    d += v.type == VarType::boolean ? "; negated alias: 1 - the FMU's value"
                                    : "; negated alias: the FMU's value negated";
  if (!v.fmu_unit.empty())
    d += "; in the FMU: " + v.fmu_unit + " = " + number_text(v.unit_factor) + " " + v.unit +
         (v.unit_offset != 0.0 ? " + " + number_text(v.unit_offset) : std::string()) + ", converted";
  return d;
}

}  // namespace

std::vector<PortSpec> port_specs(const ModelDescription& md, const Shape& shape,
                                 const std::vector<std::string>& observed) {
  Interface io(md, shape);
  io.observe(md, shape, observed);
  auto unit = [](const Variable& v) { return is_real(v.type) && !v.unit.empty() ? v.unit : std::string("1"); };
  std::vector<PortSpec> out;
  for (const Io& p : io.in) out.push_back(input(p.name(), p.size, unit(*p.var), port_doc(*p.var, md.version)));
  for (const Io& p : io.out)
    out.push_back(output(p.name(), p.size, unit(*p.var), port_doc(*p.var, md.version), p.feedthrough));
  return out;
}

Instance::Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p, const std::string& name)
    : fmu_(std::move(fmu)),
      me_(model_exchange),
      shape_(fmi::shape(fmu_->md, p.values())),
      io_(fmu_->md, shape_),
      params_(p) {
  log_.instance = name;
  fmu_->instances.add(name);
}

void Instance::observe(const std::vector<PortSpec>& ports) {
  std::vector<std::string> names;
  for (const PortSpec& p : ports)
    if (p.direction == Direction::output &&
        std::none_of(io_.out.begin(), io_.out.end(), [&](const Io& io) { return io.name() == p.name; }))
      names.push_back(p.name);
  io_.observe(fmu_->md, shape_, names);
  scratch_.resize(io_.scratch_size);
  bytes_.resize(io_.scratch_size);
}

void Instance::set_inputs(Inputs& inputs, double t) {
  for (std::size_t k = 0; k < io_.in.size(); ++k) {
    const Io& io = io_.in[k];
    std::span<const double> u = inputs.at(k, t);
    if (io.converted()) {
      for (std::size_t i = 0; i < u.size(); ++i) scratch_[i] = (u[i] - io.shift) / io.factor;
      u = {scratch_.data(), u.size()};
    }
    set_numbers(io, u, t);
  }
  if (texts_) set_text_inputs(t);
}

std::vector<std::string> Instance::get_texts(const Io& io, double t) {
  if (io.type == VarType::string) return get_strings(io, t);
  std::vector<std::string> out;
  for (const std::vector<std::uint8_t>& bytes : get_binaries(io, t)) out.emplace_back(bytes.begin(), bytes.end());
  return out;
}

const Variable& Instance::text_variable(const std::string& name, bool input) const {
  const Variable* v = fmu_->md.find(name);
  if (!v || (v->type != VarType::string && v->type != VarType::binary) || (input && v->causality != "input"))
    throw std::invalid_argument("\"" + name + "\" is no String or Binary " + (input ? "input" : "variable") +
                                " of the FMU");
  return *v;
}

std::size_t Instance::text_size(const std::string& name) const {
  const Variable& v = text_variable(name, false);
  return shape_.size[static_cast<std::size_t>(&v - fmu_->md.variables.data())];
}

// The manifest's start value of an input, else the FMU's; elements beyond those given empty.
std::vector<std::string> Instance::text_start(const Variable& v, std::size_t size) const {
  const auto& given = params_.values();
  const auto it = given.find(v.name);
  const json& value = it != given.end() ? *it : v.start;
  std::vector<std::string> out = value.is_null() ? std::vector<std::string>() : json_values<std::string>(value, size);
  out.resize(size);
  if (v.type == VarType::binary)
    for (std::string& x : out) {
      const std::vector<std::uint8_t> bytes = from_hex(x);
      x.assign(bytes.begin(), bytes.end());
    }
  return out;
}

std::shared_ptr<TextSignal> Instance::text_output(const std::string& name, std::size_t element) {
  for (const TextOut& x : text_out_)
    if (x.io.name() == name) return x.signals.at(element);
  const Variable& v = text_variable(name, false);
  const std::size_t size = text_size(name);
  if (element >= size) throw std::out_of_range("\"" + name + "\" has " + std::to_string(size) + " element(s)");
  TextOut out{io_of(v, size), {}, {}};
  out.io.label = name == v.name ? std::string() : name;
  for (std::size_t e = 0; e < size; ++e) {
    out.signals.push_back(std::make_shared<TextSignal>(v.type == VarType::binary));
    out.readers.push_back(out.signals.back()->add_reader());
  }
  text_out_.push_back(std::move(out));
  texts_ = true;
  return text_out_.back().signals[element];
}

void Instance::text_input(const std::string& name, std::size_t element, std::shared_ptr<TextSignal> source) {
  const Variable& v = text_variable(name, true);
  auto it = std::find_if(text_in_.begin(), text_in_.end(), [&](const TextIn& x) { return x.io.var == &v; });
  if (it == text_in_.end()) {
    const std::size_t size = text_size(v.name);
    std::vector<std::string> start = text_start(v, size);
    text_in_.push_back({io_of(v, size), start, start, {}});
    it = std::prev(text_in_.end());
  }
  if (element >= it->io.size)
    throw std::out_of_range("\"" + name + "\" has " + std::to_string(it->io.size) + " element(s)");
  const std::size_t reader = source->add_reader();
  it->feeds.push_back({element, std::move(source), reader, 0});
  texts_ = true;
}

// Results.csv reads the values from the step's start on (from a snapshot's time when the host
// may go back there).
void Instance::publish_texts_now(double t, double from) {
  for (TextOut& x : text_out_) {
    std::vector<std::string> values = get_texts(x.io, t);
    for (std::size_t e = 0; e < x.signals.size() && e < values.size(); ++e) {
      x.signals[e]->set_floor(x.readers[e], std::min(from, snapshot_t_));
      x.signals[e]->publish(t, values[e]);
    }
  }
}

void Instance::set_text_inputs(double t) {
  const double from = text_time_, tol = 1e-9 * std::max(1.0, std::abs(from));
  for (TextIn& x : text_in_) {
    bool changed = false;
    for (TextFeed& f : x.feeds) {
      f.source->set_floor(f.reader, std::min(from, snapshot_t_));
      const TextSignal::Entry& e = f.source->at(from, tol);
      if (e.serial == 0 || e.serial == f.serial) continue;  // nothing published yet: the start value
      x.values[f.element] = e.value;
      f.serial = e.serial;
      changed = true;
    }
    if (changed) set_texts(x.io, x.values, t);
  }
}

void Instance::get_outputs(std::span<double> y, double t) {
  for (const Io& io : io_.out) {
    const std::span<double> part = y.subspan(io.offset, io.size);
    get_numbers(io, part, t);
    if (io.converted())
      for (double& x : part) x = x * io.factor + io.shift;
  }
}

Discrete Instance::settle_events(double t, std::string& end) {
  for (int rounds = 1;; ++rounds) {
    if (rounds > 1000)
      throw StepFailure("event iteration of the FMU did not settle in 1000 rounds at t = " + fmt_time(t));
    const Discrete d = update_discrete(t);
    if (d.terminate)
      end = "the FMU asked to end the simulation at t = " + fmt_time(t) + " (event update: terminateSimulation)" +
            log().tail();
    if (d.terminate || !d.again) return d;
  }
}

void Instance::set_parameters(bool structural, double t) {
  const auto& given = params_.values();
  const auto& vars = fmu_->md.variables;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const Variable& v = vars[i];
    if ((v.causality == "structuralParameter") != structural || !(v.is_parameter() || v.has_settable_start())) continue;
    auto it = given.find(v.name);
    if (it == given.end() || *it == v.start) continue;  // the FMU starts from its own start values
    setting_ = v.name;
    set_value(v, shape_.size[i], *it, t);
  }
  setting_.clear();
}

std::string fmt_time(double t) {
  std::ostringstream o;
  o.precision(12);
  o << t;
  return o.str();
}

std::unique_ptr<Instance> make_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                        const std::string& name) {
  if (fmu->md.version == 3) return make_fmi3_instance(std::move(fmu), model_exchange, p, name);
  if (fmu->md.version == 1) return make_fmi1_instance(std::move(fmu), model_exchange, p, name);
  return make_fmi2_instance(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi

namespace stride::host::fmi {

std::vector<std::uint8_t> from_hex(const std::string& text) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("\"" + text + "\" is not hexadecimal (two digits 0-9, a-f per byte)");
  };
  const std::size_t from = text.rfind("0x", 0) == 0 ? 2 : 0;
  if ((text.size() - from) % 2) throw std::invalid_argument("\"" + text + "\" has an odd number of hexadecimal digits");
  std::vector<std::uint8_t> out;
  for (std::size_t i = from; i < text.size(); i += 2)
    out.push_back(std::uint8_t(digit(text[i]) * 16 + digit(text[i + 1])));
  return out;
}

std::string to_hex(const std::uint8_t* data, std::size_t size) {
  static const char* const digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) out += digits[data[i] >> 4], out += digits[data[i] & 15];
  return out;
}

}  // namespace stride::host::fmi
