// cuda:tree across ranks: cpu:tree's decomposition (common/key_ranges.hpp) with the state, the
// tree and the essential trees on the device. Rank r holds on its GPU the bodies whose keys (in the
// cube of every rank's bodies) lie in its range. A step:
//
//  1. move     the boxes of every rank's bodies and their census (summed by the last kick, or a
//              pass of their own where none followed the last move; one allgather) give the cube
//              and check the last move; each body's key there gives its
//              range among the last step's, with no sort, and each range's count and work (each
//              body's terms of the last step), every rank's in one allgather: while the work stays
//              within 1% of every rank's share the ranges are kept, the leavers grouped by the rank
//              they go to (a radix pass over their ranks) and sent, and the arrivals take the places they left
//              (the rest stay where they are).
//              Else the keys are sorted, the ranges cut afresh from a sample of them and the
//              work below them, one allgather a round of a 16-way search, and this rank's own
//              range gathered in key order to its place among the arrivals. The leavers go in
//              one all-to-all (GPU to GPU by NCCL where every rank loads it, else staged through
//              the host: the MPI here is not CUDA-aware), every body counted and fingerprinted
//              before (the cube's census) and after (the next cube's, or check_moved())
//  2. build    this rank's tree, its bodies keyed in the move's cube (the same bodies at the same
//              places: no second gather of the boxes), sorted (after a move in place) or the
//              runs each rank sent merged into its own (one pass, where the move sorted them); a
//              cell whose key prefix reaches past the range is always opened (one process's cell
//              there holds other ranks' bodies too)
//  3. cut      for every other rank's domain (the boxes of its tree's nodes of n / 512 bodies,
//              found from the root down by one block beside the walk, in
//              key order: the box of all its bodies is stretched by a few far ones over every
//              rank's), the locally essential tree: the cells a body anywhere in it takes whole and
//              the bodies of the leaves it opens, one walk a level at a time from the root for
//              every domain at once (a frontier of (domain, node) pairs, each with the box that
//              opened its parent, tried first), the host looking at its
//              size every 16 levels; then sorted, counted and written once for every rank; a node
//              far from a cluster of 16 boxes is not tested against each of them
//  4. walk     this rank's groups walk its own tree on a stream of their own from the end of the
//              build, leaving kSpareSms SMs to what runs beside it: the domains' exchange, the cut (3), the
//              essential trees' travel (GPU to GPU by NCCL where every rank loads it,
//              nccl_exchange.cuh, else through the host in one all-to-all) and the tree built over
//              what arrived (its leaves are cells with their own box and moments, and bodies); that
//              tree's walk starts on the spare SMs and takes the others as the first walk leaves
//              them, and lists a bucket only where it is bodies (one process's buckets); the two
//              walks' terms added. Both trees are cut at this rank's range, and both walks start
//              below the nodes every walk opens (walk_starts), found once by one thread
//  5. kick-drift with the two walks' sums added as it reads them (a force pass for diagnostics
//              adds them in a pass of its own: the same sums), summing the new positions' box and
//              the bodies' census for the next move (kick_summed)
//
// The same bits run after run for a given number of ranks; every call is collective.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "bodies.hpp"
#include "device_buffer.cuh"
#include "key_ranges.hpp"
#include "nccl_exchange.cuh"
#include "pipeline.hpp"
#include "tree_build.cuh"

