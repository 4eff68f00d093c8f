// Live inputs and outputs over UDP: devices, joysticks, PLCs and other simulators in the loop
// (docs/real-time.md). POSIX sockets, IPv4, non-blocking: a step never waits for the network.
//
//   "operator": {"plugin": "udp", "step": 0.016, "parameters": {
//     "listen": "127.0.0.1:50100",
//     "receive": [{"name": "boom_valve", "unit": "1"}, {"name": "jib_valve"}],
//     "send_to": "127.0.0.1:50101",
//     "send": [{"name": "log_height", "unit": "m"}],
//     "timeout": 0.5, "on_timeout": "stop", "on_malformed": "hold"}}
//
// A datagram is the values as little-endian IEEE-754 float64 in the declared order (8 bytes
// each; Simulink's UDP blocks and most rigs use this layout). At the start of each step from t
// (with the step equal to the macro step: once per communication point; in a real-time run just
// after t's deadline), the plugin
//   1. reads every datagram that arrived since the last step ("receive"): the last valid one
//      gives the outputs at the step's end, t + h, held until a later one arrives, and
//   2. sends one datagram of its inputs at t ("send") to "send_to".
// So an output answers a datagram one step after it arrived, and a partner that echoes what it
// receives is seen two steps later. Until the first datagram the outputs hold their "initial"
// values (0 by default). A datagram of the wrong size or with a value that is not finite is
// counted and ignored ("on_malformed": "hold") or ends the run naming it ("stop"); no datagram
// for longer than "timeout" seconds of wall time (0: no limit) is counted once per silence
// ("on_timeout": "hold") or ends the run ("stop"). The counts are the subsystem's "statistics"
// in summary.json. Nothing is allocated while stepping.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>

#include <stride/stride.hpp>

namespace {

using namespace stride;
using Clock = std::chrono::steady_clock;

struct Signal {
  std::string name, unit;
  double initial = 0.0;
};

// [{"name": ..., "unit": ...}, ...] at `ptr`; "initial" too for received values.
std::vector<Signal> signals_of(const json& list, const std::string& ptr, bool received) {
  std::vector<Signal> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& s = list[i];
    const std::string p = ptr + "/" + std::to_string(i);
    for (auto it = s.begin(); it != s.end(); ++it)
      if (it.key() != "name" && it.key() != "unit" && !(received && it.key() == "initial"))
        throw ParameterError(p + "/" + it.key(),
                             std::string("unknown key; allowed: name, unit") + (received ? ", initial" : ""));
    if (!s.contains("name") || !s["name"].is_string() || s["name"].get<std::string>().empty())
      throw ParameterError(p + "/name", "expected the port's name (a non-empty string)");
    Signal sig{s["name"].get<std::string>(), "1", 0.0};
    if (!names.insert(sig.name).second) throw ParameterError(p + "/name", "\"" + sig.name + "\" is declared twice");
    if (s.contains("unit")) {
      if (!s["unit"].is_string())
        throw ParameterError(p + "/unit", "expected a unit (a string such as \"m\" or \"1\")");
      sig.unit = s["unit"].get<std::string>();
    }
    if (s.contains("initial")) {
      if (!s["initial"].is_number() || !std::isfinite(s["initial"].get<double>()))
        throw ParameterError(p + "/initial", "expected a finite number, found " + s["initial"].dump());
      sig.initial = s["initial"].get<double>();
    }
    out.push_back(sig);
  }
  return out;
}

// "host:port" or "port" (host 127.0.0.1), IPv4; `ptr` names the parameter in errors.
sockaddr_in address_of(const std::string& text, const std::string& ptr) {
  const auto colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? "127.0.0.1" : text.substr(0, colon);
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    throw ParameterError(ptr, "expected \"host:port\" with a port from 0 to 65535, found \"" + text + "\"");
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? "127.0.0.1" : host.c_str(), nullptr, &hints, &found); rc != 0)
    throw ParameterError(ptr, "host \"" + host + "\" has no IPv4 address: " + ::gai_strerror(rc));
  sockaddr_in a{};
  std::memcpy(&a, found->ai_addr, sizeof a);
  ::freeaddrinfo(found);
  a.sin_port = htons(static_cast<std::uint16_t>(p));
  return a;
}

