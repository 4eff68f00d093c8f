// `stride sweep` launched by mpirun, in `stride`: MPI lives in stride-mpi beside this executable
// (sweep/mpi/sweep_mpi.cpp), so no other command loads it.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <system_error>

#include "sweep/mpi/sweep_mpi.hpp"

namespace stride::host {

int sweep_under_mpirun(int, char** argv, const std::filesystem::path&, SweepOptions) {
  std::error_code ec;
  const auto mpi = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "stride-mpi";
  if (!ec && ::access(mpi.c_str(), X_OK) == 0) ::execv(mpi.c_str(), argv);
  std::cerr << "error: started by mpirun, but " << (ec ? std::string("this executable") : mpi.string())
            << " cannot be run (" << (ec ? ec.message() : std::string(std::strerror(errno)))
            << "): Stride was built without MPI (Debian: libopenmpi-dev, then rebuild)\n";
  return 2;
}

}  // namespace stride::host