namespace nbody::cuda::tree {

// Nodes at most where the walks of a cut tree start (walk_starts): a warp's stack holds them.
inline constexpr int kMaxStarts = 1024;
static_assert(kMaxStarts <= kStack, "the walks' first stack holds every start");

// The tree over the received entries (its nodes t over n entries, keyed in the common cube) made
// ready for its walks, on the default stream: the nodes whose keys reach into this rank's range
// [first, end) cut (cut_cells: never taken whole), the small nodes that hold a cell marked (holds:
// n - 1 bytes; Source::holds_cells) and where every walk starts (starts: 1 + kMaxStarts ints;
// Source::starts, walk_starts).
void prepare_received_tree(const Key* keys, int n, Nodes t, Key first, Key end, int leaf_size, unsigned char* holds,
                           int* starts);

// The energy of the n bodies at pos (mass in w) with velocities v_{n-1/2} at vel and the force
// stage's a and phi (phi in w) at acc, v_n = v_{n-1/2} + a h, each body's potential less
// m_i `self` (a term its walks took off once too often): K and W summed on the device as the host's
// synchronise() and block_sum() sum them, blocks of kSumBlock in index order, each operation rounded
// as the host's code rounds it (no fused multiply-adds there), the blocks added in order on the host.
Energy energy_of(const Body* pos, const Body* vel, const Body* acc, int n, double h, double self);

// The box of a rank's bodies (ordered bits as TreeBuild's box: the least x, y, z, then the
// greatest) and their census (key_ranges::Census: the count and the fingerprints' sum), summed on
// the device by the kick that moved them (kick_summed) for the next move's cube and check.
struct StateSums {
  unsigned box[6];
  unsigned long long count, print;
};

// The kick-drift of the n bodies (the leapfrog's, integrate_kernels.cuh: the same bits; acc in
// `splits` splits `stride` apart), pos_in into pos_out, with the new positions' box and the bodies'
// census summed into *sums as it goes (sum_state); sum_bodies() the same sums of pos as it is. On
// the default stream.
void kick_summed(const Body* pos_in, Body* pos_out, Body* vel, const Body* acc, const unsigned long long* id, int n,
                 int splits, int stride, float dt, StateSums* sums);
void sum_bodies(const Body* pos, const unsigned long long* id, int n, StateSums* sums);

// The move in place's classification: each body's range among `ranks` (first: their first keys, on
// the device, ranks + 1 of them, the last past every key) by its key in the cube of `box`;
// leaves[i] = 1 where that is not `me`'s; each range's count and work into sums (2 ranks words,
// zeroed first: the counts, then the work). Where `keys` is not null, each body's key and i into
// keys[i] and order[i] (TreeBuild::sort_keyed's). On the default stream.
void classify_places(const Body* pos, const float* work, int n, const unsigned* box, const Key* first, int ranks, int me,
                     unsigned char* leaves, unsigned long long* sums, Key* keys, int* order);
// The move in place's arrivals (`arrived` records) into the places the leavers left (`holes`:
// ascending, `left` of them), the rest past the n bodies held; where fewer arrived than left, the
// bodies past the new end into the holes below it. Returns the bodies held now: end = n - left +
// arrived. The state arrays hold that many. On the default stream. Where `keys` is not null, the
// filled places are keyed (in the cube of `box`; `order` not null then):
// - AtPlaces: the keys classify_places() wrote go with the bodies moved and each arrival is keyed
//   at its place, its place into order[] (a place's order stays its own);
// - Listed: the k-th filled place's key and place at keys[k] and order[k], the arrivals first, then
//   the bodies moved from past the new end (max(left, arrived) entries; where fewer arrived, the
//   last left - (holes below end) of them are not written: TreeBuild::filled() made them past
//   every key). classify_places()'s keys are neither read nor written.
enum class Keyed { AtPlaces, Listed };
int fill_places(const key_ranges::Body* in, int arrived, const int* holes, int left, int n, Body* pos, Body* vel,
                unsigned long long* id, float* work, const unsigned* box, Key* keys, int* order,
                Keyed how = Keyed::AtPlaces);

// An essential tree on the way: its counts (sent ahead), then its cells (a monopole tree's leave
// their moments behind), then its bodies (16 bytes each).
struct Wire {
  std::uint64_t cells, bodies;
};

// Where a domain lies in the selection's tables: its first box and their count, its first cluster
// (each a lo, hi pair). The selection cuts every other rank's essential tree at once, a frontier
// entry a (domain, node) pair.
struct DomainAt {
  int box, boxes, cluster;
};

// An emit of the selection: the domain in the high word, 2i (node i taken whole) or 2i + 1 (its
// bodies listed) in the low; sorted, each domain's emits lie together in node order.
using Emit = unsigned long long;

class TreeRanks {
 public:
  struct Walk {
    float theta2;
    int leaf_size;
    bool quadrupole;
  };
  // `capacity`: each rank's share of the work; `local` and `walker`: the rung's own tree and walk.
  // `device`: this rank's GPU (the walk of the received trees' stacks are made on it).
  TreeRanks(Exchange& ex, std::vector<double> capacity, Walk walk, TreeBuild& local, Walker& walker, int device)
      : ex_(ex), capacity_(std::move(capacity)), walk_(walk), local_(local), walker_(walker),
        remote_walker_(device, walk.quadrupole) {}

