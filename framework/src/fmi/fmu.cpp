// FMUs as subsystems: unpacking, modelDescription.xml, binaries, and the FMI 2 / FMI 3
// instances behind Stride's Subsystem interface. See fmu.hpp for the order of things.
#include "fmi/fmu.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#include <boost/dll/shared_library.hpp>
#include <pugixml.hpp>

#include "stride/fmi/fmi2.h"
#include "stride/fmi/fmi3.h"
#include "stride/host/input/json_input.hpp"
#include "stride/host/load/registry.hpp"
#include "stride/host/run/supervise.hpp"
#include "input/units.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// The private temporary folder of one unpacked FMU.

class TempFolder;
std::mutex g_folders_mutex;
std::set<TempFolder*> g_folders;

class TempFolder {
 public:
  TempFolder() {
    std::string tmpl = (fs::temp_directory_path() / "stride-fmu-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw FmuError(std::string("cannot create a temporary folder: ") + std::strerror(errno));
    path_ = tmpl;
    owner_ = ::getpid();
    std::lock_guard<std::mutex> lock(g_folders_mutex);
    g_folders.insert(this);
  }
  ~TempFolder() {
    {
      std::lock_guard<std::mutex> lock(g_folders_mutex);
      g_folders.erase(this);
    }
    remove();
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }
  // Only the process that created the folder removes it: a forked run shares it with its parent.
  void remove() noexcept {
    if (path_.empty() || ::getpid() != owner_) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }

 private:
  fs::path path_;
  pid_t owner_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Unpacking (libzip). Entries are checked before anything is written: no absolute paths, no
// "..", bounded sizes.

constexpr std::uint64_t kMaxUnpackedBytes = std::uint64_t(4) << 30;  // 4 GiB
constexpr std::uint64_t kMaxEntries = 100000;

void unpack(const fs::path& file, const fs::path& into, const std::string& label) {
  int err = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw FmuError(label + ": not an FMU archive (a zip file expected): " + why);
  }
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{z};
  const zip_int64_t n = zip_get_num_entries(z, 0);
  if (n < 0 || std::uint64_t(n) > kMaxEntries)
    throw FmuError(label + ": the archive has " + std::to_string(n) + " entries (at most " + std::to_string(kMaxEntries) + ")");
  std::uint64_t total = 0;
  std::vector<char> buf(1 << 16);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      throw FmuError(label + ": entry " + std::to_string(i) + " of the archive cannot be read");
    const std::string name = st.name;
    const fs::path rel = fs::path(name).lexically_normal();
    if (rel.is_absolute() || name.empty() || (!rel.empty() && *rel.begin() == ".."))
      throw FmuError(label + ": archive entry \"" + name + "\" points outside the FMU (absolute or \"..\")");
    const fs::path dest = into / rel;
    if (name.back() == '/') {
      fs::create_directories(dest);
      continue;
    }
    total += (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    if (total > kMaxUnpackedBytes)
      throw FmuError(label + ": the archive unpacks to more than " + std::to_string(kMaxUnpackedBytes >> 30) + " GiB");
    fs::create_directories(dest.parent_path());
    zip_file_t* zf = zip_fopen_index(z, zip_uint64_t(i), 0);
    if (!zf) throw FmuError(label + ": archive entry \"" + name + "\" cannot be read: " + zip_strerror(z));
    std::ofstream out(dest, std::ios::binary);
    zip_int64_t got = 0;
    std::uint64_t written = 0;
    while ((got = zip_fread(zf, buf.data(), buf.size())) > 0) {
      written += std::uint64_t(got);
      if (written > st.size) break;
      out.write(buf.data(), got);
    }
    zip_fclose(zf);
    if (got < 0 || !out) throw FmuError(label + ": archive entry \"" + name + "\" cannot be unpacked into " + dest.string());
  }
}

// ---------------------------------------------------------------------------------------------
// modelDescription.xml

std::string line_of(const fs::path& xml, std::ptrdiff_t offset) {
  std::ifstream in(xml, std::ios::binary);
  std::size_t line = 1;
  char c;
  for (std::ptrdiff_t i = 0; i < offset && in.get(c); ++i)
    if (c == '\n') ++line;
  return std::to_string(line);
}

bool attr_bool(const pugi::xml_node& n, const char* name, bool def) {
  auto a = n.attribute(name);
  if (!a) return def;
  const std::string v = a.value();
  return v == "true" || v == "1";
}

std::optional<double> attr_number(const pugi::xml_node& n, const char* name, const std::string& where) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  const std::string v = a.value();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw FmuError(where + ": attribute " + name + "=\"" + v + "\" is not a number");
  return x;
}

json start_value(VarType t, const std::string& v, const std::string& where) {
  try {
    switch (t) {
      case VarType::real: {
        std::size_t used = 0;
        double x = std::stod(v, &used);
        if (used != v.size()) break;
        return x;
      }
      case VarType::integer:
      case VarType::enumeration: {
        std::size_t used = 0;
        long x = std::stol(v, &used);
        if (used != v.size()) break;
        return x;
      }
      case VarType::boolean:
        if (v == "true" || v == "1") return true;
        if (v == "false" || v == "0") return false;
        break;
      case VarType::string: return v;
    }
  } catch (const std::exception&) {
  }
  throw FmuError(where + ": start=\"" + v + "\" is not a value of the variable's type");
}

std::vector<long> index_list(const char* text) {
  std::vector<long> out;
  std::stringstream ss(text);
  for (long i; ss >> i;) out.push_back(i);
  return out;
}

}  // namespace

std::string platform_folder(int version) {
#if defined(__x86_64__) && defined(__linux__)
  return version == 2 ? "linux64" : "x86_64-linux";
#elif defined(__aarch64__) && defined(__linux__)
  return version == 2 ? "linux64" : "aarch64-linux";
#else
  return version == 2 ? "unknown" : "unknown";
#endif
}

