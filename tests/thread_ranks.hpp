// P ranks as P threads of one process: the Exchange of pipeline.hpp without mpirun, for tests of
// distributed code that run anywhere (under ASan too). Every collective meets the other ranks at a
// barrier; a rank that throws leaves the others' next collective throwing too, and run() rethrows
// the first exception.
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pipeline.hpp"

namespace test_ranks {

class Shared {
 public:
  explicit Shared(int ranks) : ranks_(ranks), slots_(static_cast<std::size_t>(ranks)), barrier_(ranks) {}
  int ranks() const { return ranks_; }
  // Publishes `p` as rank r's, waits for every rank, calls read(slots), and waits again (the slots
  // stay valid until every rank has read them).
  template <typename Read>
  void meet(int r, const void* p, Read read) {
    slots_[static_cast<std::size_t>(r)] = p;
    sync();
    read(slots_);
    sync();
  }
  void drop() {
    failed_ = true;
    barrier_.arrive_and_drop();
  }

 private:
  void sync() {
    barrier_.arrive_and_wait();
    if (failed_) throw std::runtime_error("another rank failed");
  }
  int ranks_;
  std::vector<const void*> slots_;
  std::barrier<> barrier_;
  std::atomic<bool> failed_{false};
};

class ThreadExchange final : public nbody::Exchange {
 public:
  ThreadExchange(Shared& s, int rank) : s_(s), rank_(rank) {}
  int ranks() const override { return s_.ranks(); }
  int rank() const override { return rank_; }
  long long agree_min(long long v) override {
    const std::vector<long long> every = all_of(v);
    return *std::min_element(every.begin(), every.end());
  }
  std::vector<double> all(double v) override { return all_of(v); }
  void allgather_bytes(const void* mine, std::size_t bytes, void* every) override {
    s_.meet(rank_, mine, [&](const std::vector<const void*>& slots) {
      for (std::size_t r = 0; r < slots.size(); ++r)
        std::memcpy(static_cast<char*>(every) + r * bytes, slots[r], bytes);
    });
  }
  std::vector<std::byte> allgatherv(const std::vector<std::byte>& mine) override {
    std::vector<std::byte> every;
    s_.meet(rank_, &mine, [&](const std::vector<const void*>& slots) {
      for (const void* p : slots) {
        const auto& v = *static_cast<const std::vector<std::byte>*>(p);
        every.insert(every.end(), v.begin(), v.end());
      }
    });
    return every;
  }
  std::vector<std::vector<std::byte>> alltoall(const std::vector<std::vector<std::byte>>& out) override {
    std::vector<std::vector<std::byte>> in(out.size());
    s_.meet(rank_, &out, [&](const std::vector<const void*>& slots) {
      for (std::size_t r = 0; r < slots.size(); ++r)
        in[r] = (*static_cast<const std::vector<std::vector<std::byte>>*>(slots[r]))[static_cast<std::size_t>(rank_)];
    });
    return in;
  }
  void allgather(void* data, std::size_t bytes, std::size_t n, const nbody::Partition& part) override {
    s_.meet(rank_, data, [&](const std::vector<const void*>& slots) {
      for (int r = 0; r < ranks(); ++r) {
        if (r == rank_) continue;
        const auto [b, e] = part.block(n, r);
        std::memcpy(static_cast<char*>(data) + b * bytes, static_cast<const char*>(slots[r]) + b * bytes,
                    (e - b) * bytes);
      }
    });
  }

 private:
  Shared& s_;
  int rank_;
};

// Runs body(exchange) for each of `ranks` ranks at once, one thread each; rethrows the first
// exception a rank threw.
inline void run(int ranks, const std::function<void(nbody::Exchange&)>& body) {
  Shared shared(ranks);
  std::exception_ptr first;
  std::mutex m;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadExchange ex(shared, r);
      try {
        body(ex);
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(m);
          if (!first) first = std::current_exception();
        }
        shared.drop();
      }
    });
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace test_ranks
