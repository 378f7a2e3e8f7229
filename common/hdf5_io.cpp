#include "hdf5_io.hpp"

#include "error.hpp"
#include "io.hpp"

#ifdef NBODY_HAVE_HDF5
#include <hdf5.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "output.hpp"
#endif

namespace nbody {

#ifndef NBODY_HAVE_HDF5

bool have_hdf5() { return false; }
namespace {
[[noreturn]] void no_hdf5() {
  throw Unavailable("this nbody was built without HDF5 (scripts/install-deps.sh installs libhdf5-dev; "
                    "then rebuild)");
}
}  // namespace
void write_hdf5_snapshot(const std::string&, const Bodies&, double, const Hdf5Attributes&) { no_hdf5(); }
Hdf5Snapshot parse_hdf5(std::string_view, const std::string&) { no_hdf5(); }
Hdf5Snapshot parse_hdf5_isolated(std::string_view, const std::string&, std::chrono::milliseconds) { no_hdf5(); }
Hdf5Snapshot read_hdf5(const std::string&) { no_hdf5(); }
std::size_t count_hdf5_bodies(const std::string&) { no_hdf5(); }

#else

bool have_hdf5() { return true; }

namespace {

// One HDF5 identifier, closed by the function that matches its kind.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// The library prints its error stack by default; we say what went wrong ourselves.
void quiet() {
  static const bool once = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)once;
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw OutputError("HDF5: " + what + " failed");
}

Id must(hid_t id, herr_t (*close)(hid_t), const std::string& what) {
  if (id < 0) throw OutputError("HDF5: " + what + " failed");
  return Id(id, close);
}

template <typename T>
void attribute(hid_t where, const char* name, hid_t type, const T* values, hsize_t count) {
  const Id space = count == 1 ? must(H5Screate(H5S_SCALAR), H5Sclose, "a scalar space")
                              : must(H5Screate_simple(1, &count, nullptr), H5Sclose, "an array space");
  const Id a = must(H5Acreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                    std::string("attribute ") + name);
  check(H5Awrite(a.get(), type, values), std::string("writing attribute ") + name);
}

void string_attribute(hid_t where, const std::string& name, const std::string& value) {
  const Id type = must(H5Tcopy(H5T_C_S1), H5Tclose, "a string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "a string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "a string type");
  const char* p = value.c_str();
  attribute(where, name.c_str(), type.get(), &p, 1);
}

void dataset(hid_t group, const char* name, hid_t type, const void* data, hsize_t rows, hsize_t cols) {
  const hsize_t dims[2] = {rows, cols};
  const Id space = must(H5Screate_simple(cols > 1 ? 2 : 1, dims, nullptr), H5Sclose, "a data space");
  const Id d = must(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                    H5Dclose, std::string("dataset ") + name);
  check(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), std::string("writing ") + name);
}

}  // namespace

