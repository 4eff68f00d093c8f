// Everything a plugin author includes.
//
//   class MyMass : public stride::OdeSystem {
//    public:
//     static stride::PluginInfo describe();     // name, kind, version, parameters
//     explicit MyMass(const stride::Params&);
//     ...
//   };
//   STRIDE_PLUGIN(MyMass)
#pragma once

#include <concepts>
#include <type_traits>

#include "stride/abi.hpp"
#include "stride/extrapolator.hpp"
#include "stride/log.hpp"
#include "stride/ode.hpp"
#include "stride/plugin.hpp"
#include "stride/subsystem.hpp"
#if __has_include("stride/multibody.hpp")
#include "stride/multibody.hpp"
#endif

namespace stride {

// The Plugin for a class T with `static PluginInfo describe()` and a constructor from Params.
// The common authoring mistakes stop the build with one message each (the create functions are
// compiled only for a well-formed T, so no template cascade follows the message).
template <class T>
class PluginFor final : public Plugin {
  static constexpr int interfaces = int(std::is_base_of_v<Subsystem, T>) + int(std::is_base_of_v<OdeSystem, T>) +
                                    int(std::is_base_of_v<Integrator, T>) + int(std::is_base_of_v<Extrapolator, T>)
#if __has_include("stride/multibody.hpp")
                                    + int(std::is_base_of_v<MultibodyModel, T>) + int(std::is_base_of_v<Formulation, T>)
#endif
      ;
  static_assert(interfaces == 1,
                "STRIDE_PLUGIN(T): T must derive (publicly) from exactly one of stride::Subsystem, stride::OdeSystem, "
                "stride::MultibodyModel, stride::Integrator, stride::Formulation, stride::Extrapolator");
  static constexpr bool has_describe = requires {
    { T::describe() } -> std::convertible_to<PluginInfo>;
  };
  static_assert(has_describe, "STRIDE_PLUGIN(T): T needs `static stride::PluginInfo describe();`");
  static constexpr bool constructible = std::is_constructible_v<T, const Params&>;
  static_assert(std::is_abstract_v<T> || constructible,
                "STRIDE_PLUGIN(T): T needs a public constructor `explicit T(const stride::Params&)`");
  static_assert(!std::is_abstract_v<T>,
                "STRIDE_PLUGIN(T): T does not override every pure virtual method of its interface (see the "
                "interface's header in stride/: ports(), step(), derivatives(), ...)");
  static constexpr bool ok = interfaces == 1 && has_describe && constructible && !std::is_abstract_v<T>;

  template <class I>
  static std::unique_ptr<I> make(const Params& p) {
    if constexpr (ok && std::is_base_of_v<I, T>) return std::make_unique<T>(p);
    else return nullptr;
  }

 public:
  const PluginInfo& info() const override {
    static const PluginInfo i = [] {
      if constexpr (has_describe) return PluginInfo(T::describe());
      else return PluginInfo{};
    }();
    return i;
  }
  std::unique_ptr<Subsystem> create_subsystem(const Params& p) const override { return make<Subsystem>(p); }
  std::unique_ptr<OdeSystem> create_ode(const Params& p) const override { return make<OdeSystem>(p); }
  std::unique_ptr<Integrator> create_integrator(const Params& p) const override { return make<Integrator>(p); }
  std::unique_ptr<Extrapolator> create_extrapolator(const Params& p) const override { return make<Extrapolator>(p); }
#if __has_include("stride/multibody.hpp")
  std::unique_ptr<MultibodyModel> create_model(const Params& p) const override { return make<MultibodyModel>(p); }
  std::unique_ptr<Formulation> create_formulation(const Params& p) const override { return make<Formulation>(p); }
#endif
  bool implements(Kind kind, Form form) const override {
    switch (kind) {
      case Kind::subsystem:
        return form == Form::stepper ? std::is_base_of_v<Subsystem, T>
               : form == Form::ode   ? std::is_base_of_v<OdeSystem, T>
#if __has_include("stride/multibody.hpp")
                                     : std::is_base_of_v<MultibodyModel, T>;
#else
                                     : false;
#endif
      case Kind::integrator: return std::is_base_of_v<Integrator, T>;
      case Kind::extrapolator: return std::is_base_of_v<Extrapolator, T>;
      case Kind::formulation:
#if __has_include("stride/multibody.hpp")
        return std::is_base_of_v<Formulation, T>;
#else
        return false;
#endif
    }
    return false;
  }
};

// Shorthand for ParamSpec of a bounded real parameter.
inline ParamSpec real_param(std::string name, double def, std::string unit, std::string doc,
                            std::optional<double> min = std::nullopt,
                            std::optional<double> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::real;
  s.default_value = def;
  s.unit = std::move(unit);
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  return s;
}
inline ParamSpec integer_param(std::string name, long def, std::string doc,
                               std::optional<double> min = std::nullopt,
                               std::optional<double> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::integer;
  s.default_value = def;
  s.unit = "1";
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  return s;
}
inline ParamSpec choice_param(std::string name, std::string def, std::vector<std::string> choices,
                              std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::string;
  s.default_value = std::move(def);
  s.choices = std::move(choices);
  s.doc = std::move(doc);
  return s;
}
inline ParamSpec real_list_param(std::string name, std::vector<double> def, std::string unit, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::real_list;
  s.default_value = std::move(def);
  s.unit = std::move(unit);
  s.doc = std::move(doc);
  return s;
}
// Integers, each within [min, max] when given.
inline ParamSpec integer_list_param(std::string name, std::vector<long> def, std::string doc,
                                    std::optional<double> min = std::nullopt,
                                    std::optional<double> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::integer_list;
  s.default_value = std::move(def);
  s.unit = "1";
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  return s;
}
// Rows of numbers in `unit` (Params::matrix); required when def is null.
inline ParamSpec matrix_param(std::string name, json def, std::string unit, std::string doc,
                              std::optional<double> min = std::nullopt,
                              std::optional<double> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::matrix;
  s.default_value = std::move(def);
  s.unit = std::move(unit);
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  return s;
}
// A table of rows [x, y_1, ..., y_k] (Params::table); column_units = {unit of x, unit of y_1,
// ...} fixes k. min/max bound the y values. Required when def is null.
inline ParamSpec table_param(std::string name, json def, std::vector<std::string> column_units, std::string doc,
                             std::optional<double> min = std::nullopt,
                             std::optional<double> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::table;
  s.default_value = std::move(def);
  s.column_units = std::move(column_units);
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  return s;
}
// A file name, relative to the manifest's folder (see ParamType::path); required when def is null.
inline ParamSpec path_param(std::string name, json def, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::path;
  s.default_value = std::move(def);
  s.doc = std::move(doc);
  return s;
}
// A list of JSON objects, in order, each checked by the plugin itself (throwing ParameterError);
// required when def is null.
inline ParamSpec object_list_param(std::string name, json def, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::object_list;
  s.default_value = std::move(def);
  s.doc = std::move(doc);
  return s;
}
// A JSON object the plugin checks itself (throwing ParameterError); required when def is null.
inline ParamSpec object_param(std::string name, json def, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::object;
  s.default_value = std::move(def);
  s.doc = std::move(doc);
  return s;
}
inline ParamSpec bool_param(std::string name, bool def, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::boolean;
  s.default_value = def;
  s.doc = std::move(doc);
  return s;
}

}  // namespace stride

#define STRIDE_PLUGIN(T) STRIDE_REGISTER_PLUGIN(::stride::PluginFor<T>)
