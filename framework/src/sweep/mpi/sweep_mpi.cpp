// `stride sweep` under MPI (`mpirun -n N stride sweep SWEEP.json`; built into stride-mpi, which
// `stride` starts when it finds itself launched by mpirun). Rank 0 reads the sweep, checks it
// and writes the tables exactly as a sweep on one machine does; ranks 1..N-1 are workers that
// each run one point at a time in a forked process (so a point that crashes is reported, and
// the worker goes on). Points are handed out as workers finish (dynamic load balancing). The
// runs write their folders themselves: the sweep's output folder must be one every rank sees.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sweep/mpi/sweep_mpi.hpp"

namespace stride::host {

namespace {

enum Tag : int { kJob = 1, kResult = 2, kStop = 3 };

void send_text(const std::string& s, int to, int tag) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

// The next message from `from` (or any rank) with `tag` (or any tag); its text, source and tag.
std::string receive_text(int from, int tag, int& source, int& got_tag) {
  MPI_Status st;
  MPI_Probe(from, tag, MPI_COMM_WORLD, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string s(static_cast<std::size_t>(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  source = st.MPI_SOURCE;
  got_tag = st.MPI_TAG;
  return s;
}

void worker(double grace) {
  for (;;) {
    int source = 0, tag = 0;
    const std::string text = receive_text(0, MPI_ANY_TAG, source, tag);
    if (tag != kJob) return;
    const json j = json::parse(text);
    SweepJob job{j.at("manifest").get<std::string>(), j.at("sets").get<std::vector<std::string>>(),
                 j.at("out").get<std::string>(), json()};
    const bool finished = run_sweep_job(job, grace);
    send_text(json{{"i", j.at("i")}, {"summary", job.summary}, {"interrupted", !finished}}.dump(), 0, kResult);
  }
}

// Rank 0's distributor: one job per worker, the next to whichever finishes first.
bool distribute(int workers, std::vector<SweepJob>& jobs, const std::function<void(std::size_t)>& done) {
  std::size_t next = 0;
  int active = 0;
  bool interrupted = false;
  auto hand_out = [&](int to) {
    const SweepJob& job = jobs[next];
    send_text(
        json{{"i", next}, {"manifest", job.manifest.string()}, {"sets", job.sets}, {"out", job.out.string()}}.dump(),
        to, kJob);
    ++next;
    ++active;
  };
  for (int w = 1; w <= workers && next < jobs.size(); ++w) hand_out(w);
  while (active > 0) {
    int source = 0, tag = 0;
    const json r = json::parse(receive_text(MPI_ANY_SOURCE, kResult, source, tag));
    --active;
    const auto i = r.at("i").get<std::size_t>();
    jobs[i].summary = r.at("summary");
    interrupted |= r.value("interrupted", false);
    done(i);
    if (!interrupted && next < jobs.size()) hand_out(source);
  }
  return !interrupted;
}

}  // namespace

int sweep_under_mpirun(int argc, char** argv, const std::filesystem::path& file, SweepOptions opt) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  if (size == 1) {
    rc = run_sweep(file, opt);
  } else if (rank == 0) {
    std::fprintf(stderr, "sweep: MPI, %d workers\n", size - 1);
    opt.distribute = [&](std::vector<SweepJob>& jobs, const std::function<void(std::size_t)>& done) {
      return distribute(size - 1, jobs, done);
    };
    rc = run_sweep(file, opt);
    // Every worker waits for a job or this (also when the sweep could not start).
    for (int w = 1; w < size; ++w) send_text("", w, kStop);
  } else {
    worker(opt.grace);
  }
  MPI_Finalize();
  return rc;
}

}  // namespace stride::host
