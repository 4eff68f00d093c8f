// The binary of an FMU against its modelDescription.xml (see fmi_rules.hpp): the functions its
// dynamic symbol table exports, those the standard requires for the interfaces declared and
// those each declared capability needs.
#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include <pugixml.hpp>

#include "export/fmi_rules.hpp"
#include "stride/fmi/fmi2.h"
#include "stride/fmi/fmi3.h"

namespace stride::host::fmu_export {

namespace {

#define STRIDE_NAME_OF(f) #f,
const std::vector<std::string> kFmi2Common = {STRIDE_FMI2_COMMON_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi2ModelExchange = {STRIDE_FMI2_ME_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi2CoSimulation = {STRIDE_FMI2_CS_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi3Common = {STRIDE_FMI3_COMMON_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi3ModelExchange = {STRIDE_FMI3_ME_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi3CoSimulation = {STRIDE_FMI3_CS_FUNCTIONS(STRIDE_NAME_OF)};
const std::vector<std::string> kFmi3ScheduledExecution = {STRIDE_FMI3_SE_FUNCTIONS(STRIDE_NAME_OF)};
#undef STRIDE_NAME_OF

// A capability attribute of an interface element and the functions it promises.
struct Capability {
  const char* attribute;
  std::vector<std::string> functions;
};

const std::vector<Capability> kFmi2Capabilities = {
    {"canGetAndSetFMUstate", {"fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate"}},
    {"canSerializeFMUstate", {"fmi2SerializedFMUstateSize", "fmi2SerializeFMUstate", "fmi2DeSerializeFMUstate"}},
    {"providesDirectionalDerivative", {"fmi2GetDirectionalDerivative"}},
    {"canInterpolateInputs", {"fmi2SetRealInputDerivatives"}},
    {"maxOutputDerivativeOrder", {"fmi2GetRealOutputDerivatives"}}};
const std::vector<Capability> kFmi3Capabilities = {
    {"canGetAndSetFMUState", {"fmi3GetFMUState", "fmi3SetFMUState", "fmi3FreeFMUState"}},
    {"canSerializeFMUState", {"fmi3SerializedFMUStateSize", "fmi3SerializeFMUState", "fmi3DeserializeFMUState"}},
    {"providesDirectionalDerivatives", {"fmi3GetDirectionalDerivative"}},
    {"providesAdjointDerivatives", {"fmi3GetAdjointDerivative"}},
    {"providesPerElementDependencies", {"fmi3GetNumberOfVariableDependencies", "fmi3GetVariableDependencies"}},
    {"hasEventMode", {"fmi3EnterEventMode", "fmi3EnterStepMode", "fmi3UpdateDiscreteStates"}},
    {"maxOutputDerivativeOrder", {"fmi3GetOutputDerivatives"}},
    {"providesEvaluateDiscreteStates", {"fmi3EvaluateDiscreteStates"}}};

// A capability is declared when its attribute is true (or a positive order).
bool declared(pugi::xml_attribute a) {
  const std::string v = a.value();
  return v == "true" || v == "1" || (!v.empty() && v != "false" && v != "0" && std::strtol(v.c_str(), nullptr, 10) > 0);
}

template <class T>
T read_at(const std::string& image, std::size_t offset, const std::filesystem::path& file) {
  if (offset + sizeof(T) > image.size() || offset + sizeof(T) < offset)
    throw std::runtime_error(file.string() + ": truncated ELF file");
  T x;
  std::memcpy(&x, image.data() + offset, sizeof(T));
  return x;
}

}  // namespace

std::set<std::string> exported_functions(const std::filesystem::path& binary) {
  std::ifstream in(binary, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + binary.string());
  const std::string image((std::istreambuf_iterator<char>(in)), {});
  const auto eh = read_at<Elf64_Ehdr>(image, 0, binary);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(binary.string() + ": not a 64-bit ELF shared library");
  std::set<std::string> out;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    const auto sh = read_at<Elf64_Shdr>(image, eh.e_shoff + i * eh.e_shentsize, binary);
    if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0) continue;
    const auto strings = read_at<Elf64_Shdr>(image, eh.e_shoff + sh.sh_link * eh.e_shentsize, binary);
    for (std::size_t k = 0; k < sh.sh_size / sh.sh_entsize; ++k) {
      const auto sym = read_at<Elf64_Sym>(image, sh.sh_offset + k * sh.sh_entsize, binary);
      const int bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
          (bind != STB_GLOBAL && bind != STB_WEAK))
        continue;
      if (strings.sh_offset + sym.st_name >= image.size())
        throw std::runtime_error(binary.string() + ": bad symbol name");
      out.insert(image.c_str() + strings.sh_offset + sym.st_name);
    }
  }
  return out;
}

std::vector<std::string> binary_problems(const std::string& xml_text, const std::set<std::string>& exported,
                                         const std::string& binary_name) {
  pugi::xml_document doc;
  if (!doc.load_string(xml_text.c_str())) return {"the model description is not XML"};
  const pugi::xml_node root = doc.child("fmiModelDescription");
  const bool v3 = std::string(root.attribute("fmiVersion").value()).rfind("3.", 0) == 0;
  std::vector<std::string> problems;
  auto require = [&](const std::string& f, const std::string& why) {
    if (!exported.count(f)) problems.push_back(binary_name + " does not export " + f + ", which " + why);
  };
  const std::map<std::string, const std::vector<std::string>*> interfaces =
      v3 ? std::map<std::string, const std::vector<std::string>*>{{"ModelExchange", &kFmi3ModelExchange},
                                                                  {"CoSimulation", &kFmi3CoSimulation},
                                                                  {"ScheduledExecution", &kFmi3ScheduledExecution}}
         : std::map<std::string, const std::vector<std::string>*>{{"ModelExchange", &kFmi2ModelExchange},
                                                                  {"CoSimulation", &kFmi2CoSimulation}};
  const std::string version = v3 ? "FMI 3.0" : "FMI 2.0";
  for (const std::string& f : v3 ? kFmi3Common : kFmi2Common) require(f, "every " + version + " FMU exports");
  for (const auto& [element, functions] : interfaces) {
    const pugi::xml_node i = root.child(element.c_str());
    if (!i) continue;
    for (const std::string& f : *functions) require(f, "every " + version + " FMU with <" + element + "> exports");
    for (const Capability& c : v3 ? kFmi3Capabilities : kFmi2Capabilities)
      if (declared(i.attribute(c.attribute)))
        for (const std::string& f : c.functions)
          require(f, "<" + element + " " + c.attribute + "=\"" + i.attribute(c.attribute).value() + "\"> needs");
  }
  return problems;
}

}  // namespace stride::host::fmu_export
