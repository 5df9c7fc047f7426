// Processes of a collector job: a single process (driving all its GPUs), or
// one of several MPI processes (mpirun / srun --mpi=pmix). Broadcast of the
// NCCL unique id, element-wise max of timings and barriers go through here.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace shardlab::collectors {

class Launcher {
public:
  virtual ~Launcher() = default;
  virtual int rank() const = 0;       // process rank
  virtual int size() const = 0;       // processes
  virtual int local_rank() const = 0; // among processes on this node
  virtual int local_size() const = 0;
  virtual int nodes() const = 0;
  /// Copies rank 0's bytes to every process.
  virtual void broadcast(void *data, size_t bytes) = 0;
  /// Element-wise maximum over processes, in place.
  virtual void max(std::vector<double> *values) = 0;
};

/// MPI when built with it (SHARDLAB_WITH_MPI), else a single process; a
/// multi-process launch of a build without MPI throws CollectorError.
std::unique_ptr<Launcher> createLauncher(int *argc, char ***argv);

} // namespace shardlab::collectors
