// What a run keeps, in process: the checkpoint codec (every truncation and every flipped bit is
// refused), CRC-32C, and the Tipsy and HDF5 snapshot writers read back by our own readers; the
// HDF5 reader's child process, kept for many files, through files the library dies or loops on.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "checkpoint.hpp"
#include "error.hpp"
#include "hdf5_io.hpp"
#include "interrupts.hpp"
#include "io.hpp"
#include "scratch.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;

fs::path tmp(const std::string& name) { return scratch_test::scratch_folder("nbody-test-keep") / name; }

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Bodies whose every value is a float (a 32-bit pipeline's state), distinct per body.
Bodies some_bodies(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  Bodies b;
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    b.pos[i] = {u(rng), u(rng), u(rng), 0.5 + 0.25 * u(rng)};
    b.vel[i] = {u(rng), u(rng), u(rng)};
  }
  return b;
}

Checkpoint some_checkpoint(std::size_t n, int bits) {
  Checkpoint c;
  c.meta = R"({"format":"test","step":3})";
  c.bits = bits;
  c.state = some_bodies(n, 7);
  if (bits == 64) c.state.pos[0].x = 0.1;  // not a float: only 64-bit state may hold it
  return c;
}

void expect_same(const Bodies& a, const Bodies& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::memcmp(&a.pos[i], &b.pos[i], sizeof(Vec4)), 0) << "body " << i;
    EXPECT_EQ(std::memcmp(&a.vel[i], &b.vel[i], sizeof(Vec3)), 0) << "body " << i;
  }
}

TEST(Crc32c, KnownCheckValue) {
  // The catalogue check value of CRC-32C (iSCSI): crc("123456789") = 0xE3069283.
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  // Continuing a CRC over two pieces gives the CRC of the whole.
  EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xE3069283u);
}

TEST(Checkpoint, RoundTripIsExactInBothPrecisions) {
  for (int bits : {32, 64}) {
    const Checkpoint c = some_checkpoint(100, bits);
    const std::vector<char> bytes = encode_checkpoint(c);
    const std::size_t state = 100 * 7 * static_cast<std::size_t>(bits / 8);
    EXPECT_GT(bytes.size(), state);
    EXPECT_LT(bytes.size(), state + 200) << "the state is stored in its own precision";
    const Checkpoint d = decode_checkpoint(std::string_view(bytes.data(), bytes.size()), "x");
    EXPECT_EQ(d.bits, bits);
    EXPECT_EQ(d.meta, c.meta);
    expect_same(d.state, c.state);
  }
}

TEST(Checkpoint, A32BitStateMustHoldFloats) {
  Checkpoint c = some_checkpoint(4, 32);
  c.state.vel[2].y = 0.1;  // not a float
  EXPECT_THROW(encode_checkpoint(c), std::logic_error);
}

// Every truncation and every single flipped bit of a small checkpoint is refused (InputError),
// never taken for a good file.
TEST(Checkpoint, EveryTruncationAndEveryBitFlipIsRefused) {
  const std::vector<char> good = encode_checkpoint(some_checkpoint(5, 32));
  const std::string_view all(good.data(), good.size());
  for (std::size_t len = 0; len < good.size(); ++len)
    EXPECT_THROW(decode_checkpoint(all.substr(0, len), "t"), InputError) << "truncated to " << len;
  std::vector<char> bad = good;
  for (std::size_t at = 0; at < bad.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      bad[at] = static_cast<char>(bad[at] ^ (1 << bit));
      EXPECT_THROW(decode_checkpoint(std::string_view(bad.data(), bad.size()), "f"), InputError)
          << "bit " << bit << " of byte " << at;
      bad[at] = good[at];
    }
  std::vector<char> longer = good;
  longer.push_back('x');
  EXPECT_THROW(decode_checkpoint(std::string_view(longer.data(), longer.size()), "l"), InputError);
}

