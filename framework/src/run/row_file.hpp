// A CSV file written in whole rows (results.csv, iterations.csv, steps.csv). Internal to the
// host.
//
// Rows are appended to buffer() and reach the file by write(2) when commit() is called; a
// write the disk refuses cuts the file back to its last complete row and throws Stop (later
// rows are not written). One thread; buffer() allocates only while it grows to its capacity.
//
// A real-time run (run/real_time.hpp) calls write_in_background() first: from then on
// commit() does not write but hands the buffer to a writer thread of the file's own (swapping
// it with a second buffer of the same capacity, no allocation); while that thread is still
// writing the previous hand-off, commit() leaves the rows where they are (the buffer grows).
// A refused write is thrown as Stop by the next commit(); finish_writing() joins the thread
// and writes the rest synchronously (the destructor joins it too). Only buffer(), commit(),
// due(), in_flight() and finish_writing() are called from the run's thread; rows() and lost()
// may be read from it at any time.
#pragma once

#include <charconv>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <istream>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stride::host {

class RowFile {
 public:
  // Creates (or empties) the file and writes the header line. Throws Stop.
  RowFile(const std::filesystem::path& path, const std::string& header);
  ~RowFile();
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;

  std::string& buffer() { return buffer_; }
  int fd() const { return fd_; }
  // Rows that reached the file whole (the header not counted).
  std::size_t rows() const { return committed_rows_.load(std::memory_order_relaxed); }
  // The disk refused a write: later rows are not written.
  bool lost() const { return lost_.load(std::memory_order_relaxed); }
  // A commit is due: the buffer is large or 50 ms of wall time have passed since the last one.
  bool due() const {
    return buffer_.size() >= kBufferBytes ||
           std::chrono::steady_clock::now() - last_commit_ >= std::chrono::milliseconds(50);
  }
  // Writes the buffer (hands it to the writer thread after write_in_background()). Throws
  // Stop when the disk refuses (the complete rows written are kept).
  void commit();
  // From now on commit() hands the rows to a writer thread. Allocates (the thread, the second
  // buffer); call before the stepping starts.
  void write_in_background();
  // The writer thread holds rows it has not written yet.
  bool in_flight() const { return handed_.load(std::memory_order_acquire); }
  // Joins the writer thread (after it wrote what it holds) and writes the rest here. Throws
  // Stop when the disk refused a write. Without a writer thread: commit().
  void finish_writing();

 private:
  static constexpr std::size_t kBufferBytes = 1 << 16;
  // Writes `data` whole; on a refusal cuts the file back to its last complete row, marks the
  // file lost and returns why (empty: written).
  std::string write_out(std::string& data);
  void writer_loop();
  void stop_writer();
  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::atomic<std::size_t> committed_rows_{0};
  std::size_t committed_bytes_ = 0;  // the writer's (thread or run) alone
  std::atomic<bool> lost_{false};
  std::chrono::steady_clock::time_point last_commit_{};
  // The writer thread: spare_ is its buffer while handed_ is set.
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string spare_, writer_error_;
  std::atomic<bool> handed_{false};
  bool quit_ = false;
};

// Appends v in the shortest text that reads back as the same double (integers up to 2^53
// exact, no noise digits; number_text's form), without allocating beyond the string's capacity.
inline void put_number(std::string& out, double v) {
  char num[32];
  out.append(num, static_cast<std::size_t>(std::to_chars(num, num + sizeof num, v).ptr - num));
}

// Appends text as a CSV field (RFC 4180): in double quotes, a quote doubled; commas, line
// breaks and every other byte as they are.
inline void put_text(std::string& out, const std::string& value) {
  out += '"';
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// The records of CSV text as put_text() writes fields (RFC 4180: a quoted field may hold commas,
// line breaks and doubled quotes): record(fields) for each, the header first. A quote inside
// an unquoted field is kept as it is.
template <class Record>
void each_csv_record(std::istream& in, Record&& record) {
  std::vector<std::string> fields(1);
  bool quoted = false, any = false;
  for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
    any = true;
    if (quoted) {
      if (c != '"') fields.back() += char(c);
      else if (in.peek() == '"') fields.back() += char(in.get());
      else quoted = false;
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      record(fields);
      fields.assign(1, std::string());
      any = false;
    } else {
      fields.back() += char(c);
    }
  }
  if (any) record(fields);
}

}  // namespace stride::host