ModelDescription read_model_description(const fs::path& xml, const std::string& label) {
  const std::string file = label + ": modelDescription.xml";
  std::error_code ec;
  if (!fs::is_regular_file(xml, ec)) throw FmuError(label + ": the archive has no modelDescription.xml");
  pugi::xml_document doc;
  pugi::xml_parse_result r = doc.load_file(xml.c_str());
  if (!r) throw FmuError(file + ": line " + line_of(xml, r.offset) + ": malformed XML: " + r.description());
  pugi::xml_node root = doc.child("fmiModelDescription");
  if (!root) throw FmuError(file + ": the root element is not <fmiModelDescription>");
  ModelDescription md;
  md.fmi_version = root.attribute("fmiVersion").value();
  if (md.fmi_version.rfind("2.", 0) == 0) md.version = 2;
  else if (md.fmi_version.rfind("3.", 0) == 0) md.version = 3;
  else
    throw FmuError(file + ": unsupported FMI version \"" + md.fmi_version + "\"; Stride reads FMI 2.0 and 3.0");
  md.model_name = root.attribute("modelName").value();
  md.token = root.attribute(md.version == 2 ? "guid" : "instantiationToken").value();
  md.description = root.attribute("description").value();
  md.generation_tool = root.attribute("generationTool").value();
  if (md.model_name.empty()) throw FmuError(file + ": <fmiModelDescription> has no modelName");
  if (auto cs = root.child("CoSimulation")) {
    md.has_cs = true;
    md.cs_identifier = cs.attribute("modelIdentifier").value();
    md.can_variable_step = attr_bool(cs, "canHandleVariableCommunicationStepSize", false);
    md.cs_can_get_set_state = attr_bool(cs, md.version == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState", false);
    if (md.cs_identifier.empty()) throw FmuError(file + ": <CoSimulation> has no modelIdentifier");
  }
  if (auto me = root.child("ModelExchange")) {
    md.has_me = true;
    md.me_identifier = me.attribute("modelIdentifier").value();
    md.me_can_get_set_state = attr_bool(me, md.version == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState", false);
    if (md.me_identifier.empty()) throw FmuError(file + ": <ModelExchange> has no modelIdentifier");
  }
  if (!md.has_cs && !md.has_me) throw FmuError(file + ": neither <CoSimulation> nor <ModelExchange> is declared");

  // Declared types: name -> (unit, min, max).
  struct TypeDef {
    std::string unit;
    std::optional<double> min, max;
  };
  std::map<std::string, TypeDef> types;
  // Unit definitions: name -> SI unit name, factor, offset (when Stride has a name for it).
  struct UnitDef {
    std::string si;
    double factor = 1.0, offset = 0.0;
  };
  std::map<std::string, UnitDef> units;
  for (auto u : root.child("UnitDefinitions").children("Unit")) {
    pugi::xml_node b = u.child("BaseUnit");
    if (!b) continue;
    std::map<std::string, int> exponents;
    for (const char* base : {"kg", "m", "s", "A", "K", "mol", "cd", "rad"}) exponents[base] = b.attribute(base).as_int(0);
    const std::string where = file + ": unit \"" + std::string(u.attribute("name").value()) + "\"";
    units[u.attribute("name").value()] = {si_unit_name(exponents), attr_number(b, "factor", where).value_or(1.0),
                                          attr_number(b, "offset", where).value_or(0.0)};
  }
  for (auto t : root.child("TypeDefinitions").children()) {
    if (md.version == 2) {
      pugi::xml_node v = t.first_child();
      types[t.attribute("name").value()] = {v.attribute("unit").value(), attr_number(v, "min", file), attr_number(v, "max", file)};
    } else {
      types[t.attribute("name").value()] = {t.attribute("unit").value(), attr_number(t, "min", file), attr_number(t, "max", file)};
    }
  }

  std::set<std::string> names;
  std::map<unsigned, std::size_t> by_vr;  // value reference -> index (FMI 3 dependencies)
  // FMI 3 structural parameters (array sizes) by value reference: their start values. Stride
  // sizes ports when the FMU is loaded, so they keep their start values.
  std::map<unsigned, long long> structural;
  if (md.version == 3)
    for (auto sv : root.child("ModelVariables").children())
      if (std::string(sv.attribute("causality").value()) == "structuralParameter" && sv.attribute("start"))
        structural[sv.attribute("valueReference").as_uint()] = sv.attribute("start").as_llong();
  std::size_t k = 0;
  for (auto sv : root.child("ModelVariables").children()) {
    ++k;
    Variable v;
    pugi::xml_node tn;  // the element with start/unit
    std::string type_name;
    if (md.version == 2) {
      if (std::string(sv.name()) != "ScalarVariable") continue;
      tn = sv.first_child();
      type_name = tn.name();
    } else {
      tn = sv;
      type_name = sv.name();
    }
    v.name = sv.attribute("name").value();
    const std::string where = file + ": variable " + std::to_string(k) + " \"" + v.name + "\"";
    if (v.name.empty()) throw FmuError(file + ": variable " + std::to_string(k) + " has no name");
    if (!names.insert(v.name).second) throw FmuError(where + ": declared twice");
    auto vr = sv.attribute("valueReference");
    if (!vr) throw FmuError(where + ": no valueReference");
    v.value_reference = vr.as_uint();
    v.causality = sv.attribute("causality") ? sv.attribute("causality").value() : "local";
    v.variability = sv.attribute("variability") ? sv.attribute("variability").value()
                                                 : (type_name == "Real" || type_name == "Float64" || type_name == "Float32" ? "continuous" : "discrete");
    v.description = sv.attribute("description").value();
    if (type_name == "Real" || type_name == "Float64") v.type = VarType::real;
    else if (type_name == "Integer" || type_name == "Int32") v.type = VarType::integer;
    else if (type_name == "Boolean") v.type = VarType::boolean;
    else if (type_name == "String") v.type = VarType::string;
    else if (type_name == "Enumeration") v.type = VarType::enumeration;
    else {
      // Types Stride does not exchange (Float32, Int8..UInt64, Binary, Clock): such a variable
      // may not be an input, output or parameter.
      if (v.causality == "input" || v.causality == "output" || v.causality == "parameter")
        throw FmuError(where + ": type " + type_name + " is not supported as " + v.causality +
                       " (Stride exchanges Float64/Real, Int32/Integer, Boolean, String and Enumeration)");
      continue;
    }
    if (md.version == 3 && sv.child("Dimension")) {
      // An array: a port (or a list parameter) of that many elements. A dimension is a fixed
      // start or the start value of a structural parameter.
      for (auto dim : sv.children("Dimension")) {
        long long n = 0;
        std::string text;
        if (dim.attribute("start")) {
          n = dim.attribute("start").as_llong();
          text = std::string("start=\"") + dim.attribute("start").value() + "\"";
        } else if (dim.attribute("valueReference")) {
          const unsigned ref = dim.attribute("valueReference").as_uint();
          auto it = structural.find(ref);
          if (it == structural.end())
            throw FmuError(where + ": array dimension valueReference=\"" + std::to_string(ref) +
                           "\" names no structural parameter with a start value");
          n = it->second;
          text = "structural parameter " + std::to_string(ref) + " = " + std::to_string(n);
        } else {
          throw FmuError(where + ": a <Dimension> needs start or valueReference");
        }
        if (n < 1 || n > 1000000 || v.size * std::size_t(n) > 1000000)
          throw FmuError(where + ": array dimension " + text + " (expected arrays of 1 to 1000000 elements)");
        v.size *= std::size_t(n);
      }
      if (v.causality == "parameter" && v.type != VarType::real)
        throw FmuError(where + ": array parameters must be Float64 (Stride's list parameters are real numbers)");
      if (v.type == VarType::string && (v.causality == "input" || v.causality == "output"))
        throw FmuError(where + ": String arrays are not exchanged (Stride exchanges numbers only)");
    }
    std::string declared = tn.attribute("declaredType").value();
    if (!declared.empty()) {
      auto it = types.find(declared);
      if (it == types.end()) throw FmuError(where + ": unknown declaredType \"" + declared + "\"");
      v.unit = it->second.unit;
      v.min = it->second.min;
      v.max = it->second.max;
    }
    if (tn.attribute("unit")) v.unit = tn.attribute("unit").value();
    // A port in a unit the FMU defines from SI base units (<BaseUnit m="1" factor="0.0254"/>):
    // the FMU's definition is what it computes in, whatever UDUNITS-2 means by the name, so the
    // port is offered in the SI unit and converted at the FMU's boundary. Other units are
    // converted at connections (UDUNITS-2).
    if (v.type == VarType::real && (v.causality == "input" || v.causality == "output") && !v.unit.empty()) {
      auto u = units.find(v.unit);
      if (u != units.end() && !u->second.si.empty() && u->second.si != v.unit && u->second.factor != 0.0) {
        v.fmu_unit = v.unit;
        v.unit = u->second.si;
        v.unit_factor = u->second.factor;
        v.unit_offset = u->second.offset;
      }
    }
    if (auto x = attr_number(tn, "min", where)) v.min = x;
    if (auto x = attr_number(tn, "max", where)) v.max = x;
    if (md.version == 3 && v.type == VarType::string && sv.child("Start"))  // FMI 3 Strings: <Start value="..."/>
      v.start = sv.child("Start").attribute("value").value();
    if (auto s = tn.attribute("start"); s && v.size == 1) v.start = start_value(v.type, s.value(), where);
    else if (s && v.type == VarType::real) {
      // An array's start: its elements separated by white space (one value: every element).
      json list = json::array();
      std::stringstream words(s.value());
      for (std::string w; words >> w;) list.push_back(start_value(v.type, w, where));
      if (list.size() == 1) list = json(std::vector<double>(v.size, list[0].get<double>()));
      if (list.size() != v.size)
        throw FmuError(where + ": start has " + std::to_string(list.size()) + " values for an array of " +
                       std::to_string(v.size) + " elements");
      v.start = list;
    }
    by_vr.emplace(v.value_reference, md.variables.size());
    md.variables.push_back(std::move(v));
    if (md.version == 2) by_vr.erase(md.variables.back().value_reference);  // FMI 2 uses indices
  }

  // Direct feedthrough: an output depends on an input (no dependency list: on everything).
  auto is_input = [&](std::size_t i) { return i < md.variables.size() && md.variables[i].causality == "input"; };
  const bool any_input = std::any_of(md.variables.begin(), md.variables.end(), [](const Variable& v) { return v.causality == "input"; });
  pugi::xml_node ms = root.child("ModelStructure");
  // FMI 2 indices count every ScalarVariable, also the ones skipped above: map them.
  std::map<long, std::size_t> index_to_var;
  if (md.version == 2) {
    long idx = 0;
    std::size_t kept = 0;
    for (auto sv : root.child("ModelVariables").children("ScalarVariable")) {
      ++idx;
      if (kept < md.variables.size() && md.variables[kept].name == sv.attribute("name").value()) index_to_var[idx] = kept++;
    }
    for (auto u : ms.child("Outputs").children("Unknown")) {
      auto it = index_to_var.find(u.attribute("index").as_int());
      if (it == index_to_var.end()) continue;
      Variable& out = md.variables[it->second];
      if (!u.attribute("dependencies")) out.feedthrough = any_input;
      else
        for (long d : index_list(u.attribute("dependencies").value()))
          if (auto j = index_to_var.find(d); j != index_to_var.end() && is_input(j->second)) out.feedthrough = true;
    }
    for (auto u : ms.child("Derivatives").children("Unknown")) (void)u, ++md.state_count;
    md.event_indicator_count = root.attribute("numberOfEventIndicators").as_uint();
  } else {
    std::map<unsigned, std::size_t> vr_to_var;
    for (std::size_t i = 0; i < md.variables.size(); ++i) vr_to_var.emplace(md.variables[i].value_reference, i);
    for (auto u : ms.children("Output")) {
      auto it = vr_to_var.find(u.attribute("valueReference").as_uint());
      if (it == vr_to_var.end()) continue;
      Variable& out = md.variables[it->second];
      if (!u.attribute("dependencies")) out.feedthrough = any_input;
      else
        for (long d : index_list(u.attribute("dependencies").value()))
          if (auto j = vr_to_var.find(unsigned(d)); j != vr_to_var.end() && is_input(j->second)) out.feedthrough = true;
    }
    for (auto u : ms.children("ContinuousStateDerivative")) (void)u, ++md.state_count;
    for (auto u : ms.children("EventIndicator")) (void)u, ++md.event_indicator_count;
  }
  return md;
}

// ---------------------------------------------------------------------------------------------
// Loaded binaries and their functions.

namespace {

struct Fmi2Api {
  fmi2InstantiateTYPE* instantiate = nullptr;
  fmi2FreeInstanceTYPE* free_instance = nullptr;
  fmi2SetupExperimentTYPE* setup_experiment = nullptr;
  fmi2EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi2ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi2TerminateTYPE* terminate = nullptr;
  fmi2GetRealTYPE* get_real = nullptr;
  fmi2SetRealTYPE* set_real = nullptr;
  fmi2GetIntegerTYPE* get_integer = nullptr;
  fmi2SetIntegerTYPE* set_integer = nullptr;
  fmi2GetBooleanTYPE* get_boolean = nullptr;
  fmi2SetBooleanTYPE* set_boolean = nullptr;
  fmi2SetStringTYPE* set_string = nullptr;
  // canGetAndSetFMUstate
  fmi2GetFMUstateTYPE* get_fmu_state = nullptr;
  fmi2SetFMUstateTYPE* set_fmu_state = nullptr;
  fmi2FreeFMUstateTYPE* free_fmu_state = nullptr;
  // co-simulation
  fmi2DoStepTYPE* do_step = nullptr;
  fmi2GetRealStatusTYPE* get_real_status = nullptr;  // optional
  // model exchange
  fmi2SetTimeTYPE* set_time = nullptr;
  fmi2SetContinuousStatesTYPE* set_states = nullptr;
  fmi2GetDerivativesTYPE* get_derivatives = nullptr;
  fmi2GetEventIndicatorsTYPE* get_event_indicators = nullptr;
  fmi2GetContinuousStatesTYPE* get_states = nullptr;
  fmi2EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi2NewDiscreteStatesTYPE* new_discrete_states = nullptr;
  fmi2EnterContinuousTimeModeTYPE* enter_continuous_time_mode = nullptr;
  fmi2CompletedIntegratorStepTYPE* completed_integrator_step = nullptr;
};

struct Fmi3Api {
  fmi3InstantiateCoSimulationTYPE* instantiate = nullptr;      // co-simulation
  fmi3InstantiateModelExchangeTYPE* instantiate_me = nullptr;  // model exchange
  fmi3FreeInstanceTYPE* free_instance = nullptr;
  fmi3EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi3ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi3TerminateTYPE* terminate = nullptr;
  fmi3GetFloat64TYPE* get_float64 = nullptr;
  fmi3SetFloat64TYPE* set_float64 = nullptr;
  fmi3GetInt32TYPE* get_int32 = nullptr;
  fmi3SetInt32TYPE* set_int32 = nullptr;
  fmi3GetBooleanTYPE* get_boolean = nullptr;
  fmi3SetBooleanTYPE* set_boolean = nullptr;
  fmi3SetStringTYPE* set_string = nullptr;
  fmi3DoStepTYPE* do_step = nullptr;
  // canGetAndSetFMUState
  fmi3GetFMUStateTYPE* get_fmu_state = nullptr;
  fmi3SetFMUStateTYPE* set_fmu_state = nullptr;
  fmi3FreeFMUStateTYPE* free_fmu_state = nullptr;
  // model exchange
  fmi3SetTimeTYPE* set_time = nullptr;
  fmi3SetContinuousStatesTYPE* set_states = nullptr;
  fmi3GetContinuousStateDerivativesTYPE* get_derivatives = nullptr;
  fmi3GetEventIndicatorsTYPE* get_event_indicators = nullptr;
  fmi3GetContinuousStatesTYPE* get_states = nullptr;
  fmi3EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi3UpdateDiscreteStatesTYPE* update_discrete_states = nullptr;
  fmi3EnterContinuousTimeModeTYPE* enter_continuous_time_mode = nullptr;
  fmi3CompletedIntegratorStepTYPE* completed_integrator_step = nullptr;
};

// Looks up functions, collecting the names of the missing required ones.
struct Lookup {
  boost::dll::shared_library& lib;
  std::vector<std::string> missing;
  template <class T>
  void operator()(T*& fn, const char* name, bool required = true) {
    void* p = lib.is_loaded() ? ::dlsym(lib.native(), name) : nullptr;
    fn = reinterpret_cast<T*>(p);
    if (!p && required) missing.push_back(name);
  }
};

std::shared_ptr<boost::dll::shared_library> load_binary(const fs::path& dir, const ModelDescription& md,
                                                        const std::string& id, const std::string& label) {
  const std::string platform = platform_folder(md.version);
  const fs::path bin = dir / "binaries" / platform / (id + ".so");
  std::error_code ec;
  if (!fs::is_regular_file(bin, ec)) {
    std::string have;
    for (const auto& e : fs::directory_iterator(dir / "binaries", ec))
      have += (have.empty() ? "" : ", ") + e.path().filename().string();
    throw FmuError(label + ": no binary for this platform: binaries/" + platform + "/" + id + ".so is missing (the FMU has " +
                   (have.empty() ? std::string("no binaries") : "binaries for: " + have) + ")");
  }
  auto lib = std::make_shared<boost::dll::shared_library>();
  lib->load(bin, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = ::dlerror();
    throw FmuError(label + ": binaries/" + platform + "/" + id + ".so cannot be loaded: " + (why ? why : ec.message()));
  }
  return lib;
}

void require(Lookup& l, const std::string& label, const std::string& what) {
  if (l.missing.empty()) return;
  std::string names;
  for (const auto& m : l.missing) names += (names.empty() ? "" : ", ") + m;
  throw FmuError(label + ": the " + what + " binary lacks required function" + (l.missing.size() > 1 ? "s " : " ") + names);
}

void lookup_common2(Lookup& l, Fmi2Api& a, bool state) {
  l(a.get_fmu_state, "fmi2GetFMUstate", state);
  l(a.set_fmu_state, "fmi2SetFMUstate", state);
  l(a.free_fmu_state, "fmi2FreeFMUstate", state);
  l(a.instantiate, "fmi2Instantiate");
  l(a.free_instance, "fmi2FreeInstance");
  l(a.setup_experiment, "fmi2SetupExperiment");
  l(a.enter_initialization, "fmi2EnterInitializationMode");
  l(a.exit_initialization, "fmi2ExitInitializationMode");
  l(a.terminate, "fmi2Terminate");
  l(a.get_real, "fmi2GetReal");
  l(a.set_real, "fmi2SetReal");
  l(a.get_integer, "fmi2GetInteger");
  l(a.set_integer, "fmi2SetInteger");
  l(a.get_boolean, "fmi2GetBoolean");
  l(a.set_boolean, "fmi2SetBoolean");
  l(a.set_string, "fmi2SetString");
}

void lookup_common3(Lookup& l, Fmi3Api& a, bool state) {
  l(a.get_fmu_state, "fmi3GetFMUState", state);
  l(a.set_fmu_state, "fmi3SetFMUState", state);
  l(a.free_fmu_state, "fmi3FreeFMUState", state);
  l(a.free_instance, "fmi3FreeInstance");
  l(a.enter_initialization, "fmi3EnterInitializationMode");
  l(a.exit_initialization, "fmi3ExitInitializationMode");
  l(a.terminate, "fmi3Terminate");
  l(a.get_float64, "fmi3GetFloat64");
  l(a.set_float64, "fmi3SetFloat64");
  l(a.get_int32, "fmi3GetInt32");
  l(a.set_int32, "fmi3SetInt32");
  l(a.get_boolean, "fmi3GetBoolean");
  l(a.set_boolean, "fmi3SetBoolean");
  l(a.set_string, "fmi3SetString", false);  // needed only for String parameters
}

}  // namespace

struct Fmu {
  fs::path file;
  std::string label;  // the file as the user wrote it, for messages
  std::shared_ptr<TempFolder> folder;
  ModelDescription md;
  std::shared_ptr<boost::dll::shared_library> cs_lib, me_lib;
  Fmi2Api cs2, me2;
  Fmi3Api cs3, me3;
};

// ---------------------------------------------------------------------------------------------
// Log messages of an instance: into the run's log (log.txt, and stderr from the manifest's
// stderr_level) once the host has bound a logger, to stderr with the subsystem's name before
// (instantiation); the recent warnings and errors are kept for the failure message.

namespace {

const char* const kStatus2[] = {"ok", "warning", "discard", "error", "fatal", "pending"};
const char* const kStatusName2[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};

struct LogSink {
  std::string instance;
  std::vector<std::string> recent;
  stride::Logger* logger = nullptr;
  void log(int status, const char* category, const char* message) {
    const bool known = status >= 0 && status <= 5;
    const char* s = known ? kStatus2[status] : "?";
    std::string line = std::string(s) + (category && *category ? std::string(" [") + category + "]" : "") + ": " +
                       (message ? message : "");
    if (logger) {
      // OK and pending are information, warning a warning, discard/error/fatal errors; the
      // status is the rate-limited site.
      const LogLevel level = status <= 0 || status == 5 ? LogLevel::info : status == 1 ? LogLevel::warning : LogLevel::error;
      if (level >= logger->threshold()) logger->write(level, LogFormat("", known ? kStatusName2[status] : "fmu", 0), line);
    } else {
      std::cerr << "fmu \"" << instance << "\": " << line << "\n";
    }
    if (status >= 1) {
      if (recent.size() >= 4) recent.erase(recent.begin());
      recent.push_back(line);
    }
  }
  std::string tail() const {
    if (recent.empty()) return "";
    std::string s = "; the FMU said: ";
    for (std::size_t i = 0; i < recent.size(); ++i) s += (i ? " | " : "") + recent[i];
    return s;
  }
};

extern "C" void stride_fmi2_logger(fmi2ComponentEnvironment env, fmi2String, fmi2Status status, fmi2String category,
                                   fmi2String message, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, message);
  std::vsnprintf(buf, sizeof buf, message ? message : "", ap);
  va_end(ap);
  if (env) static_cast<LogSink*>(env)->log(int(status), category, buf);
}

extern "C" void stride_fmi3_logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                                   fmi3String message) {
  if (env) static_cast<LogSink*>(env)->log(int(status), category, message);
}

// Where each port's value lives in the FMU: inputs and outputs in port order.
struct Io {
  unsigned vr = 0;
  VarType type = VarType::real;
  std::size_t size = 1;    // elements (FMI 3 arrays)
  std::size_t offset = 0;  // outputs: first element in the subsystem's outputs
  double factor = 1.0, shift = 0.0;  // port value = FMU value * factor + shift (unit conversion)
  bool converted() const { return factor != 1.0 || shift != 0.0; }
};

// Values of the FMU's ports and parameters, shared by every instance kind.
struct Interface {
  std::vector<Io> in, out;
  bool any_feedthrough = false;
  std::size_t scratch_size = 1;  // the widest port (converted or retyped values are written there)
  explicit Interface(const ModelDescription& md) {
    for (const auto& v : md.variables)
      if (v.causality == "input") {
        in.push_back({v.value_reference, v.type, v.size, 0, v.unit_factor, v.unit_offset});
        scratch_size = std::max(scratch_size, v.size);
      }
    std::size_t offset = 0;
    for (const auto& v : md.variables)
      if (v.causality == "output") {
        out.push_back({v.value_reference, v.type, v.size, offset, v.unit_factor, v.unit_offset});
        offset += v.size;
        scratch_size = std::max(scratch_size, v.size);
        any_feedthrough = any_feedthrough || v.feedthrough;
      }
  }
};

// An input in the FMU's unit: `u` itself when no conversion applies, else converted into `buf`.
std::span<const double> to_fmu(const Io& io, std::span<const double> u, std::vector<double>& buf) {
  if (!io.converted()) return u;
  for (std::size_t i = 0; i < u.size(); ++i) buf[i] = (u[i] - io.shift) / io.factor;
  return {buf.data(), u.size()};
}
// Outputs read in the FMU's unit, converted in place.
void from_fmu(const Io& io, std::span<double> y) {
  if (!io.converted()) return;
  for (std::size_t i = 0; i < io.size; ++i) y[io.offset + i] = y[io.offset + i] * io.factor + io.shift;
}

std::string fmt_time(double t) {
  std::ostringstream o;
  o.precision(12);
  o << t;
  return o.str();
}

// ---------------------------------------------------------------------------------------------
// FMU states (canGetAndSetFMUstate) inside the host's snapshots. A state belongs to the
// instance that made it and is freed through it; the instance's release function ends with the
// instance (fmi2FreeInstance / fmi3FreeInstance free its states), so a snapshot that outlives
// its instance frees nothing and cannot be restored.

using StateRelease = std::function<void(void*)>;

struct FmuState {
  void* handle = nullptr;
  std::weak_ptr<const StateRelease> owner;
  FmuState() = default;
  FmuState(const FmuState&) = delete;
  FmuState& operator=(const FmuState&) = delete;
  ~FmuState() { drop(); }
  void drop() {
    if (auto r = owner.lock(); r && handle) (*r)(handle);
    handle = nullptr;
  }
  // Ready for fmi*GetFMUstate of the instance `release` belongs to: a handle of another
  // instance is freed first (a handle of this one is updated in place).
  void adopt(const std::shared_ptr<const StateRelease>& release) {
    if (owner.lock() == release) return;
    drop();
    owner = release;
  }
  bool of(const std::shared_ptr<const StateRelease>& release) const { return handle && release && owner.lock() == release; }
};

// ---------------------------------------------------------------------------------------------
// FMI 2 instance (either interface).

class Fmi2Instance {
 public:
  Fmi2Instance(std::shared_ptr<const Fmu> fmu, const Fmi2Api& api, fmi2Type type, const Params& params,
               const std::string& name)
      : fmu_(std::move(fmu)), api_(api), type_(type), io_(fmu_->md), params_(params) {
    log_.instance = name;
    callbacks_ = fmi2CallbackFunctions{stride_fmi2_logger, std::calloc, std::free, nullptr, &log_};
    resources_ = "file://" + (fmu_->folder->path() / "resources").string();
    instantiate();
  }
  ~Fmi2Instance() { release(); }
  Fmi2Instance(const Fmi2Instance&) = delete;
  Fmi2Instance& operator=(const Fmi2Instance&) = delete;

  // A fresh instance with the parameters set, through initialization mode at t0.
  void start(double t0) {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    check(api_.setup_experiment(c_, fmi2False, 0.0, t0, fmi2False, 0.0), "fmi2SetupExperiment", t0);
    set_parameters(t0);
    check(api_.enter_initialization(c_), "fmi2EnterInitializationMode", t0);
    check(api_.exit_initialization(c_), "fmi2ExitInitializationMode", t0);
  }

  void set_inputs(Inputs& inputs, double t) {
    for (std::size_t k = 0; k < io_.in.size(); ++k) {
      const double u = to_fmu(io_.in[k], inputs.at(k, t), scratch_)[0];
      const fmi2ValueReference vr = io_.in[k].vr;
      switch (io_.in[k].type) {
        case VarType::real: check(api_.set_real(c_, &vr, 1, &u), "fmi2SetReal", t); break;
        case VarType::integer:
        case VarType::enumeration: {
          const fmi2Integer i = fmi2Integer(std::lround(u));
          check(api_.set_integer(c_, &vr, 1, &i), "fmi2SetInteger", t);
          break;
        }
        case VarType::boolean: {
          const fmi2Boolean b = u > 0.5 ? fmi2True : fmi2False;
          check(api_.set_boolean(c_, &vr, 1, &b), "fmi2SetBoolean", t);
          break;
        }
        case VarType::string: break;
      }
    }
  }

  void get_outputs(std::span<double> y, double t) {
    for (std::size_t k = 0; k < io_.out.size(); ++k) {
      const fmi2ValueReference vr = io_.out[k].vr;
      switch (io_.out[k].type) {
        case VarType::real:
          check(api_.get_real(c_, &vr, 1, &y[io_.out[k].offset]), "fmi2GetReal", t);
          from_fmu(io_.out[k], y);
          break;
        case VarType::integer:
        case VarType::enumeration: {
          fmi2Integer i = 0;
          check(api_.get_integer(c_, &vr, 1, &i), "fmi2GetInteger", t);
          y[io_.out[k].offset] = double(i);
          break;
        }
        case VarType::boolean: {
          fmi2Boolean b = 0;
          check(api_.get_boolean(c_, &vr, 1, &b), "fmi2GetBoolean", t);
          y[io_.out[k].offset] = b ? 1.0 : 0.0;
          break;
        }
        case VarType::string: y[io_.out[k].offset] = 0.0; break;
      }
    }
  }

  // Throws on fmi2Error / fmi2Fatal with the FMU's own messages; returns the status otherwise.
  fmi2Status check(fmi2Status s, const char* fn, double t) {
    if (s == fmi2Error || s == fmi2Fatal || s < fmi2OK || s > fmi2Pending) {
      if (s == fmi2Fatal) fatal_ = true, release_state_.reset();  // no call after fmi2Fatal
      throw PluginError(fmu_->label, std::string(fn) + " returned " + (s >= 0 && s <= 5 ? std::string(kStatusName2[s]) : "status " + std::to_string(int(s))) +
                                         " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }

  fmi2Component component() const { return c_; }
  const Interface& io() const { return io_; }
  const LogSink& log() const { return log_; }
  LogSink& log_sink() { return log_; }
  const Fmu& fmu() const { return *fmu_; }

  bool can_save_state() const {
    return type_ == fmi2CoSimulation ? fmu_->md.cs_can_get_set_state : fmu_->md.me_can_get_set_state;
  }
  void save(FmuState& s, double t) {
    s.adopt(release_state_);
    check(api_.get_fmu_state(c_, &s.handle), "fmi2GetFMUstate", t);
    may_restore_ = true;
  }
  void restore(const FmuState& s, double t) {
    if (!s.of(release_state_)) throw PluginError(fmu_->label, "an FMU state of another instance cannot be restored");
    check(api_.set_fmu_state(c_, s.handle), "fmi2SetFMUstate", t);
  }
  // fmi2DoStep / fmi2CompletedIntegratorStep may be told that no earlier state comes back.
  fmi2Boolean no_earlier_state() const { return may_restore_ ? fmi2False : fmi2True; }

 private:
  void instantiate() {
    const auto& md = fmu_->md;
    c_ = api_.instantiate(log_.instance.c_str(), type_, md.token.c_str(), resources_.c_str(), &callbacks_, fmi2False, fmi2False);
    if (!c_)
      throw PluginError(fmu_->label, "fmi2Instantiate returned NULL (the FMU refused to create an instance)" + log_.tail());
    fatal_ = false;
    if (can_save_state())
      release_state_ = std::make_shared<const StateRelease>([api = &api_, c = c_](void* h) { api->free_fmu_state(c, &h); });
  }
  void release() noexcept {
    release_state_.reset();
    if (!c_) return;
    if (!fatal_) api_.free_instance(c_);  // after fmi2Fatal no function may be called
    c_ = nullptr;
  }
  void set_parameters(double t) {
    for (const auto& v : fmu_->md.variables) {
      if (v.causality != "parameter" || !params_.values().contains(v.name)) continue;
      const json& val = params_.values()[v.name];
      const fmi2ValueReference vr = v.value_reference;
      switch (v.type) {
        case VarType::real: {
          const fmi2Real x = val.get<double>();
          check(api_.set_real(c_, &vr, 1, &x), "fmi2SetReal", t);
          break;
        }
        case VarType::integer:
        case VarType::enumeration: {
          const fmi2Integer x = fmi2Integer(val.get<long>());
          check(api_.set_integer(c_, &vr, 1, &x), "fmi2SetInteger", t);
          break;
        }
        case VarType::boolean: {
          const fmi2Boolean x = val.get<bool>() ? fmi2True : fmi2False;
          check(api_.set_boolean(c_, &vr, 1, &x), "fmi2SetBoolean", t);
          break;
        }
        case VarType::string: {
          const std::string s = val.get<std::string>();
          const fmi2String x = s.c_str();
          check(api_.set_string(c_, &vr, 1, &x), "fmi2SetString", t);
          break;
        }
      }
    }
  }

  std::shared_ptr<const Fmu> fmu_;
  const Fmi2Api& api_;
  fmi2Type type_;
  Interface io_;
  std::vector<double> scratch_ = std::vector<double>(io_.scratch_size);
  Params params_;
  LogSink log_;
  fmi2CallbackFunctions callbacks_{};
  std::string resources_;
  fmi2Component c_ = nullptr;
  bool started_ = false;
  bool fatal_ = false;
  bool may_restore_ = false;
  std::shared_ptr<const StateRelease> release_state_;
};

// ---------------------------------------------------------------------------------------------
// Co-simulation snapshots: the FMU state and the time reached (FMI 2 and FMI 3).

struct CsSnapshot final : SavedState {
  FmuState fmu;
  double t = 0.0, first_h = 0.0;
};
template <class Instance>
void save_cs_state(Instance& inst, std::unique_ptr<SavedState>& slot, double t, double first_h) {
  auto* s = dynamic_cast<CsSnapshot*>(slot.get());
  if (!s) slot.reset(s = new CsSnapshot);
  inst.save(s->fmu, t);
  s->t = t;
  s->first_h = first_h;
}
template <class Instance>
void restore_cs_state(Instance& inst, const SavedState& state, double& t, double& first_h) {
  const auto& s = dynamic_cast<const CsSnapshot&>(state);
  inst.restore(s.fmu, s.t);
  t = s.t;
  first_h = s.first_h;
}

// A co-simulation FMU holds its inputs over a step. Stepping on, it gets their values at the
// step's start (causal: nothing later is known). When the host repeats macro steps (iterative
// coupling, after the first save), inputs inside a repeated step are straight lines between
// known values, and the value at the step's midpoint, their mean over the step, is held: the
// held input then errs by O(h²) in its integral instead of O(h).
template <class Instance>
double input_time(const Instance& inst, double t, double h) {
  return inst.no_earlier_state() ? t : t + 0.5 * h;
}

// ---------------------------------------------------------------------------------------------
// FMI 2 co-simulation: one fmi2DoStep per Stride step.

class Fmi2CoSimulation final : public Subsystem {
 public:
  Fmi2CoSimulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name)
      : inst_(fmu, fmu->cs2, fmi2CoSimulation, p, name), ports_(std::move(ports)) {}

  void bind_logger(Logger& logger) override {
    Subsystem::bind_logger(logger);
    inst_.log_sink().logger = &logger;
  }
  std::vector<PortSpec> ports() const override { return ports_; }
  void initialize(double t0) override {
    inst_.start(t0);
    t_ = t0;
    first_h_ = 0.0;
  }
  double step(double t, double h) override {
    const auto& md = inst_.fmu().md;
    // An FMU that cannot change its step is given the first step throughout.
    if (first_h_ == 0.0) first_h_ = h;
    else if (!md.can_variable_step && std::abs(h - first_h_) > 1e-9 * first_h_)
      throw StepFailure("the FMU cannot handle a variable communication step size (canHandleVariableCommunicationStepSize"
                        " is false), but a step of " + fmt_time(h) + " s follows steps of " + fmt_time(first_h_) +
                        " s; make the macro step a multiple of the subsystem's step");
    inst_.set_inputs(inputs(), input_time(inst_, t, h));
    const fmi2Status s =
        inst_.check(inst_.fmu().cs2.do_step(inst_.component(), t, h, inst_.no_earlier_state()), "fmi2DoStep", t);
    ++steps_;
    if (s == fmi2Discard) {
      // The FMU stopped early: it reports how far it came (a shorter step is within "at most h").
      fmi2Real reached = t;
      if (inst_.fmu().cs2.get_real_status)
        inst_.check(inst_.fmu().cs2.get_real_status(inst_.component(), fmi2LastSuccessfulTime, &reached),
                    "fmi2GetRealStatus", t);
      ++discarded_;
      if (!(reached > t))
        throw StepFailure("fmi2DoStep discarded the step from t = " + fmt_time(t) + " without progress" + inst_.log().tail());
      t_ = std::min(reached, t + h);
      return t_;
    }
    if (s == fmi2Pending) throw PluginError(inst_.fmu().label, "fmi2DoStep returned fmi2Pending (asynchronous steps are not supported)");
    t_ = t + h;
    return t_;
  }
  void outputs(std::span<double> y) override {
    if (inst_.io().any_feedthrough) inst_.set_inputs(inputs(), t_);
    inst_.get_outputs(y, t_);
  }
  json statistics() const override { return {{"steps", steps_}, {"discarded_steps", discarded_}}; }
  json report() const override {
    return {{"fmu", inst_.fmu().file.string()}, {"fmi_version", inst_.fmu().md.fmi_version}, {"interface", "co-simulation"}};
  }
  bool can_save_state() const override { return inst_.can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override { save_cs_state(inst_, slot, t_, first_h_); }
  void restore_state(const SavedState& state) override { restore_cs_state(inst_, state, t_, first_h_); }

 private:
  Fmi2Instance inst_;
  std::vector<PortSpec> ports_;
  double t_ = 0.0, first_h_ = 0.0;
  long steps_ = 0, discarded_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Model exchange, FMI 2 and FMI 3: the calls of each version behind one adapter, so that the
// event handling below is written once.

struct Discrete {
  bool again = false, terminate = false, values_changed = false, next_defined = false;
  double next = 0.0;
};

class Fmi2Me {
 public:
  Fmi2Me(std::shared_ptr<const Fmu> fmu, const Params& p, const std::string& name)
      : inst_(fmu, fmu->me2, fmi2ModelExchange, p, name) {}
  void start(double t0) { inst_.start(t0); }
  LogSink& log_sink() { return inst_.log_sink(); }
  void set_time(double t) { inst_.check(api().set_time(c(), t), "fmi2SetTime", t); }
  void set_states(std::span<const double> x, double t) {
    inst_.check(api().set_states(c(), x.data(), x.size()), "fmi2SetContinuousStates", t);
  }
  void set_inputs(Inputs& in, double t) { inst_.set_inputs(in, t); }
  void derivatives(std::span<double> dx, double t) {
    inst_.check(api().get_derivatives(c(), dx.data(), dx.size()), "fmi2GetDerivatives", t);
  }
  void indicators(std::span<double> z, double t) {
    inst_.check(api().get_event_indicators(c(), z.data(), z.size()), "fmi2GetEventIndicators", t);
  }
  void states(std::span<double> x, double t) {
    inst_.check(api().get_states(c(), x.data(), x.size()), "fmi2GetContinuousStates", t);
  }
  void outputs(std::span<double> y, double t) { inst_.get_outputs(y, t); }
  void completed_step(double t, bool& enter, bool& terminate) {
    fmi2Boolean e = fmi2False, x = fmi2False;
    inst_.check(api().completed_integrator_step(c(), inst_.no_earlier_state(), &e, &x), "fmi2CompletedIntegratorStep", t);
    enter = e, terminate = x;
  }
  void enter_event_mode(double t) { inst_.check(api().enter_event_mode(c()), "fmi2EnterEventMode", t); }
  Discrete update_discrete(double t) {
    fmi2EventInfo info{};
    inst_.check(api().new_discrete_states(c(), &info), "fmi2NewDiscreteStates", t);
    return {bool(info.newDiscreteStatesNeeded), bool(info.terminateSimulation), bool(info.valuesOfContinuousStatesChanged),
            bool(info.nextEventTimeDefined), info.nextEventTime};
  }
  void enter_continuous_time_mode(double t) {
    inst_.check(api().enter_continuous_time_mode(c()), "fmi2EnterContinuousTimeMode", t);
  }
  bool has_inputs() const { return !inst_.io().in.empty(); }
  std::string log_tail() const { return inst_.log().tail(); }
  const Fmu& fmu() const { return inst_.fmu(); }
  bool can_save_state() const { return inst_.can_save_state(); }
  void save(FmuState& s, double t) { inst_.save(s, t); }
  void restore(const FmuState& s, double t) { inst_.restore(s, t); }

 private:
  const Fmi2Api& api() const { return inst_.fmu().me2; }
  fmi2Component c() const { return inst_.component(); }
  Fmi2Instance inst_;
};

// ---------------------------------------------------------------------------------------------
// FMI 3 instance (either interface).

const char* const kStatus3[] = {"fmi3OK", "fmi3Warning", "fmi3Discard", "fmi3Error", "fmi3Fatal"};

class Fmi3Instance {
 public:
  Fmi3Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p, const std::string& name)
      : fmu_(std::move(fmu)), me_(model_exchange), io_(fmu_->md), params_(p) {
    log_.instance = name;
    resources_ = (fmu_->folder->path() / "resources").string() + "/";
    instantiate();
  }
  ~Fmi3Instance() { release(); }
  Fmi3Instance(const Fmi3Instance&) = delete;
  Fmi3Instance& operator=(const Fmi3Instance&) = delete;

  // A fresh instance with the parameters set, through initialization mode at t0.
  void start(double t0) {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    check(api().enter_initialization(c_, false, 0.0, t0, false, 0.0), "fmi3EnterInitializationMode", t0);
    set_parameters(t0);
    check(api().exit_initialization(c_), "fmi3ExitInitializationMode", t0);
  }
  fmi3Status check(fmi3Status s, const char* fn, double t) {
    if (s == fmi3Error || s == fmi3Fatal || s < fmi3OK || s > fmi3Fatal) {
      if (s == fmi3Fatal) fatal_ = true, release_state_.reset();  // no call after fmi3Fatal
      throw PluginError(fmu_->label, std::string(fn) + " returned " + (s >= 0 && s <= 4 ? kStatus3[s] : "an unknown status") +
                                         " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }
  void set_inputs(Inputs& inputs, double t) {
    for (std::size_t k = 0; k < io_.in.size(); ++k) {
      const std::span<const double> value = to_fmu(io_.in[k], inputs.at(k, t), scratch_);
      const double u = value[0];
      const fmi3ValueReference vr = io_.in[k].vr;
      const std::size_t n = value.size();
      switch (io_.in[k].type) {
        case VarType::real: check(api().set_float64(c_, &vr, 1, value.data(), n), "fmi3SetFloat64", t); break;
        case VarType::integer:
        case VarType::enumeration:
          for (std::size_t i = 0; i < n; ++i) int_scratch_[i] = fmi3Int32(std::lround(std::clamp(value[i], -2147483648.0, 2147483647.0)));
          check(api().set_int32(c_, &vr, 1, int_scratch_.data(), n), "fmi3SetInt32", t);
          break;
        case VarType::boolean:
          for (std::size_t i = 0; i < n; ++i) bool_scratch_[i] = value[i] > 0.5;
          check(api().set_boolean(c_, &vr, 1, bool_scratch_.get(), n), "fmi3SetBoolean", t);
          break;
        case VarType::string: break;
      }
      (void)u;
    }
  }
  void get_outputs(std::span<double> y, double t) {
    for (std::size_t k = 0; k < io_.out.size(); ++k) {
      const fmi3ValueReference vr = io_.out[k].vr;
      const std::size_t at = io_.out[k].offset;
      const std::size_t n = io_.out[k].size;
      switch (io_.out[k].type) {
        case VarType::real:
          check(api().get_float64(c_, &vr, 1, &y[at], n), "fmi3GetFloat64", t);
          from_fmu(io_.out[k], y);
          break;
        case VarType::integer:
        case VarType::enumeration:
          check(api().get_int32(c_, &vr, 1, int_scratch_.data(), n), "fmi3GetInt32", t);
          for (std::size_t i = 0; i < n; ++i) y[at + i] = double(int_scratch_[i]);
          break;
        case VarType::boolean:
          check(api().get_boolean(c_, &vr, 1, bool_scratch_.get(), n), "fmi3GetBoolean", t);
          for (std::size_t i = 0; i < n; ++i) y[at + i] = bool_scratch_[i] ? 1.0 : 0.0;
          break;
        case VarType::string:
          for (std::size_t i = 0; i < n; ++i) y[at + i] = 0.0;
          break;
      }
    }
  }
  const Fmi3Api& api() const { return me_ ? fmu_->me3 : fmu_->cs3; }
  fmi3Instance component() const { return c_; }
  const Interface& io() const { return io_; }
  const LogSink& log() const { return log_; }
  LogSink& log_sink() { return log_; }
  const Fmu& fmu() const { return *fmu_; }

  bool can_save_state() const { return me_ ? fmu_->md.me_can_get_set_state : fmu_->md.cs_can_get_set_state; }
  void save(FmuState& s, double t) {
    s.adopt(release_state_);
    check(api().get_fmu_state(c_, &s.handle), "fmi3GetFMUState", t);
    may_restore_ = true;
  }
  void restore(const FmuState& s, double t) {
    if (!s.of(release_state_)) throw PluginError(fmu_->label, "an FMU state of another instance cannot be restored");
    check(api().set_fmu_state(c_, s.handle), "fmi3SetFMUState", t);
  }
  // fmi3DoStep / fmi3CompletedIntegratorStep may be told that no earlier state comes back.
  bool no_earlier_state() const { return !may_restore_; }

 private:
  void instantiate() {
    const auto& md = fmu_->md;
    c_ = me_ ? api().instantiate_me(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false, &log_,
                                    stride_fmi3_logger)
             : api().instantiate(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false, false, false,
                                 nullptr, 0, &log_, stride_fmi3_logger, nullptr);
    if (!c_)
      throw PluginError(fmu_->label, std::string(me_ ? "fmi3InstantiateModelExchange" : "fmi3InstantiateCoSimulation") +
                                         " returned NULL (the FMU refused to create an instance)" + log_.tail());
    fatal_ = false;
    if (can_save_state())
      release_state_ = std::make_shared<const StateRelease>([api = &api(), c = c_](void* h) { api->free_fmu_state(c, &h); });
  }
  void release() noexcept {
    release_state_.reset();
    if (c_ && !fatal_) api().free_instance(c_);  // after fmi3Fatal no function may be called
    c_ = nullptr;
  }
  void set_parameters(double t) {
    for (const auto& v : fmu_->md.variables) {
      if (v.causality != "parameter" || !params_.values().contains(v.name)) continue;
      const json& val = params_.values()[v.name];
      const fmi3ValueReference vr = v.value_reference;
      switch (v.type) {
        case VarType::real: {
          if (val.is_array()) {
            const std::vector<double> xs = val.get<std::vector<double>>();
            check(api().set_float64(c_, &vr, 1, xs.data(), xs.size()), "fmi3SetFloat64", t);
            break;
          }
          const fmi3Float64 x = val.get<double>();
          check(api().set_float64(c_, &vr, 1, &x, 1), "fmi3SetFloat64", t);
          break;
        }
        case VarType::integer:
        case VarType::enumeration: {
          const fmi3Int32 x = fmi3Int32(val.get<long>());
          check(api().set_int32(c_, &vr, 1, &x, 1), "fmi3SetInt32", t);
          break;
        }
        case VarType::boolean: {
          const fmi3Boolean x = val.get<bool>();
          check(api().set_boolean(c_, &vr, 1, &x, 1), "fmi3SetBoolean", t);
          break;
        }
        case VarType::string: {
          if (!api().set_string) throw PluginError(fmu_->label, "the binary lacks fmi3SetString, needed for parameter \"" + v.name + "\"");
          const std::string text = val.get<std::string>();
          const fmi3String x = text.c_str();
          check(api().set_string(c_, &vr, 1, &x, 1), "fmi3SetString", t);
          break;
        }
      }
    }
  }

  std::shared_ptr<const Fmu> fmu_;
  bool me_;
  Interface io_;
  std::vector<double> scratch_ = std::vector<double>(io_.scratch_size);
  std::vector<fmi3Int32> int_scratch_ = std::vector<fmi3Int32>(io_.scratch_size);
  std::unique_ptr<fmi3Boolean[]> bool_scratch_ = std::make_unique<fmi3Boolean[]>(io_.scratch_size);
  Params params_;
  LogSink log_;
  std::string resources_;
  fmi3Instance c_ = nullptr;
  bool started_ = false, fatal_ = false, may_restore_ = false;
  std::shared_ptr<const StateRelease> release_state_;
};

class Fmi3Me {
 public:
  Fmi3Me(std::shared_ptr<const Fmu> fmu, const Params& p, const std::string& name) : inst_(std::move(fmu), true, p, name) {}
  void start(double t0) { inst_.start(t0); }
  LogSink& log_sink() { return inst_.log_sink(); }
  void set_time(double t) { inst_.check(api().set_time(c(), t), "fmi3SetTime", t); }
  void set_states(std::span<const double> x, double t) {
    inst_.check(api().set_states(c(), x.data(), x.size()), "fmi3SetContinuousStates", t);
  }
  void set_inputs(Inputs& in, double t) { inst_.set_inputs(in, t); }
  void derivatives(std::span<double> dx, double t) {
    inst_.check(api().get_derivatives(c(), dx.data(), dx.size()), "fmi3GetContinuousStateDerivatives", t);
  }
  void indicators(std::span<double> z, double t) {
    inst_.check(api().get_event_indicators(c(), z.data(), z.size()), "fmi3GetEventIndicators", t);
  }
  void states(std::span<double> x, double t) {
    inst_.check(api().get_states(c(), x.data(), x.size()), "fmi3GetContinuousStates", t);
  }
  void outputs(std::span<double> y, double t) { inst_.get_outputs(y, t); }
  void completed_step(double t, bool& enter, bool& terminate) {
    fmi3Boolean e = false, x = false;
    inst_.check(api().completed_integrator_step(c(), inst_.no_earlier_state(), &e, &x), "fmi3CompletedIntegratorStep", t);
    enter = e, terminate = x;
  }
  void enter_event_mode(double t) { inst_.check(api().enter_event_mode(c()), "fmi3EnterEventMode", t); }
  Discrete update_discrete(double t) {
    fmi3Boolean again = false, terminate = false, nominals = false, values = false, defined = false;
    fmi3Float64 next = 0.0;
    inst_.check(api().update_discrete_states(c(), &again, &terminate, &nominals, &values, &defined, &next),
                "fmi3UpdateDiscreteStates", t);
    return {again, terminate, values, defined, next};
  }
  void enter_continuous_time_mode(double t) {
    inst_.check(api().enter_continuous_time_mode(c()), "fmi3EnterContinuousTimeMode", t);
  }
  bool has_inputs() const { return !inst_.io().in.empty(); }
  std::string log_tail() const { return inst_.log().tail(); }
  const Fmu& fmu() const { return inst_.fmu(); }
  bool can_save_state() const { return inst_.can_save_state(); }
  void save(FmuState& s, double t) { inst_.save(s, t); }
  void restore(const FmuState& s, double t) { inst_.restore(s, t); }

 private:
  const Fmi3Api& api() const { return inst_.fmu().me3; }
  fmi3Instance c() const { return inst_.component(); }
  Fmi3Instance inst_;
};

// The FMU as dx/dt = f(t, x, u) for the integrator.
template <class Me>
class MeOde final : public OdeSystem {
 public:
  MeOde(Me& me, std::vector<PortSpec> ports) : me_(me), ports_(std::move(ports)) {}
  std::vector<PortSpec> ports() const override { return ports_; }
  std::size_t state_size() const override { return me_.fmu().md.state_count; }
  void initial_state(double, std::span<double>) override {}  // the subsystem sets it
  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    at(t, x);
    ++evaluations_;
    me_.derivatives(dxdt, t);
  }
  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    at(t, x);
    me_.outputs(y, t);
  }
  void indicators(double t, std::span<const double> x, std::span<double> z) {
    at(t, x);
    if (!z.empty()) me_.indicators(z, t);
  }
  // Time, states and inputs of the FMU set to (t, x).
  void at(double t, std::span<const double> x) {
    me_.set_time(t);
    if (!x.empty()) me_.set_states(x, t);
    if (me_.has_inputs()) me_.set_inputs(inputs(), t);
  }
  long evaluations() const { return evaluations_; }

 private:
  Me& me_;
  std::vector<PortSpec> ports_;
  long evaluations_ = 0;
};

// The FMU's continuous states stepped by a Stride integrator, with time events, state events
// (event indicators; the first sign change located by bisection, re-integrating from the step
// start), event iteration, re-initialization and completed-step events.
template <class Me>
class ModelExchange final : public Subsystem {
 public:
  ModelExchange(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name,
                std::shared_ptr<Integrator> integrator)
      : me_(fmu, p, name), ode_(me_, ports), integ_(std::move(integrator)), ports_(std::move(ports)) {
    const std::size_t n = fmu->md.state_count, m = fmu->md.event_indicator_count;
    x_.assign(n, 0.0);
    x0_.assign(n, 0.0);
    xt_.assign(n, 0.0);
    z_.assign(m, 0.0);
    zt_.assign(m, 0.0);
  }

  void bind_logger(Logger& logger) override {
    Subsystem::bind_logger(logger);
    me_.log_sink().logger = &logger;
  }
  std::vector<PortSpec> ports() const override { return ports_; }
  void bind(Inputs& in) override {
    Subsystem::bind(in);
    ode_.bind(in);
  }
  void initialize(double t0) override {
    if (!integ_) throw std::logic_error("a model-exchange FMU needs an integrator");
    me_.start(t0);  // the FMU is in event mode after initialization
    t_ = t0;
    event_iteration(t0);
    get_states(t0);
    started_ = false;
  }
  void equilibrate(double t0) override { restart(t0); }
  double step(double t, double h) override {
    if (!started_) restart(t);
    double t_end = t + h;
    bool time_event = false;
    if (next_event_ && *next_event_ <= t_end && *next_event_ > t) {
      t_end = *next_event_;
      time_event = true;
    }
    std::copy(x_.begin(), x_.end(), x0_.begin());
    double t_new = integ_->step(ode_, t, t_end - t, x_);
    bool event = time_event && t_new >= t_end;
    if (!z_.empty()) {
      ode_.indicators(t_new, x_, zt_);
      if (crossed(z_, zt_)) {
        // Bisection on the time of the first sign change, re-integrating from t each time.
        double lo = t, hi = t_new;
        std::copy(x_.begin(), x_.end(), xt_.begin());
        const double tol = event_tolerance * std::max(1.0, std::abs(t));
        while (hi - lo > tol) {
          const double mid = 0.5 * (lo + hi);
          std::copy(x0_.begin(), x0_.end(), x_.begin());
          integ_->reset(ode_, t, x_);
          const double reached = integ_->step(ode_, t, mid - t, x_);
          ode_.indicators(reached, x_, zt_);
          ++bisections_;
          if (crossed(z_, zt_)) {
            hi = reached;
            std::copy(x_.begin(), x_.end(), xt_.begin());
          } else {
            lo = reached;
          }
          if (reached <= lo && reached < mid) break;  // the integrator cannot reach closer
        }
        t_new = hi;
        std::copy(xt_.begin(), xt_.end(), x_.begin());
        event = true;
        ++state_events_;
        if (event_times_.size() < kKeptEventTimes) event_times_.push_back(t_new);
      }
    }
    // Step completed: the FMU may ask for an event (step events).
    ode_.at(t_new, x_);
    bool enter = false, terminate = false;
    me_.completed_step(t_new, enter, terminate);
    if (terminate) throw StepFailure("the FMU requested the end of the simulation at t = " + fmt_time(t_new) + me_.log_tail());
    if (time_event && event) ++time_events_;
    if (enter) ++step_events_;
    t_ = t_new;
    if (event || enter) {
      me_.enter_event_mode(t_new);
      event_iteration(t_new);
      get_states(t_new);
      restart(t_new);
    } else if (!z_.empty()) {
      ode_.indicators(t_new, x_, z_);
    }
    return t_;
  }
  void outputs(std::span<double> y) override { ode_.outputs(t_, x_, y); }
  json statistics() const override {
    return {{"rhs_evaluations", ode_.evaluations()}, {"state_events", state_events_}, {"time_events", time_events_},
            {"step_events", step_events_}, {"bisection_steps", bisections_}, {"integrator", integ_ ? integ_->statistics() : json()}};
  }
  json report() const override {
    return {{"fmu", me_.fmu().file.string()}, {"fmi_version", me_.fmu().md.fmi_version}, {"interface", "model exchange"},
            {"continuous_states", x_.size()}, {"event_indicators", z_.size()}, {"state_event_times", event_times_}};
  }

  // Event times are located to this fraction of max(1, |t|) seconds.
  static constexpr double event_tolerance = 1e-12;

  // The FMU state with the host's copy of the continuous states, the event indicators and the
  // next time event; the integrator restarts from the saved point in every repetition.
  bool can_save_state() const override { return me_.can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    auto* s = dynamic_cast<Snapshot*>(slot.get());
    if (!s) slot.reset(s = new Snapshot);
    me_.save(s->fmu, t_);
    s->x = x_;
    s->z = z_;
    s->next_event = next_event_;
    s->t = t_;
    started_ = false;
  }
  void restore_state(const SavedState& state) override {
    const auto& s = dynamic_cast<const Snapshot&>(state);
    me_.restore(s.fmu, s.t);
    x_ = s.x;
    z_ = s.z;
    next_event_ = s.next_event;
    t_ = s.t;
    started_ = false;
  }

 private:
  // An event indicator changes domain between z > 0 and z <= 0 (FMI 2 §3.1).
  static bool crossed(const std::vector<double>& a, const std::vector<double>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if ((a[i] > 0) != (b[i] > 0)) return true;
    return false;
  }
  // Event mode: new discrete states until the FMU is done, then continuous-time mode.
  void event_iteration(double t) {
    Discrete d;
    d.again = true;
    int rounds = 0;
    while (d.again) {
      if (++rounds > 1000) throw StepFailure("event iteration of the FMU did not settle in 1000 rounds at t = " + fmt_time(t));
      d = me_.update_discrete(t);
      if (d.terminate) throw StepFailure("the FMU requested the end of the simulation at t = " + fmt_time(t) + me_.log_tail());
    }
    next_event_.reset();
    if (d.next_defined) next_event_ = d.next;
    me_.enter_continuous_time_mode(t);
  }
  void get_states(double t) {
    if (!x_.empty()) me_.states(x_, t);
  }
  void restart(double t) {
    integ_->reset(ode_, t, x_);
    if (!z_.empty()) ode_.indicators(t, x_, z_);
    started_ = true;
  }

  struct Snapshot final : SavedState {
    FmuState fmu;
    std::vector<double> x, z;
    std::optional<double> next_event;
    double t = 0.0;
  };

  Me me_;
  MeOde<Me> ode_;
  std::shared_ptr<Integrator> integ_;
  std::vector<PortSpec> ports_;
  std::vector<double> x_, x0_, xt_, z_, zt_;
  std::optional<double> next_event_;
  double t_ = 0.0;
  bool started_ = false;
  long state_events_ = 0, time_events_ = 0, step_events_ = 0, bisections_ = 0;
  static constexpr std::size_t kKeptEventTimes = 1000;  // the first ones, in summary.json
  std::vector<double> event_times_;
};

// ---------------------------------------------------------------------------------------------
// FMI 3 co-simulation.

class Fmi3CoSimulation final : public Subsystem {
 public:
  Fmi3CoSimulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name)
      : inst_(std::move(fmu), false, p, name), ports_(std::move(ports)) {}

  void bind_logger(Logger& logger) override {
    Subsystem::bind_logger(logger);
    inst_.log_sink().logger = &logger;
  }
  std::vector<PortSpec> ports() const override { return ports_; }
  void initialize(double t0) override {
    inst_.start(t0);
    t_ = t0;
    first_h_ = 0.0;
  }
  double step(double t, double h) override {
    if (first_h_ == 0.0) first_h_ = h;
    else if (!inst_.fmu().md.can_variable_step && std::abs(h - first_h_) > 1e-9 * first_h_)
      throw StepFailure("the FMU cannot handle a variable communication step size, but a step of " + fmt_time(h) +
                        " s follows steps of " + fmt_time(first_h_) + " s; make the macro step a multiple of the subsystem's step");
    inst_.set_inputs(inputs(), input_time(inst_, t, h));
    fmi3Boolean event = false, terminate = false, early = false;
    fmi3Float64 last = t;
    const fmi3Status s =
        inst_.check(inst_.api().do_step(inst_.component(), t, h, inst_.no_earlier_state(), &event, &terminate, &early, &last),
                    "fmi3DoStep", t);
    ++steps_;
    if (terminate) throw StepFailure("the FMU requested the end of the simulation at t = " + fmt_time(last) + inst_.log().tail());
    if (s == fmi3Discard || early) {
      ++discarded_;
      if (!(last > t)) throw StepFailure("fmi3DoStep returned early from t = " + fmt_time(t) + " without progress" + inst_.log().tail());
      t_ = std::min(last, t + h);
      return t_;
    }
    t_ = t + h;
    return t_;
  }
  void outputs(std::span<double> y) override {
    if (inst_.io().any_feedthrough) inst_.set_inputs(inputs(), t_);
    inst_.get_outputs(y, t_);
  }
  json statistics() const override { return {{"steps", steps_}, {"discarded_steps", discarded_}}; }
  json report() const override {
    return {{"fmu", inst_.fmu().file.string()}, {"fmi_version", inst_.fmu().md.fmi_version}, {"interface", "co-simulation"}};
  }
  bool can_save_state() const override { return inst_.can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override { save_cs_state(inst_, slot, t_, first_h_); }
  void restore_state(const SavedState& state) override { restore_cs_state(inst_, state, t_, first_h_); }

 private:
  Fmi3Instance inst_;
  std::vector<PortSpec> ports_;
  double t_ = 0.0, first_h_ = 0.0;
  long steps_ = 0, discarded_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parameters and ports from the model description.

std::vector<ParamSpec> parameter_specs(const ModelDescription& md) {
  std::vector<ParamSpec> out;
  for (const auto& v : md.variables) {
    if (v.causality != "parameter") continue;
    ParamSpec s;
    s.name = v.name;
    switch (v.type) {
      case VarType::real: s.type = v.size > 1 ? ParamType::real_list : ParamType::real; break;
      case VarType::integer:
      case VarType::enumeration: s.type = ParamType::integer; break;
      case VarType::boolean: s.type = ParamType::boolean; break;
      case VarType::string: s.type = ParamType::string; break;
    }
    s.default_value = v.start;
    s.unit = v.type == VarType::real ? (v.unit.empty() ? "1" : v.unit) : "";
    s.min = v.min;
    s.max = v.max;
    s.doc = (v.description.empty() ? std::string("FMU parameter") : v.description) + " (" + v.variability +
            ", value reference " + std::to_string(v.value_reference) +
            (v.size > 1 ? ", " + std::to_string(v.size) + " values" : std::string()) + ")";
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PortSpec> port_specs(const ModelDescription& md) {
  std::vector<PortSpec> out;
  auto unit = [](const Variable& v) { return v.type == VarType::real ? (v.unit.empty() ? "1" : v.unit) : "1"; };
  auto doc = [](const Variable& v) {
    const char* type = v.type == VarType::real ? "real" : v.type == VarType::boolean ? "boolean (0 or 1)" : "integer";
    std::string d = (v.description.empty() ? std::string() : v.description + "; ") + type + ", value reference " +
                    std::to_string(v.value_reference);
    if (!v.fmu_unit.empty())
      d += "; in the FMU: " + v.fmu_unit + " = " + number_text(v.unit_factor) + " " + v.unit +
           (v.unit_offset != 0.0 ? " + " + number_text(v.unit_offset) : std::string()) + ", converted";
    return d;
  };
  for (const auto& v : md.variables)
    if (v.causality == "input") {
      if (v.type == VarType::string) throw FmuError("input \"" + v.name + "\" is a String: Stride exchanges numbers only");
      out.push_back(input(v.name, v.size, unit(v), doc(v)));
    }
  for (const auto& v : md.variables)
    if (v.causality == "output") {
      if (v.type == VarType::string) throw FmuError("output \"" + v.name + "\" is a String: Stride exchanges numbers only");
      out.push_back(output(v.name, v.size, unit(v), doc(v), v.feedthrough));
    }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

FmuPlugin::FmuPlugin(std::shared_ptr<const Fmu> fmu) : fmu_(std::move(fmu)) {
  const auto& md = fmu_->md;
  info_.name = fmu_->label;
  info_.kind = Kind::subsystem;
  info_.form = md.has_cs ? Form::stepper : Form::ode;
  info_.version = "FMI " + md.fmi_version;
  info_.description = "FMU \"" + md.model_name + "\" (" +
                      (md.has_cs && md.has_me ? std::string("co-simulation and model exchange")
                       : md.has_cs            ? std::string("co-simulation")
                                              : std::string("model exchange")) +
                      (md.description.empty() ? "" : "): " + md.description);
  if (md.description.empty()) info_.description += ")";
  info_.parameters = parameter_specs(md);
  (void)port_specs(md);  // String ports are refused at load time
}
FmuPlugin::~FmuPlugin() = default;

const ModelDescription& FmuPlugin::description() const { return fmu_->md; }
std::vector<PortSpec> FmuPlugin::ports() const { return port_specs(fmu_->md); }

std::unique_ptr<Subsystem> FmuPlugin::create_subsystem(const Params& p) const {
  return create(p, fmu_->md.model_name, nullptr);
}

namespace {

std::unique_ptr<Subsystem> make_subsystem(const std::shared_ptr<const Fmu>& fmu, std::vector<PortSpec> ports,
                                          const Params& p, const std::string& name, std::shared_ptr<Integrator> integrator,
                                          bool model_exchange) {
  const int v = fmu->md.version;
  if (model_exchange) {
    if (v == 3) return std::make_unique<ModelExchange<Fmi3Me>>(fmu, std::move(ports), p, name, std::move(integrator));
    return std::make_unique<ModelExchange<Fmi2Me>>(fmu, std::move(ports), p, name, std::move(integrator));
  }
  if (v == 3) return std::make_unique<Fmi3CoSimulation>(fmu, std::move(ports), p, name);
  return std::make_unique<Fmi2CoSimulation>(fmu, std::move(ports), p, name);
}

// Instantiates (and frees) the FMU once in a child process before the host does it itself: a
// binary that crashes or hangs while instantiating stops the child, and the host reports it
// instead of dying with it (instantiation happens while the experiment is built, before any
// supervised run). Throws PluginError for a crash or a hang; anything else (NULL, an
// exception) is left for the real instantiation to report with the FMU's own messages.
void probe_instantiation(const std::shared_ptr<const Fmu>& fmu, bool model_exchange) {
  // s; STRIDE_FMU_PROBE_TIMEOUT overrides it (an FMU that checks a licence server may need more).
  double kTimeout = 10.0;
  if (const char* e = std::getenv("STRIDE_FMU_PROBE_TIMEOUT")) {
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (end != e && std::isfinite(v) && v > 0) kTimeout = std::min(v, 86400.0);
  }
  const std::string fn = fmu->md.version == 2 ? "fmi2Instantiate"
                         : model_exchange     ? "fmi3InstantiateModelExchange"
                                              : "fmi3InstantiateCoSimulation";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return;  // no probe: the host instantiates unguarded
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);  // the host prints the FMU's messages when it instantiates
    try {
      make_subsystem(fmu, port_specs(fmu->md), Params{}, "probe", nullptr, model_exchange);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int wait_us = 100;; wait_us = std::min(wait_us * 2, 20000)) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kTimeout) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw PluginError(fmu->label, fn + " did not return within " + fmt_time(kTimeout) +
                                        " s (tried in a separate process before the run); the FMU cannot be used");
    }
    ::usleep(static_cast<useconds_t>(wait_us));
  }
  if (WIFSIGNALED(status))
    throw PluginError(fmu->label, fn + " crashed with " + signal_name(WTERMSIG(status)) +
                                      " (tried in a separate process before the run); the FMU cannot be used");
}

}  // namespace

std::unique_ptr<Subsystem> FmuPlugin::create(const Params& p, const std::string& name,
                                             std::shared_ptr<Integrator> integrator) const {
  const auto& md = fmu_->md;
  const bool model_exchange = integrator || !md.has_cs;
  if (model_exchange && !md.has_me) throw std::invalid_argument("the FMU has no model-exchange interface: remove the integrator");
  for (const auto& v : md.variables)
    if (v.causality == "parameter" && v.size > 1 && p.values().contains(v.name) && p.values()[v.name].is_array() &&
        p.values()[v.name].size() != v.size)
      throw ParameterError("/" + pointer_escape(v.name), "expected a list of " + std::to_string(v.size) +
                                                         " numbers (the FMU's array), found " +
                                                         std::to_string(p.values()[v.name].size()));
  bool& probed = model_exchange ? probed_me_ : probed_cs_;
  if (!probed) {
    probe_instantiation(fmu_, model_exchange);
    probed = true;
  }
  return make_subsystem(fmu_, ports(), p, name, std::move(integrator), model_exchange);
}

std::shared_ptr<boost::dll::shared_library> FmuPlugin::library(bool model_exchange) const {
  return model_exchange && fmu_->me_lib ? fmu_->me_lib : fmu_->cs_lib ? fmu_->cs_lib : fmu_->me_lib;
}

std::shared_ptr<FmuPlugin> load_fmu(const fs::path& file) {
  auto fmu = std::make_shared<Fmu>();
  fmu->file = file;
  fmu->label = file.string();
  std::error_code ec;
  if (!fs::exists(file, ec)) throw FmuError(fmu->label + ": no such file");
  if (!fs::is_regular_file(file, ec)) throw FmuError(fmu->label + ": not a regular file");
  fmu->folder = std::make_shared<TempFolder>();
  unpack(file, fmu->folder->path(), fmu->label);
  fmu->md = read_model_description(fmu->folder->path() / "modelDescription.xml", fmu->label);
  const auto& md = fmu->md;
  if (md.has_cs) {
    fmu->cs_lib = load_binary(fmu->folder->path(), md, md.cs_identifier, fmu->label);
    Lookup l{*fmu->cs_lib, {}};
    if (md.version == 2) {
      lookup_common2(l, fmu->cs2, md.cs_can_get_set_state);
      l(fmu->cs2.do_step, "fmi2DoStep");
      l(fmu->cs2.get_real_status, "fmi2GetRealStatus", false);
    } else {
      lookup_common3(l, fmu->cs3, md.cs_can_get_set_state);
      l(fmu->cs3.instantiate, "fmi3InstantiateCoSimulation");
      l(fmu->cs3.do_step, "fmi3DoStep");
    }
    require(l, fmu->label, "co-simulation");
  }
  if (md.has_me)
    fmu->me_lib = md.has_cs && md.me_identifier == md.cs_identifier ? fmu->cs_lib
                                                                     : load_binary(fmu->folder->path(), md, md.me_identifier, fmu->label);
  if (md.has_me && md.version == 3) {
    Lookup l{*fmu->me_lib, {}};
    auto& a = fmu->me3;
    lookup_common3(l, a, md.me_can_get_set_state);
    l(a.instantiate_me, "fmi3InstantiateModelExchange");
    l(a.set_time, "fmi3SetTime");
    l(a.set_states, "fmi3SetContinuousStates");
    l(a.get_derivatives, "fmi3GetContinuousStateDerivatives");
    l(a.get_event_indicators, "fmi3GetEventIndicators");
    l(a.get_states, "fmi3GetContinuousStates");
    l(a.enter_event_mode, "fmi3EnterEventMode");
    l(a.update_discrete_states, "fmi3UpdateDiscreteStates");
    l(a.enter_continuous_time_mode, "fmi3EnterContinuousTimeMode");
    l(a.completed_integrator_step, "fmi3CompletedIntegratorStep");
    require(l, fmu->label, "model-exchange");
  }
  if (md.has_me && md.version == 2) {
    Lookup l{*fmu->me_lib, {}};
    auto& a = fmu->me2;
    lookup_common2(l, a, md.me_can_get_set_state);
    l(a.set_time, "fmi2SetTime");
    l(a.set_states, "fmi2SetContinuousStates");
    l(a.get_derivatives, "fmi2GetDerivatives");
    l(a.get_event_indicators, "fmi2GetEventIndicators");
    l(a.get_states, "fmi2GetContinuousStates");
    l(a.enter_event_mode, "fmi2EnterEventMode");
    l(a.new_discrete_states, "fmi2NewDiscreteStates");
    l(a.enter_continuous_time_mode, "fmi2EnterContinuousTimeMode");
    l(a.completed_integrator_step, "fmi2CompletedIntegratorStep");
    require(l, fmu->label, "model-exchange");
  }
  try {
    return std::make_shared<FmuPlugin>(fmu);
  } catch (const FmuError& e) {
    throw FmuError(fmu->label + ": " + e.what());
  }
}

void remove_temporary_fmu_folders() noexcept {
  std::lock_guard<std::mutex> lock(g_folders_mutex);
  for (TempFolder* f : g_folders) f->remove();
}

}  // namespace stride::host::fmi
