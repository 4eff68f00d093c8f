// A body's drawing from a mesh file (shape type "mesh"): STL, binary or ASCII, or Wavefront OBJ
// (vertices and faces; polygons as triangle fans), as a flat list of triangles, 9 numbers each,
// in the file's units times `scale`. Drawing only: the dynamics take the body's mass and
// inertia as given. Throws std::runtime_error naming the file and what is wrong with it.
#pragma once

#include <string>
#include <vector>

namespace stride::mechanism {

inline constexpr std::size_t kMaxMeshTriangles = 100000;  // per body: the report holds them all

std::vector<double> read_mesh_file(const std::string& file, double scale);

}  // namespace stride::mechanism
