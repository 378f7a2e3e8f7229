#include "world.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "error.hpp"
#ifdef NBODY_HAVE_MPI
#include <mpi.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace nbody {

namespace {

int g_rank = 0, g_size = 1, g_local = 0, g_on_host = 1;
bool g_validated = false;

[[maybe_unused]] bool g_mpi = false;  // MPI_Init was called

[[maybe_unused]] int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

#ifdef NBODY_HAVE_MPI
// The counts and displacements of MPI's v-collectives are ints: a larger exchange goes in rounds, each
// carrying at most round_bytes() of every message, ranks x that within an int. (A test lowers the
// limit through the environment's NBODY_TEST_MPI_COUNT_LIMIT, so that small runs take many rounds.)
std::size_t round_bytes() {
  static const std::size_t cap = [] {
    const char* v = std::getenv("NBODY_TEST_MPI_COUNT_LIMIT");
    const long long limit = v && *v ? std::clamp(std::atoll(v), 1LL, static_cast<long long>(INT_MAX)) : INT_MAX;
    return static_cast<std::size_t>(std::max(1LL, limit / std::max(g_size, 1)));
  }();
  return cap;
}
// Of a message of `size` bytes, the count that round k carries (from byte k x cap on).
int piece(long long size, std::size_t k, std::size_t cap) {
  const long long from = static_cast<long long>(k * cap);
  return size > from ? static_cast<int>(std::min<long long>(static_cast<long long>(cap), size - from)) : 0;
}
std::size_t rounds_for(long long most, std::size_t cap) {
  return std::max<std::size_t>(1, (static_cast<std::size_t>(most) + cap - 1) / cap);
}

// MPI_Allgatherv of one record of `bytes` per body, each rank's block in place.
class MpiExchange final : public Exchange {
 public:
  int ranks() const override { return g_size; }
  int rank() const override { return g_rank; }
  long long agree_min(long long v) override {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    return v;
  }

  std::vector<double> all(double v) override {
    std::vector<double> out(static_cast<std::size_t>(g_size));
    MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    return out;
  }

  void allgather_bytes(const void* mine, std::size_t bytes, void* every) override {
    MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, every, static_cast<int>(bytes), MPI_BYTE, MPI_COMM_WORLD);
  }