  void load(const Bodies& b, const Params& params);
  void load_own(const Bodies& mine, std::size_t first, std::size_t n, const Params& params);  // Pipeline's
  void step(int count);
  void accelerations(std::vector<Vec3>& out);  // every body's, by index (gathered)
  void read(Bodies& b);                        // every body's, by index (gathered)
  long long first_non_finite();
  std::vector<std::uint64_t> split_state();
  void resume_split(const std::vector<std::uint64_t>& first);
  std::size_t held() const { return static_cast<std::size_t>(n_); }
  std::vector<int> owners(std::size_t n);  // each body's rank, by index (gathered)
  std::vector<Pipeline::ReceivedCell> received_cells(int rank) const;  // Pipeline's (gathered)
  Pipeline::OwnPass own_pass(const std::vector<std::size_t>& sample, bool stagger);  // Pipeline's
  ExchangeTime exchange_time() const;

 private:
  // Bodies [at, at + count) of `b`, indices first.., as this rank's block.
  void load_range(const Bodies& b, std::size_t at, std::size_t first, std::size_t count, const Params& params);
  void move();                 // 1
  // The sums of the bodies as they are into sums_ (where the kick did not leave them there), on the
  // host: the box as an Extent and the census.
  std::pair<key_ranges::Extent, key_ranges::Census> state_sums();
  // The last move's check, where no common_cube() since has made it: the census of every rank's
  // bodies now against the one before that move (collective).
  void check_moved();
  // The bodies' ranges among first_ by their keys in cube_, no sort (classify): each range's count
  // and work into classified_, and every rank's (one allgather) into classes_ (both kept until
  // the next cube); the keys into the build's unsorted keys (keyed_).
  void classify_bodies();
  // The move where its ranges were not cut from sorted keys: the leavers out, the arrivals into
  // their places, the rest where they are.
  void move_in_place();
  // The bodies that stay keep their places and keys: their sort starts at once, on sort_stream_
  // beside the pack and the trade, and the build merges the filled places' keys into it
  // (TreeBuild::sort_kept, sort_merged; kept_sort_), where the keys are the classification's
  // (keyed_) and something moves (else nothing beside it would hide it, and the one sort is
  // shorter). Returns the bodies held after the move (every rank's classification says).
  long long start_kept_sort(int left);
  // The `left` leavers' places, ascending (holes_[0]: where the arrivals go), and grouped by the rank
  // they go to (holes_[1], as they travel: each other rank's to it, in rank order, in place order
  // within each rank's: a stable radix sort of their ranks' bits, one pass up to 256 ranks), packed
  // into travel_[0].
  void pack_leavers(int left);
  // The move where they were (the keys sorted): the own range gathered in key order into the
  // state's other side, between the arrivals from lower and from higher ranks (the runs the build
  // merges).
  void move_sorted();
  // The move's leavers (travel_[0]: the bodies outside this rank's range, each other rank's together
  // in rank order; at[q]: where rank q's range starts, as if every body were in that order) to their ranks, what the others send into travel_[1]
  // in rank order: GPU to GPU by NCCL, or through the host. Sets runs_ (this rank's own range in
  // its place) and returns where the own range goes among the arrivals. `every`: what each rank
  // sends each (ranks x ranks, in rank order), where the classification gathered it; else gathered.
  std::size_t trade_on_device(const std::vector<int>& at, std::vector<long long> every);
  std::size_t trade_on_host(const std::vector<int>& at);
  // 2-4, with `weigh` each body's terms into its work, with `potential` each body's potential in
  // acc_'s w; the received trees' sums added to acc_, or with `apart` left at remote_acc() (the
  // kick adds them). Returns the entries received (the essential trees' cells and bodies).
  int forces(bool weigh, bool potential = false, bool apart = false);
  // The received trees' walk's sums: acc_'s second half (integrate()'s second split).
  Body* remote_acc() const { return acc_.get() + acc_.size() / 2; }
  void mark(int part) { marks_[part].record(); }  // the end of a part of a step (0: its start)
  void common_cube();   // the cube of every rank's bodies (collective), into cube_
  void sort_in_cube();  // this rank's keys in cube_, sorted (merged from runs_ where the move left runs;
                        // the classification's where keyed_)
  // The ranges the move goes to: the last step's while their work stays shared within
  // key_ranges::kRecutAbove of the capacity (by the terms the bodies summed last step, weighed by
  // classify_bodies()) or while no step has weighed the bodies, else ranges_now() (the keys sorted
  // first). After common_cube().
  std::vector<std::uint64_t> ranges_to_cut();
  std::vector<std::uint64_t> ranges_now();  // cut afresh by the work, from the sorted keys
  void find_domain();       // this rank's domain boxes (domain_boxes), into domain_
  void exchange_domains();  // every rank's domain as boxes, into domains_
  // 3: for each rank what this one sends it, into outbox_ in rank order
  std::vector<Wire> essential_trees();
  struct Domain {  // a rank's domain: its boxes (lo, hi) in key order, the box of each kCluster of them, then of all
    std::vector<float4> boxes, clusters;
  };
  int select(int domains);
  // 4: the outbox to every rank, what each sent this one into inbox_bytes_ (its counts returned):
  // GPU to GPU (NCCL, on comm_stream_), or copied to the host, all-to-all, and back
  std::vector<Wire> send_on_device(const std::vector<Wire>& out);
  std::vector<std::vector<std::byte>> stage_on_host(const std::vector<Wire>& out);
  std::vector<Wire> deliver_from_host(const std::vector<std::vector<std::byte>>& got);
  int unpack_received(const std::vector<Wire>& in);  // into inbox_ and inbox_com_: the entries
  void grow(int n);            // the state's buffers for n bodies, both sides (their contents lost where made anew)
  template <typename T>
  std::vector<T> local(const DeviceBuffer<T>& b) const;  // the first n_ entries, on the host
  std::vector<key_ranges::Body> records() const;         // this rank's bodies, on the host (read())

