#pragma once
namespace xy {
inline constexpr const char* kVersion = XY_VERSION;  // set by CMake from project(VERSION)
// The layout of results.json and run.json (docs/results.md): raised when a key is renamed, moved
// or removed, or changes meaning; adding a key does not raise it.
inline constexpr int kResultsSchemaVersion = 1;
// The git commit the binary was built from, "-dirty" when the tree had changes; "unknown" outside git.
const char* git_commit();
}  // namespace xy
