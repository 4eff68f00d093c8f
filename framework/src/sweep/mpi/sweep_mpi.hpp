// `stride sweep` under MPI (sweep_mpi.cpp, in stride-mpi only).
#pragma once

#include <filesystem>

#include "stride/host/sweep/sweep.hpp"

namespace stride::host {

// Rank 0 runs the sweep with the points spread over ranks 1..N-1; the others work. Returns the
// process exit code (rank 0: as `stride sweep`; workers: 0).
int mpi_sweep(int argc, char** argv, const std::filesystem::path& sweep_file, SweepOptions options);

}  // namespace stride::host