  Exchange& ex_;
  std::vector<double> capacity_;
  Walk walk_;
  TreeBuild& local_;
  Walker& walker_;
  TreeBuild remote_;       // over the essential trees received
  Walker remote_walker_;   // its walk, beside the walk of local_ (stacks of its own); its queue remote_'s counters
  Stream walk_stream_;     // the walk of local_
  Event built_, walk_start_, walk_end_;
  float dt_ = 0, eps2_ = 0;
  int n_ = 0, cur_ = 0, held_ = 0;
  // The state of this rank's bodies (n_ of them, capacity for more): positions and masses
  // (pos_[cur_]: double-buffered for the kick-drift and the move), velocities, ids (the index in the
  // run) and work (vel_[held_] and so on: double-buffered for move_sorted()), accelerations.
  DeviceBuffer<Body> pos_[2], vel_[2], acc_;  // acc_: the own walk's sums, then the received trees' (remote_acc())
  DeviceBuffer<unsigned long long> id_[2];
  DeviceBuffer<float> work_[2];
  DeviceBuffer<float> work_remote_;  // the received trees' walk's terms, added to work_
  // A move's leavers in rank order (this rank's own range left out; in key order where the move
  // sorted them), and the arrivals in rank order (load_range: the block as loaded).
  DeviceBuffer<key_ranges::Body> travel_[2];
  DeviceBuffer<Received> inbox_;       // the essential trees received
  DeviceBuffer<Body> inbox_com_;       // their centres of mass, the remote tree's bodies
  DeviceBuffer<unsigned char> holds_cells_;  // the remote tree's small nodes that hold a cell (holds_cells)
  // Scratch, kept from step to step: the ranges' scan and sample, the range starts, the
  // essential trees' selection and its counts and offsets.
  DeviceBuffer<double> work_sorted_, running_, sample_below_;
  DeviceBuffer<unsigned char> scan_temp_;
  DeviceBuffer<Key> sample_keys_, first_keys_;
  DeviceBuffer<int> at_, let_count_, let_offset_, let_body_count_, let_body_offset_, counts_;
  DeviceBuffer<int4> frontier_[2];  // the selection's (domain, node, near box) entries, a level's and the next's
  DeviceBuffer<Emit> emits_[2];     // as it emitted them, and sorted
  DeviceBuffer<long long> wires_;   // essential_wires'
  DeviceBuffer<float4> domain_, domain_of_;  // this rank's domain boxes; the other ranks' boxes, then clusters
  DeviceBuffer<int> domain_count_ = DeviceBuffer<int>(1);
  DeviceBuffer<DomainAt> domain_at_;
  int domain_boxes_ = 0;            // boxes in domain_of_ before the clusters
  DeviceBuffer<unsigned char> sort_temp_;
  // The move in place: each body's flag (1: it leaves), the leavers' places (ascending, then grouped
  // by the rank they go to) and those ranks, and the classification's sums (classify()'s), also on
  // the host, this rank's (classified_: each range's count, then its work) and every rank's
  // (classes_, in rank order).
  DeviceBuffer<unsigned char> leaves_;
  DeviceBuffer<int> holes_[2];
  DeviceBuffer<int> leaver_ranks_[2];
  DeviceBuffer<unsigned long long> class_sums_;
  DeviceBuffer<int> selected_count_ = DeviceBuffer<int>(1);
  std::vector<unsigned long long> classified_, classes_;  // empty: not classified in this cube
  bool keys_sorted_ = false;                    // the keys sorted (sort_in_cube()) since common_cube()
  // Every body's key in this cube and the identity order are in the build's unsorted keys (written
  // by the classification, moved with the bodies by a move in place): the sort takes them as they are.
  // Where kept_sort_ is pending, the kept sort has them, and the move's keys are listed apart.
  bool keyed_ = false;
  // The kept bodies' sort, begun on sort_stream_ by a move in place (where keyed_): the bodies held
  // before it and those that left; the build merges the places it filled into it.
  struct KeptSort {
    int n, left;
  };
  std::optional<KeptSort> kept_sort_;
  Stream sort_stream_;
  // next_ was cut afresh from the sorted keys (split_state()): the move that takes it is
  // move_sorted(), as when the move cuts them itself, so a checkpoint leaves the state as it was.
  bool next_cut_ = false;
  DeviceBuffer<unsigned long long> first_bad_ = DeviceBuffer<unsigned long long>(1);  // first_non_finite()'s
  // The bodies' box and census: the kick's where summed_ (the state as the kick left it), else
  // sum_bodies()'s. A move's census before it is checked against the bodies after it at the
  // next cube (one allgather with the boxes), or by check_moved() where the run reads the state
  // first: unchecked_ holds it till then.
  DeviceBuffer<StateSums> sums_ = DeviceBuffer<StateSums>(1);
  bool summed_ = false;
  key_ranges::Census census_now_;                // every rank's bodies' at the last cube
  std::optional<key_ranges::Census> unchecked_;  // before the last move, if not yet checked
  // Where the walks of the received tree and of the rank's own tree start (walk_starts).
  DeviceBuffer<int> starts_ = DeviceBuffer<int>(1 + kMaxStarts), own_starts_ = DeviceBuffer<int>(1 + kMaxStarts);
  std::vector<Domain> domains_;  // every rank's
  unsigned cube_[6] = {};                  // the common cube's extent, as TreeBuild::set_box takes it
  std::vector<std::uint64_t> first_, next_;  // the ranges the bodies were moved to last; the next ones
  // Where the move left each rank's bodies (in rank order, each rank's in key order): the bounds of
  // the sorted runs the build merges; empty once merged (or before any move).
  std::vector<int> runs_;
  ExchangeTime exchange_time_;
  DeviceBuffer<std::byte> outbox_, inbox_bytes_;  // the essential trees sent, and received
  DeviceExchange* nccl_ = nullptr;                // null: through the host
  std::vector<Wire> received_;                    // what each rank sent at the last force pass (inbox_)
  Stream comm_stream_;
  Event selected_, comm_start_, comm_end_, packed_, traded_;
  // The parts of a step (kParts), timed on the default stream: each the time between the events at
  // its ends, the host's waits between them included (an all-gather leaves the GPU idle). cube: the
  // common cube; ranges: the bodies weighed by range and, where the ranges are cut afresh, the keys
  // sorted and the search; pack: the leavers found and packed (moving in place, with the bodies'
  // classification where this move did not weigh the ranges: given, weighed by split_state(), or
  // no step had weighed the bodies). From the
  // end of the build the rank's own walk runs on walk_stream_: domains, select, wait (for what the
  // others sent) and remote (the tree over it) run beside it, and walks is the rest of both walks.
  static constexpr const char* kParts[] = {"cube",    "ranges", "pack", "trade", "unpack", "build",
                                           "domains", "select", "wait", "remote", "walks", "kick"};
  static constexpr int kPartCount = 12;
  Event marks_[kPartCount + 1];
  double part_s_[kPartCount] = {};
  // From the start of the rank's own walk to: its end, the end of the build over what the others
  // sent, the end of both walks (summed over the steps).
  static constexpr const char* kBeside[] = {"own walk ends", "received tree built", "both walks end"};
  double beside_s_[3] = {};
  long long steps_ = 0;
  double moved_ = 0;  // bodies that left this rank in the steps' moves
  int leaving_ = 0;   // in the last move
  bool weighed_ = false;  // a step has measured each body's work
  long long recuts_ = 0;  // moves whose ranges were cut afresh (ranges_to_cut())
};

}  // namespace nbody::cuda::tree