// A number as %g writes it (0.4, 1e-05).
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

std::string text_of(const sockaddr_in& a) {
  char host[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(a.sin_port));
}

void put_le(double v, unsigned char* out) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (int b = 0; b < 8; ++b) out[b] = static_cast<unsigned char>(bits >> (8 * b));
}
double get_le(const unsigned char* in) {
  std::uint64_t bits = 0;
  for (int b = 0; b < 8; ++b) bits |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  return std::bit_cast<double>(bits);
}

class Udp final : public Subsystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "udp";
    i.kind = Kind::subsystem;
    i.form = Form::stepper;
    i.version = "1.0.0";
    i.description =
        "Live inputs and outputs over UDP: datagrams of little-endian float64 values, one sent per step, the last "
        "received held";
    i.parameters = {
        ParamSpec{"listen",
                  ParamType::string,
                  "127.0.0.1:0",
                  "",
                  {},
                  {},
                  {},
                  "\"host:port\" (or \"port\": 127.0.0.1) the received datagrams arrive at; port 0: any free one "
                  "(see statistics.listening_on)"},
        object_list_param("receive", json::array(),
                          "outputs filled from datagrams, in datagram order: [{\"name\", \"unit\", \"initial\"}]"),
        ParamSpec{"send_to",
                  ParamType::string,
                  "",
                  "",
                  {},
                  {},
                  {},
                  "\"host:port\" each step's datagram of the \"send\" inputs goes to"},
        object_list_param("send", json::array(),
                          "inputs sent as one datagram per step, in order: [{\"name\", \"unit\"}]"),
        real_param("timeout", 0.0, "s", "wall time without a datagram that counts as silence (0: no limit)", 0.0),
        choice_param("on_timeout", "hold", {"hold", "stop"}, "silence: hold the last values (counted) or end the run"),
        choice_param("on_malformed", "hold", {"hold", "stop"},
                     "a datagram of the wrong size or with a value that is not finite: ignore it (counted) or end "
                     "the run")};
    return i;
  }

  explicit Udp(const Params& p)
      : receive_(signals_of(p.values().at("receive"), "/receive", true)),
        send_(signals_of(p.values().at("send"), "/send", false)),
        timeout_(p.real("timeout")),
        stop_on_timeout_(p.string("on_timeout") == "stop"),
        stop_on_malformed_(p.string("on_malformed") == "stop") {
    if (receive_.empty() && send_.empty())
      throw ParameterError("/receive", "expected at least one value to receive or to send (\"receive\", \"send\")");
    if (!send_.empty() && p.string("send_to").empty())
      throw ParameterError("/send_to", "expected \"host:port\" to send the \"send\" values to");
    if (send_.empty() && !p.string("send_to").empty())
      throw ParameterError("/send", "expected the inputs to send to \"" + p.string("send_to") + "\"");
    if (!send_.empty()) to_ = address_of(p.string("send_to"), "/send_to");
    open_socket(p.string("listen"));
    values_.resize(receive_.size());
    incoming_.resize(8 * receive_.size() + 8);
    outgoing_.resize(8 * send_.size());
  }
  ~Udp() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> out;
    for (const auto& s : send_) out.push_back(input(s.name, 1, s.unit, "sent to " + text_of(to_)));
    for (const auto& s : receive_) out.push_back(output(s.name, 1, s.unit, "received at the listen address"));
    return out;
  }

  void initialize(double t0) override {
    t_ = t0;
    for (std::size_t i = 0; i < receive_.size(); ++i) values_[i] = receive_[i].initial;
    heard_ = {};
  }

  double step(double t, double h) override {
    const Clock::time_point now = Clock::now();
    if (heard_ == Clock::time_point{}) heard_ = now;  // silence is counted from the first step
    if (!receive_.empty()) receive(t, now);           // first: an answer to what is sent now belongs to the next step
    if (!send_.empty()) send(t);
    t_ = t + h;
    return t_;
  }

  void outputs(std::span<double> y) override {
    for (std::size_t i = 0; i < values_.size(); ++i) y[i] = values_[i];
  }

  json statistics() const override {
    json s = {{"datagrams_sent", sent_},   {"send_errors", send_errors_}, {"datagrams_received", received_},
              {"wrong_size", wrong_size_}, {"not_finite", not_finite_},   {"timeouts", timeouts_}};
    if (!receive_.empty()) s["listening_on"] = text_of(bound_);
    if (!send_.empty()) s["sending_to"] = text_of(to_);
    return s;
  }

 private:
  void open_socket(const std::string& listen) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("cannot open a UDP socket: ") + std::strerror(errno));
    if (receive_.empty()) return;
    bound_ = address_of(listen, "/listen");
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&bound_), sizeof bound_) != 0)
      throw ParameterError("/listen", "cannot listen at " + listen + ": " + std::strerror(errno));
    socklen_t len = sizeof bound_;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound_), &len);
  }

  void send(double t) {
    for (std::size_t i = 0; i < send_.size(); ++i) put_le(inputs().at(i, t)[0], &outgoing_[8 * i]);
    const ssize_t n =
        ::sendto(fd_, outgoing_.data(), outgoing_.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
    if (n == static_cast<ssize_t>(outgoing_.size())) ++sent_;
    else ++send_errors_;  // no buffer space, or refused by the network: the next step sends again
  }

  // Every datagram waiting, the last valid one kept.
  void receive(double t, Clock::time_point now) {
    for (;;) {
      const ssize_t n = ::recv(fd_, incoming_.data(), incoming_.size(), MSG_TRUNC);
      if (n < 0) break;  // EAGAIN: nothing more (ECONNREFUSED and the like: nothing to read either)
      heard_ = now;
      silent_ = false;
      const std::size_t want = 8 * receive_.size();
      if (static_cast<std::size_t>(n) != want) {
        ++wrong_size_;
        if (stop_on_malformed_)
          throw std::runtime_error("a datagram of " + std::to_string(n) + " bytes arrived by t = " + num(t) +
                                   " s; expected " + std::to_string(want) + " (" + std::to_string(receive_.size()) +
                                   " little-endian float64 values)");
        continue;
      }
      bool finite = true;
      for (std::size_t i = 0; i < receive_.size(); ++i) finite = finite && std::isfinite(get_le(&incoming_[8 * i]));
      if (!finite) {
        ++not_finite_;
        if (stop_on_malformed_)
          throw std::runtime_error("a datagram with a value that is not finite arrived by t = " + num(t) + " s");
        continue;
      }
      ++received_;
      for (std::size_t i = 0; i < receive_.size(); ++i) values_[i] = get_le(&incoming_[8 * i]);
    }
    const double quiet = std::chrono::duration<double>(now - heard_).count();
    if (timeout_ > 0 && quiet > timeout_ && !silent_) {
      silent_ = true;
      ++timeouts_;
      if (stop_on_timeout_)
        throw std::runtime_error("no datagram arrived at " + text_of(bound_) + " for " + num(quiet) +
                                 " s of wall time (timeout " + num(timeout_) + " s) by t = " + num(t) + " s");
    }
  }

  std::vector<Signal> receive_, send_;
  double timeout_;
  bool stop_on_timeout_, stop_on_malformed_;
  int fd_ = -1;
  sockaddr_in bound_{}, to_{};
  std::vector<double> values_;
  std::vector<unsigned char> incoming_, outgoing_;
  double t_ = 0.0;
  Clock::time_point heard_{};
  bool silent_ = false;
  long sent_ = 0, send_errors_ = 0, received_ = 0, wrong_size_ = 0, not_finite_ = 0, timeouts_ = 0;
};

}  // namespace

STRIDE_PLUGIN(Udp)
