// SIGINT, SIGTERM and SIGHUP: what the process does with each, in one place (the CLI installs the
// handlers; a library user such as the Python module keeps its own and asks through a Reporter).
//
// A run that keeps its work (nbody run --out) defers interrupts while it steps: the first one lets
// it finish its batch of steps, write its checkpoint and exit 128 + the signal's number. Signals
// often come in bursts that mean one interrupt: `timeout` signals the child and then its process
// group, and a batch system's time limit sends SIGTERM to every process of the job, mpirun among
// them, which sends its ranks SIGTERM a second later (and SIGKILL a second after that: Open MPI's
// odls_base_sigkill_timeout). Those that arrive within kInterruptBurst of the first are that same
// interrupt. A later one is a person asking again: the process stops at once, exit kStoppedAtOnce.
#pragma once
#include <string>

namespace nbody {

// Wider than a burst's spread (microseconds for `timeout`, a second for mpirun's SIGTERM after the
// batch system's), narrower than a person pressing Ctrl-C a second time after reading the first
// one's message.
inline constexpr double kInterruptBurst = 1.5;  // seconds

// What the first deferred interrupt says (rank 0 alone under mpirun): how to stop at once, in
// kInterruptBurst's own figure.
inline constexpr char kStoppingAfterBatch[] =
    "\nnbody: stopping after this batch of steps (to stop at once, interrupt again more than 1.5 s from now)\n";

// The exit code of a run stopped at once by a second interrupt: its checkpoint for this interrupt
// was not written (the one before it, if any, is whole). Not 128 + a signal, which says "written".
inline constexpr int kStoppedAtOnce = 4;

// What one SIGINT, SIGTERM or SIGHUP does, as the handler decides it.
enum class OnInterrupt {
  End,     // nothing deferred: remove the temporary file being written (and the empty folders the
           // run made) and end by the signal
  Defer,   // the first: recorded for pending_interrupt(); the run stops after its batch
  Same,    // within kInterruptBurst of the first: part of the same interrupt, nothing more to do
  AtOnce,  // later: remove the temporary file (and the empty folders the run made) and exit
           // kStoppedAtOnce (128 + the pending signal once interrupt_handled())
};
// `deferring`: defer_interrupts(true) is in force; `first`: no interrupt recorded yet;
// `since_first`: seconds since the recorded one (ignored when `first`).
OnInterrupt on_interrupt(bool deferring, bool first, double since_first);

// Installs the handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE (those not ignored, so that a
// background job started with SIGINT ignored keeps ignoring it): a signal acts as on_interrupt()
// says (SIGPIPE: End), where it ends the process removing the temporary file being written
// (track_temporary) and the empty folders made for the outputs (track_made_folders). Once.
// `speaks`: this process says that it is stopping after the batch (under mpirun every rank is
// signalled and stops, and rank 0 alone says so).
void handle_signals(bool speaks = true);

// While on (after handle_signals()), interrupts are deferred as above. Off: each ends the process.
void defer_interrupts(bool on);
// The first deferred interrupt's signal number, 0 before one.
int pending_interrupt();
// The run has done what the pending interrupt asked (its checkpoint is whole, or it has none to
// write): from here a stop at once exits 128 + the pending signal, as the run is about to.
void interrupt_handled();

// The temporary file an Output is writing, for the handlers to remove (Output calls these).
void track_temporary(const std::string& path);
void untrack_temporary();

// The folders a run made for its outputs: `deepest` and the folders above it up to `highest` (one
// of them, an absolute path). A stop at once and an end by the signal remove those left empty, the
// deepest first, as a run that ends otherwise does (the Keeper that made them). Absolute, normal
// paths without a trailing '/'.
void track_made_folders(const std::string& deepest, const std::string& highest);
void untrack_made_folders();

}  // namespace nbody