TEST(Checkpoint, MessagesNameTheBlockAndTheCheck) {
  const std::vector<char> good = encode_checkpoint(some_checkpoint(5, 64));
  auto message = [](const std::vector<char>& b) {
    try {
      decode_checkpoint(std::string_view(b.data(), b.size()), "f.nbck");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::vector<char> v = good;
  v[8] = 2;  // the version
  EXPECT_NE(message(v).find("format version 2; this nbody reads version 1"), std::string::npos) << message(v);
  v = good;
  v[good.size() - 60] ^= 1;  // inside VEL
  EXPECT_NE(message(v).find("block VEL fails its CRC32C check"), std::string::npos) << message(v);
  v.assign(good.begin(), good.begin() + 200);  // inside POS
  EXPECT_NE(message(v).find("block POS claims"), std::string::npos) << message(v);
  EXPECT_NE(message(v).find("truncated"), std::string::npos) << message(v);
  v.assign(good.begin(), good.end() - 20);  // the END block lost
  EXPECT_NE(message(v).find("block END is missing"), std::string::npos) << message(v);
  v = {'h', 'e', 'l', 'l', 'o', ',', 'w', 'o', 'r', 'l', 'd', '\n'};
  EXPECT_NE(message(v).find("not an nbody checkpoint"), std::string::npos) << message(v);
}

// The META block alone, read without the state: the meta written; nothing from a file that does
// not start as a checkpoint does (truncated inside META, a bit flipped in SHAPE or META, no file).
TEST(Checkpoint, ItsMetaIsReadWithoutTheState) {
  Checkpoint c = some_checkpoint(1000, 64);
  c.meta = R"({"format":"test","step":12})";
  const std::vector<char> good = encode_checkpoint(c);
  fs::create_directories(tmp("meta"));
  const fs::path p = tmp("meta") / "c.nbck";
  const auto with = [&](const std::vector<char>& bytes) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return read_checkpoint_meta(p.string());
  };
  EXPECT_EQ(with(good), c.meta);
  const std::size_t meta_end = 12 + 36 + 16 + c.meta.size() + 4;  // header, SHAPE, META
  EXPECT_EQ(with(std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(meta_end))), c.meta)
      << "the state is not read";
  for (const std::size_t len : {std::size_t{0}, std::size_t{30}, meta_end - 1})
    EXPECT_FALSE(with(std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)))) << len;
  for (const std::size_t at : {std::size_t{0}, std::size_t{8}, std::size_t{30}, std::size_t{12 + 36 + 3}, meta_end - 10}) {
    std::vector<char> bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 4);
    EXPECT_FALSE(with(bad)) << "byte " << at;
  }
  EXPECT_FALSE(read_checkpoint_meta(tmp("none.nbck").string()));
}

TEST(Checkpoint, WritingKeepsThePreviousOneWhole) {
  fs::create_directories(tmp("prev"));  // a folder of its own: nothing else is listed there
  const fs::path p = tmp("prev") / "c.nbck";
  Checkpoint c = some_checkpoint(10, 64);
  write_checkpoint(p.string(), c);
  EXPECT_FALSE(fs::exists(p.string() + ".prev"));
  const std::string first = bytes_of(p);
  c.meta = R"({"format":"test","step":4})";
  write_checkpoint(p.string(), c);
  EXPECT_EQ(bytes_of(p.string() + ".prev"), first);
  EXPECT_EQ(read_checkpoint(p.string()).meta, c.meta);
  for (const auto& e : fs::directory_iterator(p.parent_path()))  // no temporary file left behind
    EXPECT_TRUE(e.path().filename() == "c.nbck" || e.path().filename() == "c.nbck.prev") << e.path();
}

