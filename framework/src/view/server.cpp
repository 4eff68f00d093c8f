// `stride view`: a loopback HTTP server (Boost.Beast over Asio, one thread, asynchronous): GET /
// is the page, GET /files/N/{results.csv,summary.json,log.txt} the files of run N, read at each
// request (so a reload shows what a run has written since). Every response closes its
// connection. SIGINT and SIGTERM stop the loop; the socket is closed on return.
// `stride run --view` adds the WebSocket /live (view/live.hpp: LiveSocket), served by the same
// loop on a thread of its own (ViewServer, which also serves the Python module's stride.view()).
#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "stride/host/view/view.hpp"
#include "view/live.hpp"

namespace stride::host {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Content {
  std::string page;
  std::vector<std::filesystem::path> folders;  // run N's folder
  LiveState* live = nullptr;                   // `stride run --view`: the WebSocket /live
};

// The body and type of a path, or an empty type for 404.
std::pair<std::string, std::string> resolve(const Content& c, const std::string& target) {
  if (target == "/" || target == "/index.html") return {c.page, "text/html; charset=utf-8"};
  const std::string prefix = "/files/";
  if (target.rfind(prefix, 0) != 0) return {"", ""};
  const auto slash = target.find('/', prefix.size());
  if (slash == std::string::npos) return {"", ""};
  const std::string index = target.substr(prefix.size(), slash - prefix.size()), name = target.substr(slash + 1);
  if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return {"", ""};
  const std::size_t n = std::stoul(index);
  if (n >= c.folders.size() || (name != "results.csv" && name != "summary.json" && name != "log.txt")) return {"", ""};
  std::ifstream in(c.folders[n] / name, std::ios::binary);
  if (!in) return {"", ""};
  std::ostringstream s;
  s << in.rdbuf();
  return {s.str(), name.ends_with(".json") ? "application/json" : "text/plain; charset=utf-8"};
}

// One connection: one request read, one response written, closed.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const Content& content) : stream_(std::move(socket)), content_(content) {}
  void start() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->respond();
    });
  }

 private:
  void respond() {
    if (content_.live && websocket_upgrade(request_) && request_.target() == "/live") {
      start_live_socket(*content_.live, stream_.release_socket(), std::move(request_));
      return;
    }
    response_.version(request_.version());
    response_.keep_alive(false);
    response_.set(http::field::server, "stride view");
    response_.set(http::field::cache_control, "no-store");
    if (request_.method() != http::verb::get) {
      response_.result(http::status::method_not_allowed);
      response_.body() = "only GET\n";
    } else {
      auto [body, type] = resolve(content_, std::string(request_.target()));
      response_.result(type.empty() ? http::status::not_found : http::status::ok);
      response_.set(http::field::content_type, type.empty() ? "text/plain" : type);
      response_.body() = type.empty() ? "not found: " + std::string(request_.target()) + "\n" : std::move(body);
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  const Content& content_;
};

void accept(tcp::acceptor& acceptor, const Content& content) {
  acceptor.async_accept([&acceptor, &content](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // the acceptor was closed
    std::make_shared<Session>(std::move(socket), content)->start();
    accept(acceptor, content);
  });
}

// Binds 127.0.0.1:port; throws std::runtime_error naming the port.
void listen_on(tcp::acceptor& acceptor, int port) {
  const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  beast::error_code ec;
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + ec.message() +
                             (ec == asio::error::address_in_use
                                  ? " (another program uses the port: choose another with "
                                    "--port N, or --port 0 for a free one)"
                                  : ""));
}

}  // namespace

void serve_view(const ViewFolders& folders, int port, const std::function<void(const std::string&)>& listening) {
  std::vector<std::string> warnings;
  Content content{view_page(folders, false, warnings), {}};
  for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& r : folders.runs) content.folders.push_back(r.folder);
  asio::io_context io;
  tcp::acceptor acceptor(io);
  listen_on(acceptor, port);
  asio::signal_set stop(io, SIGINT, SIGTERM);
  stop.async_wait([&](beast::error_code, int) {
    acceptor.close();
    io.stop();
  });
  accept(acceptor, content);
  listening("http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/");
  io.run();
}

struct ViewServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  Content content;
  std::unique_ptr<LiveState> live;
  std::string url;
  std::thread thread;
};

ViewServer::ViewServer(const ViewFolders& folders, int port) : impl_(std::make_unique<Impl>()) {
  const bool live = !folders.live.is_null();
  if (live && folders.runs.size() != 1) throw std::logic_error("a live view shows one run");
  std::vector<std::string> warnings;
  impl_->content.page = view_page(folders, false, warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& r : folders.runs) impl_->content.folders.push_back(r.folder);
  if (live) {
    impl_->live = std::make_unique<LiveState>(impl_->io, folders.runs[0].folder / "results.csv");
    impl_->content.live = impl_->live.get();
  }
  listen_on(impl_->acceptor, port);
  impl_->url = "http://127.0.0.1:" + std::to_string(impl_->acceptor.local_endpoint().port()) + "/";
  accept(impl_->acceptor, impl_->content);
  if (live) impl_->live->start();
}

void ViewServer::serve() {
  if (impl_->thread.joinable()) return;
  // The server's thread takes no signal: they stay with the run's supervisor (or the run).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ViewServer::~ViewServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    if (impl->live) impl->live->stop();
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

const std::string& ViewServer::url() const { return impl_->url; }

void ViewServer::finish(const json& summary) {
  if (impl_->live) asio::post(impl_->io, [live = impl_->live.get(), summary] { live->finish(summary); });
}

}  // namespace stride::host
