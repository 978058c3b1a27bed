#pragma once
namespace xy {
inline constexpr const char* kVersion = XY_VERSION;  // set by CMake from project(VERSION)
}  // namespace xy