TEST(TipsySnapshot, StandardBigEndianReadsBackAsFloats) {
  Bodies b = some_bodies(50, 3);
  b.pos[1].x = 0.1;  // rounded to float by the format
  const fs::path p = tmp("s.bin");
  write_tipsy(p.string(), b, 2.5, 0.05);
  const std::string bytes = bytes_of(p);
  ASSERT_EQ(bytes.size(), 32u + 36u * 50u);
  // The header's time, big-endian: 2.5 = 0x4004000000000000.
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x40\x04\x00\x00\x00\x00\x00\x00", 8));
  TipsyCounts c;
  const Bodies r = read_tipsy(p.string(), &c);
  EXPECT_TRUE(c.big_endian);
  EXPECT_EQ(c.ndark, 50);
  EXPECT_EQ(c.nsph + c.nstar, 0);
  ASSERT_EQ(r.size(), b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(r.pos[i].x, static_cast<double>(static_cast<float>(b.pos[i].x)));
    EXPECT_EQ(r.pos[i].w, b.pos[i].w);
    EXPECT_EQ(r.vel[i].z, b.vel[i].z);
  }
}

TEST(Hdf5Snapshot, RoundTripIsExact) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  Bodies b = some_bodies(40, 5);
  b.pos[3].y = 0.1;  // float64 in the file: kept exactly
  const fs::path p = tmp("s.h5");
  write_hdf5_snapshot(p.string(), b, 1.25, {{"pipeline", std::string("cpu64")}, {"step", 7LL}, {"dt", 0.01}});
  const Hdf5Snapshot s = read_hdf5(p.string());
  expect_same(s.bodies, b);
  EXPECT_EQ(s.time, 1.25);
  ASSERT_EQ(s.groups, std::vector<std::size_t>{40});
  ASSERT_EQ(s.ours.size(), 3u);  // in name order
  EXPECT_EQ(s.ours[0].first, "dt");
  EXPECT_EQ(std::get<double>(s.ours[0].second), 0.01);
  EXPECT_EQ(std::get<std::string>(s.ours[1].second), "cpu64");
  EXPECT_EQ(std::get<long long>(s.ours[2].second), 7);
  EXPECT_EQ(count_hdf5_bodies(p.string()), 40u);
}

TEST(Hdf5Snapshot, BadFilesAreInputErrors) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  const fs::path p = tmp("t.h5");
  write_hdf5_snapshot(p.string(), some_bodies(64, 1), 0, {});
  const std::string good = bytes_of(p);
  EXPECT_THROW(parse_hdf5("not hdf5 at all", "x"), InputError);
  for (std::size_t len : {std::size_t{0}, std::size_t{8}, std::size_t{100}, good.size() / 2, good.size() - 1})
    EXPECT_THROW(parse_hdf5(std::string_view(good).substr(0, len), "x"), InputError) << len;
}

// The processes this test process has started and not yet reaped.
std::set<pid_t> children() {
  std::set<pid_t> out;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream f(task.path() / "children");
    for (pid_t pid; f >> pid;) out.insert(pid);
  }
  return out;
}

// Our snapshot of 3 bodies (the fuzzer's seed), and copies of it with one byte changed on which
// libhdf5 1.10 crashes, loops, or asks for 5.9 GB; found by fuzzing, cut down to the one byte.
std::string seed_snapshot() { return bytes_of(fs::path(NBODY_SOURCE_DIR) / "tests/fuzz/corpus/hdf5/ours-n3.h5"); }
std::string with_byte(std::string bytes, std::size_t at, char value) {
  bytes.at(at) = value;
  return bytes;
}