void write_hdf5_snapshot(const std::string& path, const Bodies& b, double time, const Hdf5Attributes& ours) {
  quiet();
  const std::size_t n = b.size();
  std::vector<char> image;
  {
    // The core driver builds the file in memory (no backing store); its image is then written
    // as one Output, like every other output (temporary file, fsync, rename).
    const Id fapl = must(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "a file access list");
    check(H5Pset_fapl_core(fapl.get(), 1 << 20, 0), "the core driver");
    const Id file = must(H5Fcreate("nbody-snapshot.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                         "creating the snapshot in memory");
    {
      const Id header = must(H5Gcreate2(file.get(), "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                             H5Gclose, "group Header");
      const std::array<long long, 6> counts{0, static_cast<long long>(n), 0, 0, 0, 0};
      const std::array<unsigned, 6> high{};
      const std::array<double, 6> masses{};
      const double zero = 0;
      const int one = 1;
      attribute(header.get(), "NumPart_ThisFile", H5T_NATIVE_LLONG, counts.data(), 6);
      attribute(header.get(), "NumPart_Total", H5T_NATIVE_LLONG, counts.data(), 6);
      attribute(header.get(), "NumPart_Total_HighWord", H5T_NATIVE_UINT, high.data(), 6);
      attribute(header.get(), "MassTable", H5T_NATIVE_DOUBLE, masses.data(), 6);
      attribute(header.get(), "Time", H5T_NATIVE_DOUBLE, &time, 1);
      attribute(header.get(), "Redshift", H5T_NATIVE_DOUBLE, &zero, 1);
      attribute(header.get(), "BoxSize", H5T_NATIVE_DOUBLE, &zero, 1);
      attribute(header.get(), "NumFilesPerSnapshot", H5T_NATIVE_INT, &one, 1);
    }
    {
      const Id part = must(H5Gcreate2(file.get(), "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                           H5Gclose, "group PartType1");
      std::vector<double> xyz(3 * n), m(n);
      for (std::size_t i = 0; i < n; ++i) {
        xyz[3 * i] = b.pos[i].x, xyz[3 * i + 1] = b.pos[i].y, xyz[3 * i + 2] = b.pos[i].z;
        m[i] = b.pos[i].w;
      }
      dataset(part.get(), "Coordinates", H5T_NATIVE_DOUBLE, xyz.data(), n, 3);
      for (std::size_t i = 0; i < n; ++i)
        xyz[3 * i] = b.vel[i].x, xyz[3 * i + 1] = b.vel[i].y, xyz[3 * i + 2] = b.vel[i].z;
      dataset(part.get(), "Velocities", H5T_NATIVE_DOUBLE, xyz.data(), n, 3);
      dataset(part.get(), "Masses", H5T_NATIVE_DOUBLE, m.data(), n, 1);
      std::vector<unsigned long long> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = i;
      dataset(part.get(), "ParticleIDs", H5T_NATIVE_ULLONG, ids.data(), n, 1);
    }
    {
      const Id group = must(H5Gcreate2(file.get(), "nbody", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            H5Gclose, "group nbody");
      for (const auto& [key, value] : ours) {
        if (const auto* s = std::get_if<std::string>(&value))
          string_attribute(group.get(), key, *s);
        else if (const auto* d = std::get_if<double>(&value))
          attribute(group.get(), key.c_str(), H5T_NATIVE_DOUBLE, d, 1);
        else
          attribute(group.get(), key.c_str(), H5T_NATIVE_LLONG, &std::get<long long>(value), 1);
      }
    }
    check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flushing the snapshot");
    const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
    if (size <= 0) throw OutputError("HDF5: the snapshot's image is empty");
    image.resize(static_cast<std::size_t>(size));
    if (H5Fget_file_image(file.get(), image.data(), image.size()) != size)
      throw OutputError("HDF5: copying the snapshot's image failed");
  }
  write_output(path, std::string_view(image.data(), image.size()));
}

namespace {

struct Reader {
  std::string name;
  std::size_t file_bytes = 0;

  InputError fail(const std::string& why) const { return InputError("'" + name + "': " + why); }

  bool exists(hid_t where, const std::string& path) const {
    return H5Lexists(where, path.c_str(), H5P_DEFAULT) > 0 &&
           H5Oexists_by_name(where, path.c_str(), H5P_DEFAULT) > 0;
  }

  // A dataset's shape: rows x cols (cols 1 for a vector), checked against what the file's size can
  // hold before anything is allocated.
  std::pair<hsize_t, hsize_t> shape(hid_t d, const std::string& what, hsize_t cols) const {
    const Id space(H5Dget_space(d), H5Sclose);
    if (!space.ok()) throw fail(what + ": unreadable data space");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    hsize_t dims[2] = {0, 0};
    if (rank != (cols > 1 ? 2 : 1) || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != rank)
      throw fail(what + ": expected a " + (cols > 1 ? "N x 3 array" : "vector of N values"));
    if (cols > 1 && dims[1] != cols) throw fail(what + ": expected N x 3, got N x " + std::to_string(dims[1]));
    if (dims[0] == 0 || dims[0] > 2147483647u)
      throw fail(what + ": " + std::to_string(dims[0]) + " rows; expected 1..2147483647");
    const Id type(H5Dget_type(d), H5Tclose);
    const std::size_t element = type.ok() ? H5Tget_size(type.get()) : 0;
    if (element == 0 || element > 8 || H5Tget_class(type.get()) != H5T_FLOAT)
      throw fail(what + ": expected floating-point values");
    // Unfiltered data must lie in the file; deflate expands at most about 1032:1.
    const Id dcpl(H5Dget_create_plist(d), H5Pclose);
    const int filters = dcpl.ok() ? H5Pget_nfilters(dcpl.get()) : -1;
    if (filters < 0) throw fail(what + ": unreadable storage properties");
    const double bytes = static_cast<double>(dims[0]) * static_cast<double>(cols) * static_cast<double>(element);
    const double room = static_cast<double>(file_bytes) * (filters > 0 ? 1100.0 : 1.0);
    if (bytes > room)
      throw fail(what + " claims " + std::to_string(dims[0]) + " rows (" + std::to_string(bytes) +
                 " bytes), more than a " + std::to_string(file_bytes) + "-byte file can hold");
    return {dims[0], cols};
  }

  std::vector<double> doubles(hid_t group, const char* dataset, const std::string& where, hsize_t cols,
                              hsize_t rows) const {
    const std::string what = where + "/" + dataset;
    const Id d(H5Dopen2(group, dataset, H5P_DEFAULT), H5Dclose);
    if (!d.ok()) throw fail("cannot open " + what);
    const auto [r, c] = shape(d.get(), what, cols);
    if (rows && r != rows)
      throw fail(what + " has " + std::to_string(r) + " rows; Coordinates has " + std::to_string(rows));
    std::vector<double> v(static_cast<std::size_t>(r * c));
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
      throw fail("cannot read " + what + " (corrupt?)");
    return v;
  }

  bool attribute_doubles(hid_t where, const char* attr, double* out, hsize_t count) const {
    if (H5Aexists(where, attr) <= 0) return false;
    const Id a(H5Aopen(where, attr, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) return false;
    const Id space(H5Aget_space(a.get()), H5Sclose);
    const Id type(H5Aget_type(a.get()), H5Tclose);
    if (!space.ok() || !type.ok() || H5Sget_simple_extent_npoints(space.get()) != static_cast<hssize_t>(count))
      return false;
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) return false;
    return H5Aread(a.get(), H5T_NATIVE_DOUBLE, out) >= 0;
  }
};

herr_t collect(hid_t group, const char* attr, const H5A_info_t*, void* data) {
  auto& out = *static_cast<Hdf5Attributes*>(data);
  const Id a(H5Aopen(group, attr, H5P_DEFAULT), H5Aclose);
  if (!a.ok()) return 0;
  const Id space(H5Aget_space(a.get()), H5Sclose);
  const Id type(H5Aget_type(a.get()), H5Tclose);
  if (!space.ok() || !type.ok() || H5Sget_simple_extent_npoints(space.get()) != 1) return 0;
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT: {
      double d = 0;
      if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &d) >= 0) out.emplace_back(attr, d);
      break;
    }
    case H5T_INTEGER: {
      long long v = 0;
      if (H5Aread(a.get(), H5T_NATIVE_LLONG, &v) >= 0) out.emplace_back(attr, v);
      break;
    }
    case H5T_STRING: {
      const htri_t variable = H5Tis_variable_str(type.get());
      if (variable > 0) {
        const Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
        if (!mem.ok() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
            H5Tset_cset(mem.get(), H5Tget_cset(type.get())) < 0)
          break;
        char* s = nullptr;
        if (H5Aread(a.get(), mem.get(), &s) >= 0 && s) {
          out.emplace_back(attr, std::string(s));
          H5free_memory(s);
        }
      } else if (variable == 0) {
        const std::size_t size = H5Tget_size(type.get());
        if (size == 0 || size > (1u << 20)) break;
        std::string s(size, '\0');
        if (H5Aread(a.get(), type.get(), s.data()) >= 0) out.emplace_back(attr, std::string(s.c_str()));
      }
      break;
    }
    default:
      break;
  }
  return 0;
}

// The signature is at 0, or after a user block of 512, 1024, 2048, ... bytes.
bool has_signature(std::string_view bytes) {
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  for (std::size_t at = 0; at + 8 <= bytes.size(); at = at == 0 ? 512 : 2 * at)
    if (std::memcmp(bytes.data() + at, kSignature, 8) == 0) return true;
  return false;
}

// Header/MassTable and Header/Time where the file has them; returns whether it had the table.
bool read_header(const Reader& r, hid_t file, double (&mass_table)[6], double& time) {
  if (!r.exists(file, "Header")) return false;
  const Id header(H5Gopen2(file, "Header", H5P_DEFAULT), H5Gclose);
  if (!header.ok()) return false;
  const bool have_table = r.attribute_doubles(header.get(), "MassTable", mass_table, 6);
  r.attribute_doubles(header.get(), "Time", &time, 1);
  return have_table;
}

// The group's Masses, else the Header's MassTable[k] for each of its rows.
std::vector<double> masses(const Reader& r, hid_t group, const std::string& g, int k, hsize_t rows,
                           const double* mass_table) {
  if (r.exists(group, "Masses")) return r.doubles(group, "Masses", g, 1, rows);
  if (mass_table && mass_table[k] > 0) return std::vector<double>(rows, mass_table[k]);
  throw r.fail(g + " has no Masses and the Header's MassTable[" + std::to_string(k) + "] is not > 0");
}

// Appends group PartType<k>'s bodies to s, if the file has it with Coordinates; returns whether it
// did. mass_table: the Header's, or null.
bool read_part_type(const Reader& r, hid_t file, int k, const double* mass_table, Hdf5Snapshot& s) {
  const std::string g = "PartType" + std::to_string(k);
  if (!r.exists(file, g) || !r.exists(file, g + "/Coordinates")) return false;
  const Id group(H5Gopen2(file, g.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.ok()) throw r.fail("cannot open group " + g);
  const std::vector<double> x = r.doubles(group.get(), "Coordinates", g, 3, 0);
  const hsize_t rows = x.size() / 3;
  if (s.bodies.size() + rows > 2147483647u) throw r.fail("more than 2147483647 bodies");
  if (!r.exists(group.get(), "Velocities")) throw r.fail(g + " has Coordinates but no Velocities");
  const std::vector<double> v = r.doubles(group.get(), "Velocities", g, 3, rows);
  const std::vector<double> m = masses(r, group.get(), g, k, rows, mass_table);
  for (hsize_t i = 0; i < rows; ++i) {
    s.bodies.pos.push_back({x[3 * i], x[3 * i + 1], x[3 * i + 2], m[i]});
    s.bodies.vel.push_back({v[3 * i], v[3 * i + 1], v[3 * i + 2]});
  }
  s.groups.push_back(static_cast<std::size_t>(rows));
  return true;
}

}  // namespace

Hdf5Snapshot parse_hdf5(std::string_view bytes, const std::string& name) {
  quiet();
  Reader r{name, bytes.size()};
  if (!has_signature(bytes)) throw r.fail("not an HDF5 file (no HDF5 signature at its start or after a user block)");
  // The core driver opens the image in memory (a copy: H5LTopen_file_image's no-copy mode leaks
  // its callback data in HDF5 1.10).
  const Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0)
    throw r.fail("HDF5 cannot take the file's image");
  // A name of its own: the library finds an open file by name, and one process reads many files.
  static std::atomic<unsigned long long> images{0};
  const std::string image = "nbody-input-" + std::to_string(++images) + ".h5";
  const Id file(H5Fopen(image.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) throw r.fail("not a readable HDF5 file");

  Hdf5Snapshot s;
  double mass_table[6] = {};
  const bool have_table = read_header(r, file.get(), mass_table, s.time);
  int groups = 0;
  for (int k = 0; k < 6; ++k)
    if (read_part_type(r, file.get(), k, have_table ? mass_table : nullptr, s)) ++groups;
  if (groups == 0) throw r.fail("no PartType0..5 group with Coordinates: not a GADGET-style snapshot");
  if (r.exists(file.get(), "nbody")) {
    const Id group(H5Gopen2(file.get(), "nbody", H5P_DEFAULT), H5Gclose);
    hsize_t at = 0;
    if (group.ok()) H5Aiterate2(group.get(), H5_INDEX_NAME, H5_ITER_INC, &at, collect, &s.ours);
  }
  validate_bodies(s.bodies, "'" + name + "'");
  return s;
}

#endif

}  // namespace nbody
