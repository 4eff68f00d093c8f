// The WebSocket /live of `stride run --view` and the board of live controls (view/live.hpp,
// stride/view_board.hpp).
#include "view/live.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "stride/host/view/view.hpp"

namespace stride::host {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxMessage = std::size_t(1) << 20;  // rows per message
constexpr std::size_t kMaxSockets = 16;

// What results.csv holds from `offset` on, at most `most` bytes, cut after its last newline
// (unless no newline is in a whole `most` bytes: then all of it, the page joins the pieces).
std::string read_rows(const std::filesystem::path& file, std::uint64_t offset, std::size_t most) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};  // not created yet
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  if (size <= offset) return {};
  std::string text(static_cast<std::size_t>(std::min<std::uint64_t>(size - offset, most)), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  const auto last = text.rfind('\n');
  if (last == std::string::npos) return text.size() == most ? text : std::string();
  text.resize(last + 1);
  return text;
}

json controls_json(const view_board::Board* b, std::uint32_t n) {
  json list = json::array();
  for (std::uint32_t i = 0; b && i < n && i < view_board::kMaxControls; ++i) {
    const view_board::Control& c = b->controls[i];
    list.push_back({{"name", c.name},
                    {"unit", c.unit},
                    {"kind", c.button ? "button" : "slider"},
                    {"min", c.min},
                    {"max", c.max},
                    {"initial", c.initial},
                    {"value", c.value.load(std::memory_order_relaxed)}});
  }
  return {{"type", "controls"}, {"controls", list}};
}

std::string text_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

// One browser: rows and controls out, values in.
class LiveSocket : public std::enable_shared_from_this<LiveSocket> {
 public:
  LiveSocket(tcp::socket socket, LiveState& live, http::request<http::string_body> request)
      : ws_(std::move(socket)), live_(live), request_(std::move(request)) {}

  void start() {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.read_message_max(64 * 1024);
    ws_.async_accept(request_, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->open_ = true;
      self->read();
      self->pump();
    });
  }

  // Sends the next message unless one is in flight.
  void pump() {
    if (!open_ || writing_ || !next_message()) return;
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(out_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) {
        self->open_ = false;
        return;
      }
      self->pump();
    });
  }

  void close() {
    open_ = false;
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

 private:
  bool next_message() {
    const view_board::Board* b = live_.board();
    const std::uint32_t n = b ? b->count.load(std::memory_order_acquire) : 0;
    if (!hello_ || n != controls_sent_) {
      out_ = text_of(controls_json(b, n));
      hello_ = true;
      controls_sent_ = n;
      return true;
    }
    if (std::string rows = read_rows(live_.results(), offset_, kMaxMessage); !rows.empty()) {
      offset_ += rows.size();
      out_ = text_of({{"type", "rows"}, {"csv", std::move(rows)}});
      return true;
    }
    if (live_.summary() && !ended_) {
      ended_ = true;
      out_ = text_of({{"type", "end"}, {"summary", *live_.summary()}});
      return true;
    }
    return false;
  }

  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {  // closed, or a frame that breaks the protocol or the size limit: the socket ends
        self->open_ = false;
        return;
      }
      self->handle(beast::buffers_to_string(self->in_.data()));
      self->in_.consume(self->in_.size());
      self->read();
    });
  }

  // {"type": "set", "name": ..., "value": ...}: stored clamped, or refused.
  void handle(const std::string& text) {
    view_board::Board* b = live_.board();
    if (!b) return;
    const json m = json::parse(text, nullptr, false);
    view_board::Control* c = nullptr;
    if (m.is_object() && m.contains("type") && m["type"] == "set" && m.contains("name") && m["name"].is_string() &&
        m.contains("value") && m["value"].is_number())
      c = view_board::find(*b, m["name"].get<std::string>());
    const double v = c ? m["value"].get<double>() : 0.0;
    if (!c || !std::isfinite(v)) {
      b->refused.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const double stored = std::clamp(v, c->min, c->max);
    if (stored != v) b->clamped.fetch_add(1, std::memory_order_relaxed);
    c->value.store(stored, std::memory_order_relaxed);
    c->updates.fetch_add(1, std::memory_order_release);
  }

  websocket::stream<beast::tcp_stream> ws_;
  LiveState& live_;
  http::request<http::string_body> request_;
  beast::flat_buffer in_;
  std::string out_;
  std::uint64_t offset_ = 0;
  std::uint32_t controls_sent_ = 0;
  bool open_ = false, writing_ = false, hello_ = false, ended_ = false;
};

LiveState::LiveState(asio::io_context& io, std::filesystem::path results)
    : timer_(io), results_(std::move(results)), board_(view_board::attach()) {}

LiveState::~LiveState() { view_board::detach(board_); }

void LiveState::start() { tick(); }

void LiveState::tick() {
  if (stopped_) return;
  std::erase_if(sockets_, [](const std::weak_ptr<LiveSocket>& s) { return s.expired(); });
  for (const auto& w : sockets_)
    if (auto s = w.lock()) s->pump();
  timer_.expires_after(std::chrono::milliseconds(50));
  timer_.async_wait([this](beast::error_code ec) {
    if (!ec) tick();
  });
}

void LiveState::stop() {
  stopped_ = true;
  timer_.cancel();
  for (const auto& w : sockets_)
    if (auto s = w.lock()) s->close();
}

void LiveState::finish(const json& summary) {
  summary_ = summary;
  for (const auto& w : sockets_)
    if (auto s = w.lock()) s->pump();
}

bool LiveState::add(const std::shared_ptr<LiveSocket>& socket) {
  std::erase_if(sockets_, [](const std::weak_ptr<LiveSocket>& s) { return s.expired(); });
  if (stopped_ || sockets_.size() >= kMaxSockets) return false;
  sockets_.push_back(socket);
  return true;
}

bool websocket_upgrade(const http::request<http::string_body>& request) { return websocket::is_upgrade(request); }

void start_live_socket(LiveState& live, tcp::socket socket, http::request<http::string_body> request) {
  auto s = std::make_shared<LiveSocket>(std::move(socket), live, std::move(request));
  if (!live.add(s)) {
    s->close();
    return;
  }
  s->start();
}

void create_view_board() {
  const int fd = ::memfd_create("stride-view-board", 0);
  if (fd < 0)
    throw std::runtime_error(std::string("cannot create the board of live controls: ") + std::strerror(errno));
  void* p = MAP_FAILED;
  if (::ftruncate(fd, sizeof(view_board::Board)) == 0)
    p = ::mmap(nullptr, sizeof(view_board::Board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("cannot map the board of live controls: ") + std::strerror(e));
  }
  auto* b = static_cast<view_board::Board*>(p);  // zero-filled by ftruncate
  b->magic = view_board::kMagic;
  ::setenv(view_board::kEnvironment, std::to_string(fd).c_str(), 1);
}

}  // namespace stride::host
