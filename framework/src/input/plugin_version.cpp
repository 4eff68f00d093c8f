#include "input/plugin_version.hpp"

#include <algorithm>

namespace stride::host {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

int compare(const Version& a, const Version& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const long x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace

std::optional<Version> parse_version(const std::string& text) {
  Version v;
  std::size_t i = 0;
  if (text.empty()) return std::nullopt;
  while (true) {
    std::size_t digits = 0;
    long n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (++digits > 9) return std::nullopt;  // no component overflows a long
      n = n * 10 + (text[i++] - '0');
    }
    if (digits == 0) return std::nullopt;
    v.push_back(n);
    if (i == text.size()) return v;
    if (text[i++] != '.') return std::nullopt;
  }
}

std::string parse_requirement(const std::string& text, std::vector<VersionClause>& clauses) {
  clauses.clear();
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string clause = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (clause.empty())
      return "an empty clause (expected clauses like \">=1.2\" separated by commas, such as \">=1.2, <2\")";
    VersionClause c;
    std::size_t op = 0;
    if (clause.rfind(">=", 0) == 0) c.op = VersionClause::Op::ge, op = 2;
    else if (clause.rfind("<=", 0) == 0) c.op = VersionClause::Op::le, op = 2;
    else if (clause.rfind("==", 0) == 0) c.op = VersionClause::Op::eq, op = 2;
    else if (clause.rfind(">", 0) == 0) c.op = VersionClause::Op::gt, op = 1;
    else if (clause.rfind("<", 0) == 0) c.op = VersionClause::Op::lt, op = 1;
    else if (clause[0] < '0' || clause[0] > '9')
      return "\"" + clause + "\" does not start with >=, >, <=, < or == (or a version, meaning ==)";
    const std::string number = trim(clause.substr(op));
    auto v = parse_version(number);
    if (!v) return "\"" + number + "\" in \"" + clause + "\" is not a version of dotted integers such as 1.2 or 2.0.1";
    c.version = *v;
    clauses.push_back(c);
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

bool satisfies(const Version& v, const std::vector<VersionClause>& clauses) {
  for (const auto& c : clauses) {
    const int r = compare(v, c.version);
    bool ok = false;
    switch (c.op) {
      case VersionClause::Op::ge: ok = r >= 0; break;
      case VersionClause::Op::gt: ok = r > 0; break;
      case VersionClause::Op::le: ok = r <= 0; break;
      case VersionClause::Op::lt: ok = r < 0; break;
      case VersionClause::Op::eq: ok = r == 0; break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace stride::host
