// Mesh files for drawing (see mesh_file.hpp).
#include "mesh_file.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace stride::mechanism {
namespace {

std::string bytes_of(const std::string& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || !std::filesystem::is_regular_file(file, ec))
    throw std::runtime_error("mesh file \"" + file + "\": no such file");
  if (size > (std::uintmax_t(64) << 20)) throw std::runtime_error("mesh file \"" + file + "\" is larger than 64 MiB");
  std::ifstream in(file, std::ios::binary);
  std::string b(size, '\0');
  if (!in.read(b.data(), std::streamsize(size))) throw std::runtime_error("mesh file \"" + file + "\": unreadable");
  return b;
}

void add(std::vector<double>& out, const double* v, const std::string& file) {
  for (int i = 0; i < 9; ++i)
    if (!std::isfinite(v[i])) throw std::runtime_error("mesh file \"" + file + "\": a vertex is not finite");
  if (out.size() / 9 >= kMaxMeshTriangles)
    throw std::runtime_error("mesh file \"" + file + "\": more than " + std::to_string(kMaxMeshTriangles) +
                             " triangles (a drawing needs fewer: decimate it)");
  out.insert(out.end(), v, v + 9);
}

// Binary STL: an 80-byte header, a triangle count, 50 bytes per triangle (normal, 3 vertices as
// little-endian float32, an attribute word).
bool binary_stl(const std::string& b, const std::string& file, std::vector<double>& out) {
  if (b.size() < 84) return false;
  std::uint32_t n = 0;
  std::memcpy(&n, b.data() + 80, 4);
  if (b.size() != 84 + std::uint64_t(n) * 50) return false;
  for (std::uint32_t t = 0; t < n; ++t) {
    double v[9];
    for (int i = 0; i < 9; ++i) {
      float f;
      std::memcpy(&f, b.data() + 84 + std::size_t(t) * 50 + 12 + std::size_t(i) * 4, 4);
      v[i] = f;
    }
    add(out, v, file);
  }
  return true;
}

void ascii_stl(const std::string& b, const std::string& file, std::vector<double>& out) {
  std::istringstream in(b);
  std::vector<double> corner;
  for (std::string w; in >> w;) {
    if (w != "vertex") continue;
    double x, y, z;
    if (!(in >> x >> y >> z)) throw std::runtime_error("mesh file \"" + file + "\": a vertex without 3 numbers");
    corner.insert(corner.end(), {x, y, z});
    if (corner.size() == 9) add(out, corner.data(), file), corner.clear();
  }
  if (!corner.empty()) throw std::runtime_error("mesh file \"" + file + "\": a facet without 3 vertices");
}

// OBJ: "v x y z" lines and "f a b c ..." (indices from 1, negative from the end, "a/t/n" forms).
void obj(const std::string& b, const std::string& file, std::vector<double>& out) {
  std::istringstream in(b);
  std::vector<double> v;
  std::size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream l(line);
    std::string tag;
    l >> tag;
    const std::string where = "mesh file \"" + file + "\" line " + std::to_string(line_no) + ": ";
    if (tag == "v") {
      double x, y, z;
      if (!(l >> x >> y >> z)) throw std::runtime_error(where + "a vertex without 3 numbers");
      v.insert(v.end(), {x, y, z});
    } else if (tag == "f") {
      std::vector<std::size_t> idx;
      for (std::string w; l >> w;) {
        long k = 0;
        try {
          k = std::stol(w.substr(0, w.find('/')));
        } catch (...) {
          throw std::runtime_error(where + "a face index \"" + w + "\" is not a number");
        }
        const long n = long(v.size() / 3);
        const long i = k < 0 ? n + k : k - 1;
        if (k == 0 || i < 0 || i >= n) throw std::runtime_error(where + "face index " + w + " names no vertex");
        idx.push_back(std::size_t(i));
      }
      if (idx.size() < 3) throw std::runtime_error(where + "a face needs 3 vertices");
      for (std::size_t j = 1; j + 1 < idx.size(); ++j) {
        double t[9];
        for (int c = 0; c < 3; ++c) {
          t[c] = v[3 * idx[0] + std::size_t(c)];
          t[3 + c] = v[3 * idx[j] + std::size_t(c)];
          t[6 + c] = v[3 * idx[j + 1] + std::size_t(c)];
        }
        add(out, t, file);
      }
    }
  }
}

}  // namespace

std::vector<double> read_mesh_file(const std::string& file, double scale) {
  const std::string b = bytes_of(file);
  std::vector<double> out;
  const std::string ext = std::filesystem::path(file).extension().string();
  if (ext == ".stl" || ext == ".STL") {
    if (!binary_stl(b, file, out)) ascii_stl(b, file, out);
  } else if (ext == ".obj" || ext == ".OBJ") {
    obj(b, file, out);
  } else {
    throw std::runtime_error("mesh file \"" + file + "\": expected an .stl or .obj file");
  }
  if (out.empty()) throw std::runtime_error("mesh file \"" + file + "\": no triangles");
  for (double& x : out) x *= scale;
  return out;
}

}  // namespace stride::mechanism
