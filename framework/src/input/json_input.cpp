#include "stride/host/input/json_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "input/units.hpp"

namespace stride::host {
namespace fs = std::filesystem;

ManifestError::ManifestError(std::vector<Diagnostic> d)
    : std::runtime_error([&] {
        std::string s;
        for (const auto& x : d) s += (s.empty() ? "" : "\n") + x.str();
        return s;
      }()),
      diags_(std::move(d)) {}

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string with_article(const std::string& word) {
  const bool vowel = !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + word;
}

std::string listed(const std::vector<std::string>& names, const std::string& none) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? none : s;
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    auto d = distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

bool is_pattern(const std::string& s) { return s.find_first_of("*?") != std::string::npos; }

// Greedy with one backtrack point (the last "*"): O(|pattern| * |text|) at worst, so a
// hostile pattern like "*a*a*a*b" cannot take exponential time.
bool pattern_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || (pattern[p] != '*' && pattern[p] == text[t]))) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, resume = t;
    } else if (star != std::string::npos) {
      p = star + 1, t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string number_text(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  const std::size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  std::uint32_t cp = c & (0xff >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte(i + k) & 0x3f);
  const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

std::string one_line(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_sequence(text, i);
    char piece[8];
    std::string_view add;
    if (n == 0) {
      add = "\xef\xbf\xbd";  // U+FFFD for a byte that starts no UTF-8 character
    } else if (c == '\n' || c == '\r' || c == '\t') {
      add = c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(piece, sizeof piece, "\\x%02x", c);
      add = piece;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {  // C1: U+0080 to U+009F
      std::snprintf(piece, sizeof piece, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      add = piece;
    } else {
      add = text.substr(i, n);
    }
    if (out.size() + add.size() > max_bytes) break;
    out += add;
    i += n == 0 ? 1 : n;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " bytes cut)";
  return out;
}

std::string dump_safe(const json& v, int indent) { return v.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string type_name(const json& v) {
  auto shown = [&] {
    std::string s = dump_safe(v);
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
  };
  if (v.is_number_integer()) return "integer " + shown();
  if (v.is_number()) return "number " + shown();
  if (v.is_string()) return "string " + shown();
  if (v.is_boolean()) return "boolean " + shown();
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string read_text_file(const fs::path& file, const JsonLimits& limits) {
  auto fail = [&](const std::string& why) { return ManifestError({{file.string(), "", why}}); };
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw fail(std::string("cannot open the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail(std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw fail("expected a file, found a directory");
  if (!S_ISREG(st.st_mode)) throw fail("expected a regular file, found a device, pipe or socket");
  if (static_cast<std::size_t>(st.st_size) > limits.max_bytes)
    throw fail("the file has " + std::to_string(st.st_size) + " bytes, more than the limit of " +
               std::to_string(limits.max_bytes) + " bytes");
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fail(std::string("cannot read the file: ") + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > limits.max_bytes)  // grew while being read
      throw fail("the file has more than the limit of " + std::to_string(limits.max_bytes) + " bytes");
  }
  return text;
}

namespace {

// A first pass over the text: depth, duplicate keys and syntax, with the pointer of every
// value, before anything builds or walks a tree.
class Checker final : public nlohmann::json_sax<json> {
 public:
  Checker(std::string file, std::vector<Diagnostic>& diags, const JsonLimits& limits, std::string base)
      : file_(std::move(file)),
        diags_(diags),
        limits_(limits),
        base_(std::move(base)),
        base_depth_(static_cast<std::size_t>(std::count(base_.begin(), base_.end(), '/'))) {}
  bool fatal = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      diags_.push_back(
          {file_, pointer(false) + "/" + pointer_escape(k),
           "duplicate key \"" + k +
               "\" (each key may appear once in an object; a second one would silently replace the first)"});
      fatal = true;
    }
    f.key = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    // A number beyond a double (1e400) is reported without a place: keep where it ends, what it
    // is and the pointer of the value it was to be.
    if (e.id == 406) {
      value();  // the number takes its place in an array
      overflow_end_ = position;
      overflow_token_ = token;
      overflow_pointer_ = pointer();
    }
    fatal = true;
    return false;
  }
  const std::string& error() const { return error_; }
  // A number too large for a double: (its pointer, the message with its line and column), or
  // nullopt when the error is another one.
  std::optional<std::pair<std::string, std::string>> overflow(const std::string& text) const {
    if (overflow_token_.empty()) return std::nullopt;
    const std::size_t end = std::min(overflow_end_, text.size());
    const std::size_t start = end >= overflow_token_.size() ? end - overflow_token_.size() : 0;
    const std::size_t line_start = start == 0 ? 0 : text.rfind('\n', start - 1) + 1;  // npos + 1 == 0
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(start), '\n');
    return std::make_pair(overflow_pointer_, "invalid JSON at line " + std::to_string(line) + ", column " +
                                                 std::to_string(start - line_start + 1) + ": the number " +
                                                 overflow_token_ + " is beyond the range of a double (about 1.8e308)");
  }
  bool depth_exceeded() const { return depth_exceeded_; }

 private:
  struct Frame {
    bool object;
    std::string key;
    std::size_t index = 0;  // elements of an array begun so far
    std::unordered_set<std::string> keys;
  };
  bool value() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  bool open(bool object) {
    value();
    if (base_depth_ + stack_.size() >= limits_.max_depth) {
      diags_.push_back({file_, pointer(), "nesting deeper than " + std::to_string(limits_.max_depth) +
                                              " levels of objects and arrays (the limit for a Stride document)"});
      fatal = true;
      depth_exceeded_ = true;
      return false;
    }
    stack_.push_back(Frame{object, {}, 0, {}});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
  // The pointer of the value being read (of the innermost container itself without `inner`).
  std::string pointer(bool inner = true) const {
    std::string p = base_;
    for (std::size_t i = 0; i + (inner ? 0 : 1) < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p += "/" + (f.object ? pointer_escape(f.key) : std::to_string(f.index - 1));
    }
    return p;
  }

  std::string file_;
  std::vector<Diagnostic>& diags_;
  const JsonLimits& limits_;
  std::string base_;
  std::size_t base_depth_;  // containers above the text's root (a --set value's pointer)
  std::vector<Frame> stack_;
  std::string error_;
  std::size_t overflow_end_ = 0;
  std::string overflow_token_, overflow_pointer_;
  bool depth_exceeded_ = false;
};

}  // namespace

std::optional<double> DocumentChecker::quantity(const json& obj, const std::string& ptr, const std::string& key,
                                                const char* expected, const std::string& unit, bool positive,
                                                std::optional<double> def) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  if (!v.is_string()) return number(obj, ptr, key, expected, positive, def);
  std::string why;
  auto x = quantity_in(v.get<std::string>(), unit, why);
  if (!x) {
    const std::string example = unit == "s" ? "20 ms" : "1.5 " + unit;
    error(ptr + "/" + key, std::string("expected ") + expected +
                               " (a number, or a string with a number and a unit such as \"" + example + "\"), found " +
                               type_name(v) + ": " + why);
    return std::nullopt;
  }
  if (positive && *x <= 0) {
    error(ptr + "/" + key,
          std::string("expected ") + expected + ", found " + type_name(v) + " = " + number_text(*x) + " " + unit);
    return std::nullopt;
  }
  converted.push_back({ptr + "/" + key, v.get<std::string>(), *x, unit});
  return x;
}

std::string ConvertedValue::str() const {
  return pointer + ": \"" + written + "\" = " + number_text(value) + (unit.empty() || unit == "1" ? "" : " " + unit);
}

std::optional<json> parse_json(const std::string& text, const std::string& file, std::vector<Diagnostic>& diags,
                               const JsonLimits& limits, const std::string& base_pointer) {
  if (text.size() > limits.max_bytes) {
    diags.push_back({file, base_pointer,
                     "the text has " + std::to_string(text.size()) + " bytes, more than the limit of " +
                         std::to_string(limits.max_bytes) + " bytes"});
    return std::nullopt;
  }
  Checker chk(file, diags, limits, base_pointer);
  json::sax_parse(text, &chk, nlohmann::detail::input_format_t::json, true, false);
  if (auto overflow = chk.overflow(text)) {
    diags.push_back({file, overflow->first, overflow->second});
    return std::nullopt;
  }
  if (!chk.error().empty()) {
    // "[json.exception.parse_error.101] parse error at line 5, column 9: syntax error ..."
    std::string what = chk.error();
    if (auto p = what.find("at line "); p != std::string::npos) what = what.substr(p);
    else if (auto q = what.find("] "); q != std::string::npos) what = what.substr(q + 2);
    diags.push_back({file, base_pointer, "invalid JSON " + what});
    return std::nullopt;
  }
  if (chk.fatal) return std::nullopt;
  return json::parse(text);
}

}  // namespace stride::host
