// Version requirements on plugins in manifests: "version": ">=1.2, <2". A requirement is a
// comma-separated conjunction of clauses OP VERSION, OP one of >=, >, <=, <, == (none: ==);
// versions are dotted non-negative integers compared component by component, missing
// components counting as 0 (1.2 == 1.2.0). Internal to the host.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stride::host {

using Version = std::vector<long>;

struct VersionClause {
  enum class Op { ge, gt, le, lt, eq } op = Op::eq;
  Version version;
};

// "1.2.3" -> {1, 2, 3}; nullopt unless dotted non-negative integers.
std::optional<Version> parse_version(const std::string& text);
// The clauses of a requirement; "" when it is well formed, else what is wrong with it.
std::string parse_requirement(const std::string& text, std::vector<VersionClause>& clauses);
// Every clause holds for v.
bool satisfies(const Version& v, const std::vector<VersionClause>& clauses);

}  // namespace stride::host