// Whether parse_hdf5 kills the process that runs it on `bytes` (a signal, or a sanitizer's exit).
bool library_dies_on(const std::string& bytes) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    try {
      (void)parse_hdf5(bytes, "x");
    } catch (...) {
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

void expect_seed(const Hdf5Snapshot& s) {
  ASSERT_EQ(s.bodies.size(), 3u);
  EXPECT_EQ(s.groups, std::vector<std::size_t>{3});
  EXPECT_EQ(s.time, 0.01);
}

// One reading process answers file after file, a refused file included, with each file's own
// contents (the library keeps open files by name: one process must not see an earlier file).
TEST(Hdf5Snapshot, OneReadingProcessReadsManyFiles) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  std::vector<std::string> files;
  std::vector<Bodies> bodies;
  for (std::size_t n : {5, 9, 14}) {
    bodies.push_back(some_bodies(n, static_cast<unsigned>(n)));
    const fs::path p = tmp("many-" + std::to_string(n) + ".h5");
    write_hdf5_snapshot(p.string(), bodies.back(), 0.5 * static_cast<double>(n), {});
    files.push_back(bytes_of(p));
  }
  (void)parse_hdf5_isolated(files[0], "first");
  const std::set<pid_t> reader = children();
  const bool listed = fs::exists(fs::path("/proc/self/task") / std::to_string(gettid()) / "children");
  if (listed)
    ASSERT_EQ(reader.size(), 1u) << "the reading process stays for the next file";
  else
    std::fprintf(stderr, "no /proc/.../children here: the reading process is not checked to be the same one\n");
  for (int round = 0; round < 30; ++round) {
    const std::size_t k = static_cast<std::size_t>(round) % files.size();
    const Hdf5Snapshot s = parse_hdf5_isolated(files[k], "file " + std::to_string(k));
    expect_same(s.bodies, bodies[k]);
    EXPECT_EQ(s.time, 0.5 * static_cast<double>(bodies[k].size()));
    if (round == 10) {
      EXPECT_THROW((void)parse_hdf5_isolated("not hdf5 at all", "x"), InputError);
    }
  }
  EXPECT_EQ(children(), reader) << "one reading process for every file";
}

// A file the library crashes on is refused, naming it; the files after it are read as before.
TEST(Hdf5Snapshot, AFileTheLibraryDiesOnIsRefused) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  const std::string good = seed_snapshot();
  const std::vector<std::string> crashing{with_byte(good, 7940, 125), with_byte(good, 12140, 9)};
  for (const std::string& bad : crashing)
    if (!library_dies_on(bad)) GTEST_SKIP() << "this libhdf5 does not die on the test files: nothing to contain";
  expect_seed(parse_hdf5_isolated(good, "good"));
  for (int round = 0; round < 3; ++round)
    for (const std::string& bad : crashing) {
      try {
        (void)parse_hdf5_isolated(bad, "crashing.h5");
        ADD_FAILURE() << "read a file the library dies on";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("'crashing.h5': the HDF5 library failed on this file"), std::string::npos)
            << e.what();
      }
      expect_seed(parse_hdf5_isolated(good, "good"));
    }
}

// A file the library loops on is refused after the time it was given, and the next is read.
TEST(Hdf5Snapshot, AFileTheLibraryLoopsOnIsRefusedInTime) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  const std::string good = seed_snapshot(), looping = with_byte(good, 8328, static_cast<char>(253));
  expect_seed(parse_hdf5_isolated(good, "good"));
  const auto began = std::chrono::steady_clock::now();
  try {
    (void)parse_hdf5_isolated(looping, "looping.h5", std::chrono::seconds(1));
    GTEST_SKIP() << "this libhdf5 reads the test file in time: nothing to stop";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'looping.h5': the HDF5 library failed on this file (it took over 1 s)"),
              std::string::npos) << e.what();
  }
  // 1 s in the process that had read the good file, 1 s in a fresh one
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(), 10.0);
  expect_seed(parse_hdf5_isolated(good, "good"));
}

