// `stride sweep` when mpirun launched the command. Two definitions, one per executable:
// cli/mpirun_local.cpp in `stride` (starts stride-mpi beside it, so no other command loads MPI)
// and sweep_mpi.cpp in `stride-mpi` (the distributed sweep). main.cpp is compiled once for both.
#pragma once

#include <filesystem>

#include "stride/host/sweep/sweep.hpp"

namespace stride::host {

// Rank 0 runs the sweep with the points spread over ranks 1..N-1; the others work. Returns the
// process exit code (rank 0: as `stride sweep`; workers: 0).
int sweep_under_mpirun(int argc, char** argv, const std::filesystem::path& sweep_file, SweepOptions options);

}  // namespace stride::host
