// The WebSocket /live of `stride run --view` (view/live.cpp), served by the loop of
// view/server.cpp on the ViewServer's thread.
//
// Messages to the page (JSON text frames):
//   {"type": "controls", "controls": [{"name", "unit", "kind", "min", "max", "initial", "value"}]}
//       first, and again when a control is enrolled later;
//   {"type": "rows", "csv": TEXT} what results.csv has gained since the last one (the header first;
//       at most 1 MiB, cut after the last whole line);
//   {"type": "end", "summary": {...}} once the run has ended and every row was sent.
// From the page: {"type": "set", "name": CONTROL, "value": NUMBER}; anything else (not JSON, an
// unknown control, a value that is not a finite number, over 64 KiB) is refused and counted.
//
// The rows are read from results.csv as the run's writer puts it on disk (every 50 ms or 64 KiB in
// a real-time run), never from the run's thread: a socket has at most one message in flight and
// its own position in the file, so a slow browser gets larger batches later (coalesced, nothing
// dropped, memory bounded by 1 MiB per socket and 16 sockets) and an absent one costs nothing.
// Threading: everything here runs on the server's thread (ViewServer::finish posts to it).
// Ownership: LiveState is the ViewServer's; each socket keeps itself alive by its pending
// operation and is only weakly listed here.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>

#include <stride/stride.hpp>
#include <stride/view_board.hpp>

namespace stride::host {

class LiveSocket;

class LiveState {
 public:
  LiveState(boost::asio::io_context& io, std::filesystem::path results);
  ~LiveState();
  LiveState(const LiveState&) = delete;
  LiveState& operator=(const LiveState&) = delete;
  void start();                      // the 50-ms tick that feeds every socket
  void stop();                       // closes every socket and the tick
  void finish(const json& summary);  // the run ended with this summary
  // A socket accepted; false when 16 are open already (the caller closes it).
  bool add(const std::shared_ptr<LiveSocket>& socket);

  const std::filesystem::path& results() const { return results_; }
  view_board::Board* board() const { return board_; }
  const json* summary() const { return summary_ ? &*summary_ : nullptr; }

 private:
  void tick();
  boost::asio::steady_timer timer_;
  std::filesystem::path results_;
  view_board::Board* board_ = nullptr;
  std::optional<json> summary_;
  std::vector<std::weak_ptr<LiveSocket>> sockets_;
  bool stopped_ = false;
};

// Whether the request asks for a WebSocket.
bool websocket_upgrade(const boost::beast::http::request<boost::beast::http::string_body>& request);

// Takes over an upgraded connection as a socket of `live`.
void start_live_socket(LiveState& live, boost::asio::ip::tcp::socket socket,
                       boost::beast::http::request<boost::beast::http::string_body> request);

}  // namespace stride::host