// A file on which the library asks for gigabytes (in-process this one takes 5.9 GB and 11 s on the
// 2-core machine) is read within its memory cap by a reading process that has read other files
// before: the cap is set for each file. The library then fails that allocation and goes on.
TEST(Hdf5Snapshot, EveryFileIsReadWithinItsMemoryCap) {
  if (!have_hdf5()) GTEST_SKIP() << "built without HDF5 (scripts/install-deps.sh installs libhdf5-dev)";
  const std::string good = seed_snapshot(), greedy = with_byte(good, 12259, static_cast<char>(180));
  for (int round = 0; round < 2; ++round) {
    expect_seed(parse_hdf5_isolated(good, "good"));
    const auto began = std::chrono::steady_clock::now();
    try {
      expect_seed(parse_hdf5_isolated(greedy, "greedy.h5", std::chrono::seconds(30)));
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("'greedy.h5'"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(), 5.0) << round;
  }
}

}  // namespace
// What one SIGINT, SIGTERM or SIGHUP does: nothing deferred, it ends the process; the first
// deferred one stops the run after its batch; those within kInterruptBurst of it are the same
// interrupt (a burst from `timeout`, a batch system and mpirun); a later one stops at once.
TEST(Interrupts, ABurstIsOneInterruptAndALaterOneStopsAtOnce) {
  using nbody::OnInterrupt;
  using nbody::on_interrupt;
  EXPECT_EQ(on_interrupt(false, true, 0.0), OnInterrupt::End);
  EXPECT_EQ(on_interrupt(false, false, 5.0), OnInterrupt::End);
  EXPECT_EQ(on_interrupt(true, true, 0.0), OnInterrupt::Defer);
  for (double s : {0.0, 1e-6, 0.05, 0.5, nbody::kInterruptBurst})
    EXPECT_EQ(on_interrupt(true, false, s), OnInterrupt::Same) << s << " s after the first";
  for (double s : {nbody::kInterruptBurst + 1e-3, 3.0, 60.0})
    EXPECT_EQ(on_interrupt(true, false, s), OnInterrupt::AtOnce) << s << " s after the first";
  EXPECT_GT(nbody::kInterruptBurst, 1.2) << "mpirun signals its ranks a second after the batch system signalled it";
  EXPECT_LE(nbody::kInterruptBurst, 2.0) << "a person's second Ctrl-C must still stop the run";
  EXPECT_LT(nbody::kStoppedAtOnce, 128) << "128 + a signal says the checkpoint was written";
  // The message a person reads after the first names the interval the handler applies.
  char figure[32];
  std::snprintf(figure, sizeof figure, "more than %g s", nbody::kInterruptBurst);
  EXPECT_NE(std::string(nbody::kStoppingAfterBatch).find(figure), std::string::npos) << nbody::kStoppingAfterBatch;
}

// A run stopped at once by a second interrupt, or ended by a signal where nothing was deferred,
// leaves none of the folders it made for its outputs that are still empty: from the deepest up to
// the highest it made (the empty folder above stays: it was there before), and none past a folder
// that holds a file. A child process takes the signals.
TEST(Interrupts, AStopBySignalRemovesTheEmptyFoldersTheRunMade) {
  namespace fs = std::filesystem;
  const fs::path above = fs::absolute(tmp("made-by-run")).lexically_normal();  // the user's, empty
  const fs::path highest = above / "a", deepest = highest / "b";
  struct Case {
    bool deferred;   // a run stepping: the second signal, past the burst, stops it at once
    bool file_in_a;  // something the run wrote in the highest folder it made
  };
  for (const Case c : {Case{true, false}, Case{false, false}, Case{true, true}}) {
    const std::string tag = std::string(c.deferred ? "at once" : "by the signal") + (c.file_in_a ? ", a file kept" : "");
    fs::remove_all(above);
    fs::create_directories(deepest);
    if (c.file_in_a) std::ofstream(highest / "checkpoint.nbck") << "x";
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(20);
      nbody::handle_signals(false);
      nbody::track_made_folders(deepest.string(), highest.string());
      nbody::defer_interrupts(c.deferred);
      ::raise(SIGTERM);
      std::this_thread::sleep_for(std::chrono::duration<double>(nbody::kInterruptBurst + 0.3));
      ::raise(SIGTERM);
      _exit(99);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid) << tag;
    if (c.deferred) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == nbody::kStoppedAtOnce) << tag << ": status " << status;
    } else {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << tag << ": status " << status;
    }
    EXPECT_FALSE(fs::exists(deepest)) << tag;
    EXPECT_EQ(fs::exists(highest), c.file_in_a) << tag;
    EXPECT_TRUE(fs::is_directory(above)) << tag << ": above the highest folder made, left as it was";
  }
}

}  // namespace nbody
