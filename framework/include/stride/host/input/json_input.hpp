// Reading JSON a user hands to Stride (manifests, --set values, sweep files) within limits:
// a bounded file size, a bounded nesting depth, no duplicate keys, and syntax errors with line
// and column. Every problem is a Diagnostic naming the file and, where there is one, the JSON
// pointer; nothing recursive ever runs on a document deeper than the limit.
#pragma once

#include <cstddef>
#include <filesystem>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host {

// One problem in a manifest: the file, the JSON pointer of the offending value, and what was
// expected and found (message).
struct Diagnostic {
  std::string file;
  std::string pointer;
  std::string message;
  std::string str() const { return file + ": " + (pointer.empty() ? "(document)" : pointer) + ": " + message; }
};

class ManifestError : public std::runtime_error {
 public:
  explicit ManifestError(std::vector<Diagnostic> d);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

struct JsonLimits {
  std::size_t max_bytes = std::size_t(16) << 20;  // a manifest is kilobytes; 16 MiB is generous
  std::size_t max_depth = 64;                      // the deepest shipped manifest nests 6 levels
};

// The whole content of a regular file of at most limits.max_bytes (never reads more than
// that: /dev/zero, a FIFO or a directory is refused, not read until memory runs out).
// Throws ManifestError naming the file.
std::string read_text_file(const std::filesystem::path& file, const JsonLimits& limits = {});

// Parses `text`; problems are appended to `diags` (labelled `file`, pointers relative to
// `base_pointer`) and nullopt is returned when the text cannot be used. Duplicate keys are
// reported with their pointer but do not stop the parse.
std::optional<json> parse_json(const std::string& text, const std::string& file, std::vector<Diagnostic>& diags,
                               const JsonLimits& limits = {}, const std::string& base_pointer = "");

// A key escaped for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string pointer_escape(const std::string& key);

// "integer 3", "string \"a\"", "an object": what was found, for messages.
std::string type_name(const json& v);

// "an integrator", "a subsystem": a kind of thing in a sentence.
std::string with_article(const std::string& word);

// "a, b, c" (`none` when there are none): names listed in a message.
std::string listed(const std::vector<std::string>& names, const std::string& none = "(none)");

// Levenshtein-closest candidate, or "" when nothing is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

// Names chosen by pattern (record/variables): "*" stands for any run of characters, "?" for
// one; every other character, "[" and "]" too (FMI 2 names like "x[1]"), stands for itself.
bool is_pattern(const std::string& s);
bool pattern_match(const std::string& pattern, const std::string& text);

// A manifest value written with a unit and the number it became: at `pointer`, `written`
// ("100 ms") is `value` in `unit` (0.1 s). `validate` lists them.
struct ConvertedValue {
  std::string pointer;
  std::string written;
  double value = 0.0;
  std::string unit;
  std::string str() const;  // "/coupling/macro_step: \"100 ms\" = 0.1 s"
};

// Checks a document's structure and collects every problem with its pointer.
struct DocumentChecker {
  std::string file;
  std::vector<Diagnostic> diags;
  std::vector<ConvertedValue> converted;  // every value quantity() converted from a unit

  void error(const std::string& ptr, std::string msg) { diags.push_back({file, ptr, std::move(msg)}); }

  // Unknown keys get a "did you mean"; missing required keys are reported.
  bool object(const json& v, const std::string& ptr, const std::vector<std::string>& allowed,
              const std::vector<std::string>& required) {
    if (!v.is_object()) {
      error(ptr, "expected an object, found " + type_name(v));
      return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string msg = "unknown key \"" + it.key() + "\"";
      if (auto c = closest(it.key(), allowed); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      std::string all;
      for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
      error(ptr + "/" + pointer_escape(it.key()), msg + "; allowed keys: " + all);
    }
    for (const auto& r : required)
      if (!v.contains(r)) error(ptr + "/" + pointer_escape(r), "required key \"" + r + "\" is missing");
    return true;
  }

  std::optional<double> number(const json& obj, const std::string& ptr, const std::string& key,
                               const char* expected, bool positive, std::optional<double> def = {}) {
    if (!obj.contains(key)) return def;
    const json& v = obj[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || (positive && v.get<double>() <= 0)) {
      error(ptr + "/" + key, std::string("expected ") + expected + ", found " + type_name(v));
      return std::nullopt;
    }
    return v.get<double>();
  }

  // A number in `unit`, or a string with a number and a unit convertible to it ("2 ms" for a
  // time in s), converted (json_input.cpp, through UDUNITS-2).
  std::optional<double> quantity(const json& obj, const std::string& ptr, const std::string& key, const char* expected,
                                 const std::string& unit, bool positive, std::optional<double> def = {});

  std::optional<std::string> string(const json& obj, const std::string& ptr, const std::string& key,
                                    const std::vector<std::string>& choices = {}) {
    if (!obj.contains(key)) return std::nullopt;
    const json& v = obj[key];
    std::string allowed;
    for (const auto& c : choices) allowed += (allowed.empty() ? "\"" : ", \"") + c + "\"";
    if (!v.is_string()) {
      error(ptr + "/" + key, "expected a string" + (allowed.empty() ? "" : " (one of " + allowed + ")") +
                                 ", found " + type_name(v));
      return std::nullopt;
    }
    auto s = v.get<std::string>();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end()) {
      std::string msg = "expected one of " + allowed + ", found \"" + s + "\"";
      if (auto c = closest(s, choices); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(ptr + "/" + key, msg);
      return std::nullopt;
    }
    return s;
  }
};

// The length (1 to 4) of the valid UTF-8 sequence that starts at s[i], 0 when none does (a stray
// continuation byte, an overlong form, a surrogate, a code point beyond U+10FFFF, a cut-off end).
std::size_t utf8_sequence(std::string_view s, std::size_t i);

// `text` as one printable line of at most about `max_bytes` bytes: newlines, tabs and other
// control characters (C0, DEL, C1) written as escapes ("\n", "\t", "\x1b", "\u009b"), bytes
// that are not UTF-8 replaced by U+FFFD; beyond `max_bytes` cut at a character and ended with
// "... (N bytes cut)". A message can then neither forge a second line nor drive a terminal.
std::string one_line(std::string_view text, std::size_t max_bytes);

// A number as a person writes it: shortest round-trip form ("0.01", "1e+08"), the form of
// every number in results.csv and sweep.csv (reading it back gives the same double).
std::string number_text(double x);

// A JSON value as text for a message or a file: never throws, invalid UTF-8 is replaced.
std::string dump_safe(const json& v, int indent = -1);

}  // namespace stride::host
