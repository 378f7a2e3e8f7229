// Body files: the real Tipsy galaxy, and every kind of bad file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "scratch.hpp"
#include "shared_data.hpp"
#include "initial_conditions.hpp"
#include "io.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;

// A file in this process's scratch folder (removed when the process ends).
fs::path tmp(const std::string& name) { return scratch_test::scratch_folder("nbody-test-io") / name; }

void write_bytes(const fs::path& p, const std::vector<char>& data) {
  std::ofstream(p, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Expects InputError whose message contains `needle`.
void expect_input_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one mentioning '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

const fs::path kGalaxy = fs::path(NBODY_SHARED_DATA) / "galaxy_20K.bin";

TEST(Tipsy, GalaxyCountsAndMass) {
  REQUIRE_GALAXY();
  TipsyCounts c;
  const Bodies b = read_tipsy(kGalaxy.string(), &c);
  EXPECT_EQ(c.nbodies, 20000);
  EXPECT_EQ(c.ndark, 2500);
  EXPECT_EQ(c.nstar, 17500);
  EXPECT_EQ(c.nsph, 0);
  EXPECT_FALSE(c.big_endian);
  ASSERT_EQ(b.size(), 20000u);
  double m = 0;
  for (const auto& p : b.pos) m += p.w;
  EXPECT_NEAR(m, 130.917, 0.0005);  // computed outside this project (known to 6 digits)
}

TEST(Tipsy, FirstNBodiesAndTooMany) {
  REQUIRE_GALAXY();
  const Bodies b = make_initial_conditions(kGalaxy.string(), 100, 1);
  EXPECT_EQ(b.size(), 100u);
  expect_input_error([] { make_initial_conditions(kGalaxy.string(), 20001, 1); }, "exceeds");
}

// The species of the bodies returned, for pictures: Tipsy's groups in file order, counted after
// --subset (first: whole groups then part of one, empty ones dropped; random: in proportion).
TEST(Tipsy, SpeciesFollowTheSubset) {
  REQUIRE_GALAXY();
  auto names = [](const std::vector<Species>& v) {
    std::string s;
    for (const auto& k : v) s += k.name + ":" + std::to_string(k.count) + (k.luminous ? "+ " : "- ");
    return s;
  };
  std::vector<Species> all, first, random, generated;
  EXPECT_EQ(make_initial_conditions(kGalaxy.string(), 0, 1, Subset::First, &all).size(), 20000u);
  EXPECT_EQ(names(all), "dark:2500- star:17500+ ");  // galaxy_20K: no gas
  make_initial_conditions(kGalaxy.string(), 3000, 1, Subset::First, &first);
  EXPECT_EQ(names(first), "dark:2500- star:500+ ");
  make_initial_conditions(kGalaxy.string(), 1000, 1, Subset::First, &first);
  EXPECT_EQ(names(first), "dark:1000- ") << "the star group, empty, is dropped";
  make_initial_conditions(kGalaxy.string(), 3000, 5, Subset::Random, &random);
  EXPECT_EQ(names(random), "dark:375- star:2625+ ");
  make_initial_conditions("plummer", 64, 1, Subset::First, &generated);
  EXPECT_EQ(names(generated), "bodies:64+ ");
}

// --subset random: each species in proportion, the file's total mass, file order, the seed's draw.
TEST(Tipsy, RandomSubsetKeepsTheMixAndTheMass) {
  REQUIRE_GALAXY();
  TipsyCounts c;
  const Bodies all = read_tipsy(kGalaxy.string(), &c);
  ASSERT_EQ(c.ndark, 2500);
  const Bodies a = make_initial_conditions(kGalaxy.string(), 1000, 3, Subset::Random);
  const Bodies again = make_initial_conditions(kGalaxy.string(), 1000, 3, Subset::Random);
  const Bodies other = make_initial_conditions(kGalaxy.string(), 1000, 4, Subset::Random);
  ASSERT_EQ(a.size(), 1000u);
  double m_all = 0, m_sub = 0;
  for (const auto& p : all.pos) m_all += p.w;
  for (const auto& p : a.pos) m_sub += p.w;
  EXPECT_NEAR(m_sub, m_all, 1e-12 * m_all);
  // Find each chosen body in the file: indices rise (file order), 1000 * 2500 / 20000 are dark.
  std::size_t dark = 0, at = 0, differ = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    while (at < all.size() && (all.pos[at].x != a.pos[k].x || all.pos[at].y != a.pos[k].y)) ++at;
    ASSERT_LT(at, all.size()) << "body " << k << " is not from the file, in file order";
    dark += at < static_cast<std::size_t>(c.ndark);
    ++at;
    EXPECT_EQ(a.pos[k].x, again.pos[k].x) << k;
    differ += a.pos[k].x != other.pos[k].x;
  }
  EXPECT_EQ(dark, 125u);
  EXPECT_GT(differ, 0u) << "another seed draws other bodies";
}

TEST(Tipsy, BigEndianCopyReadsTheSame) {
  REQUIRE_GALAXY();
  // Byte-swap every 4-byte field (and the 8-byte time) of the first 10 dark particles' file.
  std::vector<char> d = read_bytes(kGalaxy);
  const int ndark = 10;
  std::vector<char> out(32 + 36 * ndark);
  std::memcpy(out.data(), d.data(), out.size());
  int32_t counts[5] = {ndark, 3, 0, ndark, 0};
  std::memcpy(out.data() + 8, counts, sizeof counts);
  for (std::size_t off = 8; off < out.size(); off += 4) std::reverse(out.begin() + off, out.begin() + off + 4);
  const fs::path p = tmp("big.bin");
  write_bytes(p, out);
  TipsyCounts c;
  const Bodies big = read_tipsy(p.string(), &c);
  EXPECT_TRUE(c.big_endian);
  const Bodies little = make_initial_conditions(kGalaxy.string(), ndark, 1);
  ASSERT_EQ(big.size(), static_cast<std::size_t>(ndark));
  for (int i = 0; i < ndark; ++i) EXPECT_EQ(big.pos[i].x, little.pos[i].x) << i;
}

TEST(Tipsy, BadFiles) {
  REQUIRE_GALAXY();
  const std::vector<char> good = read_bytes(kGalaxy);
  expect_input_error([] { read_tipsy("/nonexistent/galaxy.bin"); }, "cannot open");

  const fs::path trunc = tmp("trunc.bin");
  write_bytes(trunc, std::vector<char>(good.begin(), good.end() - 10));
  expect_input_error([&] { read_tipsy(trunc.string()); }, "truncated");

  const fs::path tiny = tmp("tiny.bin");
  write_bytes(tiny, std::vector<char>(good.begin(), good.begin() + 20));
  expect_input_error([&] { read_tipsy(tiny.string()); }, "truncated");

  std::vector<char> counts = good;
  const int32_t wrong = 19999;
  std::memcpy(counts.data() + 8, &wrong, 4);
  const fs::path disagree = tmp("counts.bin");
  write_bytes(disagree, counts);
  expect_input_error([&] { read_tipsy(disagree.string()); }, "counts disagree");

  std::vector<char> nan = good;
  const float bad = NAN;
  std::memcpy(nan.data() + 32 + 36 * 5 + 8, &bad, 4);  // y of dark particle 5
  const fs::path nanf = tmp("nan.bin");
  write_bytes(nanf, nan);
  expect_input_error([&] { read_tipsy(nanf.string()); }, "body 5 has a non-finite value");

  std::vector<char> neg = good;
  const float m = -1.0f;
  std::memcpy(neg.data() + 32 + 36 * 2500 + 44 * 3, &m, 4);  // mass of star particle 3
  const fs::path negf = tmp("neg.bin");
  write_bytes(negf, neg);
  expect_input_error([&] { read_tipsy(negf.string()); }, "body 2503 has negative mass");

  const fs::path unreadable = tmp("dir.bin");
  fs::create_directories(unreadable);
  expect_input_error([&] { read_tipsy(unreadable.string()); }, "cannot read");
}

TEST(Csv, RoundTripAndErrors) {
  Bodies b;
  b.pos = {{1, 2, 3, 0.5}, {-1, 0.25, 7, 2}};
  b.vel = {{0.1, 0.2, 0.3}, {-0.5, 0, 1e-9}};
  const fs::path p = tmp("ok.csv");
  write_csv(p.string(), b);
  const Bodies r = read_csv(p.string());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.pos[1].y, 0.25);
  EXPECT_EQ(r.vel[1].z, 1e-9);
  EXPECT_EQ(r.pos[0].w, 0.5);

  auto csv = [](const std::string& name, const std::string& text) {
    const fs::path f = tmp(name);
    std::ofstream(f) << text;
    return f.string();
  };
  expect_input_error([&] { read_csv(csv("h.csv", "a,b\n1,2\n")); }, "header");
  expect_input_error([&] { read_csv(csv("s.csv", "x,y,z,vx,vy,vz,m\n1,2,3\n")); }, "line 2: expected 7");
  expect_input_error([&] { read_csv(csv("w.csv", "x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,x\n")); }, "not a number");
  expect_input_error([&] { read_csv(csv("n.csv", "x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,-1\n")); }, "negative mass");
  expect_input_error([&] { read_csv(csv("i.csv", "x,y,z,vx,vy,vz,m\ninf,2,3,4,5,6,1\n")); }, "non-finite");
  expect_input_error([&] { read_csv(csv("e.csv", "x,y,z,vx,vy,vz,m\n")); }, "no bodies");
  // A spreadsheet's CSV: a UTF-8 byte-order mark before the header, lines ending in CR LF.
  const Bodies s = read_csv(csv("bom.csv", "\xEF\xBB\xBFx,y,z,vx,vy,vz,m\r\n1,2,3,4,5,6,1\r\n"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.pos[0].z, 3);
  EXPECT_EQ(s.vel[0].x, 4);
}

TEST(InitialConditionsSpec, UnknownNameOrExtension) {
  expect_input_error([] { make_initial_conditions("galaxy", 10, 1); }, "neither a generator");
  expect_input_error([] { make_initial_conditions("plummer", 0, 1); }, "must be > 0");
}

}  // namespace
}  // namespace nbody