  std::vector<std::byte> allgatherv(const std::vector<std::byte>& mine) override {
    const long long size = static_cast<long long>(mine.size());
    std::vector<long long> sizes(g_size);
    MPI_Allgather(&size, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    std::vector<std::size_t> offset(g_size + 1, 0);
    for (int r = 0; r < g_size; ++r) offset[r + 1] = offset[r] + static_cast<std::size_t>(sizes[r]);
    std::vector<std::byte> every(offset[g_size]);
    const std::size_t cap = round_bytes(), rounds = rounds_for(*std::max_element(sizes.begin(), sizes.end()), cap);
    std::vector<int> counts(g_size), displs(g_size);
    std::vector<std::byte> part;
    for (std::size_t k = 0; k < rounds; ++k) {
      int at = 0;
      for (int r = 0; r < g_size; ++r) counts[r] = piece(sizes[r], k, cap), displs[r] = at, at += counts[r];
      // One round lands in place; more go through `part`.
      std::byte* to = rounds == 1 ? every.data() : (part.resize(static_cast<std::size_t>(at)), part.data());
      MPI_Allgatherv(mine.data() + std::min(k * cap, mine.size()), counts[g_rank], MPI_BYTE, to, counts.data(),
                     displs.data(), MPI_BYTE, MPI_COMM_WORLD);
      if (rounds > 1)
        for (int r = 0; r < g_size; ++r)
          if (counts[r] > 0) std::copy_n(part.data() + displs[r], counts[r], every.data() + offset[r] + k * cap);
    }
    return every;
  }

  std::vector<std::vector<std::byte>> alltoall(const std::vector<std::vector<std::byte>>& out) override {
    std::vector<long long> sizes(g_size), got(g_size);
    for (int r = 0; r < g_size; ++r) sizes[r] = static_cast<long long>(out[r].size());
    MPI_Alltoall(sizes.data(), 1, MPI_LONG_LONG, got.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    long long most = std::max(*std::max_element(sizes.begin(), sizes.end()), *std::max_element(got.begin(), got.end()));
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);  // the same rounds everywhere
    const std::size_t cap = round_bytes(), rounds = rounds_for(most, cap);
    std::vector<std::vector<std::byte>> in(g_size);  // each sized at the first round's end
    std::vector<int> scount(g_size), sdispl(g_size), rcount(g_size), rdispl(g_size);
    std::vector<std::byte> send, recv;
    for (std::size_t k = 0; k < rounds; ++k) {
      send.clear();
      int at = 0;
      for (int r = 0; r < g_size; ++r) {
        scount[r] = piece(sizes[r], k, cap), sdispl[r] = static_cast<int>(send.size());
        const std::byte* from = out[r].data() + std::min(k * cap, out[r].size());
        send.insert(send.end(), from, from + scount[r]);
        rcount[r] = piece(got[r], k, cap), rdispl[r] = at, at += rcount[r];
      }
      recv.resize(static_cast<std::size_t>(at));
      MPI_Alltoallv(send.data(), scount.data(), sdispl.data(), MPI_BYTE, recv.data(), rcount.data(), rdispl.data(),
                    MPI_BYTE, MPI_COMM_WORLD);
      if (k + 1 == rounds) std::vector<std::byte>().swap(send);  // (held no longer than it must be)
      if (k == 0)
        for (int r = 0; r < g_size; ++r) in[r].resize(static_cast<std::size_t>(got[r]));
      for (int r = 0; r < g_size; ++r)
        if (rcount[r] > 0) std::copy_n(recv.data() + rdispl[r], rcount[r], in[r].data() + k * cap);
    }
    return in;
  }

  void allgather(void* data, std::size_t bytes, std::size_t n, const Partition& part) override {
    auto it = types_.find(bytes);
    if (it == types_.end()) {  // one contiguous type per record size: counts stay in bodies
      MPI_Datatype t;
      MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &t);
      MPI_Type_commit(&t);
      it = types_.emplace(bytes, t).first;
    }
    const MPI_Datatype type = it->second;
    std::vector<int> counts(g_size), displs(g_size);
    for (int r = 0; r < g_size; ++r) {
      displs[r] = static_cast<int>(part.begin(n, r));
      counts[r] = static_cast<int>(part.begin(n, r + 1)) - displs[r];
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, type, data, counts.data(), displs.data(), type,
                   MPI_COMM_WORLD);
  }

 private:
  std::map<std::size_t, MPI_Datatype> types_;
};
#endif

// Started by mpirun (or another launcher) rather than as a plain process.
[[maybe_unused]] bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#ifdef NBODY_HAVE_MPI
// The ranks on one node share its cores: unless OMP_NUM_THREADS says otherwise, each rank's
// OpenMP loops take its share of them (and no more than its CPU mask holds). Otherwise every rank
// starts a thread per core (4 ranks on 64 cores: 256 threads), and each parallel loop waits on
// threads spinning on cores another rank needs (docs/distributed.md, "Threads").
void share_the_cores(int ranks_on_node) {
#ifdef _OPENMP
  const char* given = std::getenv("OMP_NUM_THREADS");  // a value libgomp cannot read (it says so) counts as none
  if ((given != nullptr && std::atoi(given) > 0) || ranks_on_node <= 1) return;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  omp_set_num_threads(std::max(1, std::min(omp_get_max_threads(), cores / ranks_on_node)));
#else
  (void)ranks_on_node;
#endif
}
#endif

}  // namespace

void World::init([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef NBODY_HAVE_MPI
  // A plain `nbody ...` is a world of one without MPI_Init: no singleton daemon, no start-up
  // cost, nothing MPI can break (a full disk, say) when nothing is distributed.
  if (!launched()) return;
  g_mpi = true;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &g_local);
  int on_node = 1;
  MPI_Comm_size(local, &on_node);
  MPI_Comm_free(&local);
  g_on_host = on_node;
  share_the_cores(on_node);
#else
  const int size = env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", env_int("SLURM_NTASKS", 1)));
  if (size > 1) {
    g_rank = env_int("OMPI_COMM_WORLD_RANK", env_int("PMI_RANK", 0));
    throw InputError("started as one of " + std::to_string(size) +
                     " processes, but this nbody was built without MPI (install libopenmpi-dev "
                     "and rebuild: scripts/install-deps.sh does)");
  }
#endif
}

