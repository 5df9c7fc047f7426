// Single-process and MPI launchers.
#include "launcher.h"

#include "progress.h"

#include <cstdlib>
#include <string>

#ifdef SHARDLAB_WITH_MPI
#include <mpi.h>
#endif

namespace shardlab::collectors {
namespace {

class LocalLauncher : public Launcher {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int nodes() const override { return 1; }
  void broadcast(void *, size_t) override {}
  void max(std::vector<double> *) override {}
};

// World size a launcher announced in the environment (0 if none).
int launchedSize() {
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return 0;
}

#ifdef SHARDLAB_WITH_MPI
void mpiCheck(int rc, const char *what) {
  if (rc != MPI_SUCCESS)
    throw CollectorError(std::string(what) + " failed (MPI error " +
                         std::to_string(rc) + ")");
}

class MpiLauncher : public Launcher {
public:
  MpiLauncher(int *argc, char ***argv) {
    mpiCheck(MPI_Init(argc, argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_,
                                 MPI_INFO_NULL, &local),
             "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
    int leader = local_rank_ == 0;
    MPI_Allreduce(&leader, &nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  ~MpiLauncher() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  int nodes() const override { return nodes_; }
  void broadcast(void *data, size_t bytes) override {
    mpiCheck(
        MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Bcast");
  }
  void max(std::vector<double> *v) override {
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, v->data(), static_cast<int>(v->size()),
                           MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
             "MPI_Allreduce");
  }

private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;
};
#endif

} // namespace

std::unique_ptr<Launcher> createLauncher(int *argc, char ***argv) {
#ifdef SHARDLAB_WITH_MPI
  if (launchedSize() > 1)
    return std::make_unique<MpiLauncher>(argc, argv);
#endif
  if (launchedSize() > 1)
    throw CollectorError("started as one of " + std::to_string(launchedSize()) +
                         " processes, but this build has no MPI support "
                         "(install libopenmpi-dev and rebuild)");
  return std::make_unique<LocalLauncher>();
}

} // namespace shardlab::collectors
