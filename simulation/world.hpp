// The processes of a run: one, or the ranks of `mpirun -np P nbody ...` (DESIGN.md, "Past one
// GPU"). MPI stays optional: a build without it runs one process and refuses a larger world.
//
// Errors across ranks: until a command calls validated(), bad input is found on every rank
// alike; the ranks agree on the worst exit code, the lowest failing rank prints the one message,
// and every rank exits with that code. After it, a failure on any rank prints a message naming
// the rank and ends every rank (MPI_Abort with the exit code): no rank is left waiting.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace nbody {

class World {
 public:
  // MPI_Init when built with MPI. Throws InputError for a world above 1 without MPI.
  static void init(int& argc, char**& argv);
  static void finalize();
  static int rank();
  static int size();
  static bool writer() { return rank() == 0; }  // rank 0 writes outputs and the summary
  static bool built_with_mpi();
  static std::string host();
  // This rank's index among the ranks on its host (for the CUDA device: local rank mod count).
  static int local_rank();
  // How many ranks share this rank's host (1 in one process).
  static int ranks_on_host();

  // Position exchange for distributed pipelines; nullptr for one process.
  static Exchange* exchange();
  static double max(double v);  // over every rank
  static double min(double v);
  static void barrier();
  // Every rank's peak resident memory so far, in MiB, in rank order (collective).
  static std::vector<double> peak_resident_mb();
  // Every rank's `line`, in rank order, on rank 0 (empty elsewhere).
  static std::vector<std::string> gather(const std::string& line);

  // The end of a command's input checks: throws PeerFailed when another rank failed them.
  static void validated();
  // Throws InputError (before any work) when the ranks got different command lines.
  static void check_same_command(int argc, char** argv);
  // From main: this rank failed with `code` and `message`. Returns the exit code every rank uses
  // (before validated()) or does not return (after: MPI_Abort). `same_everywhere`: an error every
  // rank meets alike (bad input found late, a state that is not finite): printed once.
  static int fail(int code, const std::string& message, bool same_everywhere = false);
};

// Another rank failed its input checks; this rank exits with `code` and prints nothing.
struct PeerFailed {
  int code;
};

}  // namespace nbody