void World::finalize() {
#ifdef NBODY_HAVE_MPI
  int done = 0;
  MPI_Finalized(&done);
  if (g_mpi && !done) MPI_Finalize();
#endif
}

int World::rank() { return g_rank; }
int World::size() { return g_size; }
int World::local_rank() { return g_local; }
int World::ranks_on_host() { return g_on_host; }

bool World::built_with_mpi() {
#ifdef NBODY_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string World::host() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

Exchange* World::exchange() {
#ifdef NBODY_HAVE_MPI
  static MpiExchange ex;
  return g_size > 1 ? &ex : nullptr;
#else
  return nullptr;
#endif
}

double World::max(double v) {
#ifdef NBODY_HAVE_MPI
  if (g_size > 1) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
  return v;
}

std::vector<double> World::peak_resident_mb() {
  rusage u{};
  const double mine = getrusage(RUSAGE_SELF, &u) == 0 ? static_cast<double>(u.ru_maxrss) / 1024.0 : 0.0;  // KiB
  Exchange* ex = exchange();
  return ex ? ex->all(mine) : std::vector<double>{mine};
}

double World::min(double v) {
#ifdef NBODY_HAVE_MPI
  if (g_size > 1) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
#endif
  return v;
}

void World::barrier() {
#ifdef NBODY_HAVE_MPI
  if (g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

std::vector<std::string> World::gather(const std::string& line) {
#ifdef NBODY_HAVE_MPI
  if (g_size > 1) {
    int len = static_cast<int>(line.size());
    std::vector<int> lens(g_size), displs(g_size);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < g_size; ++r) displs[r] = total, total += lens[r];
    std::string all(static_cast<std::size_t>(g_rank == 0 ? total : 0), '\0');
    MPI_Gatherv(line.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (g_rank == 0)
      for (int r = 0; r < g_size; ++r) out.push_back(all.substr(displs[r], lens[r]));
    return out;
  }
#endif
  return {line};
}

void World::check_same_command(int argc, char** argv) {
  if (g_size == 1) return;
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the arguments
  for (int k = 1; k < argc; ++k)
    for (const char* c = argv[k];; ++c) {
      h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ULL;
      if (!*c) break;
    }
  const double v = static_cast<double>(h >> 12);  // exact in a double
  if (max(v) != min(v))
    throw InputError("the ranks were started with different command lines; every rank must run "
                     "the same command");
}

void World::validated() {
  if (g_validated) return;
  // The same two reductions as fail() makes on a rank whose checks failed.
  const int worst = static_cast<int>(max(0));
  min(g_size);
  g_validated = true;
  if (worst != 0) throw PeerFailed{worst};
}


int World::fail(int code, const std::string& message, bool same_everywhere) {
  if (g_size == 1) {
    std::fputs(message.c_str(), stderr);
    return code;
  }
  if (!g_validated) {  // the same checks ran everywhere: agree on the code, print once
    g_validated = true;
    const int worst = static_cast<int>(max(code));
    const int first = static_cast<int>(min(g_rank));
    if (g_rank == first) {  // bad input is the same everywhere; anything else names its rank
      if (code != 2) std::fprintf(stderr, "[rank %d of %d on %s] ", g_rank, g_size, host().c_str());
      std::fputs(message.c_str(), stderr);
    }
    return worst;
  }
  if (same_everywhere) {
    // Every rank met the same error at the same point (the state is the same everywhere): rank 0
    // prints it once and ends the job; the others give it time to.
    if (g_rank == 0) {
      std::fputs(message.c_str(), stderr);
      std::fflush(stderr);
    } else {
      sleep(5);
    }
  } else {
    std::fprintf(stderr, "[rank %d of %d on %s] %s", g_rank, g_size, host().c_str(), message.c_str());
    std::fflush(stderr);
  }
#ifdef NBODY_HAVE_MPI
  MPI_Abort(MPI_COMM_WORLD, code);
#endif
  return code;
}

}  // namespace nbody
