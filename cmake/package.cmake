# The installed package: `cmake --install build --prefix P` puts the models' static libraries,
# their headers and xysim under P, and find_package(xingyun) in another project gives the targets
# xingyun::kernel, phy, link, switch, nic, otn, lingyun, twins, tlm, scenarios, tb and xysim (xy::xysim_main).
# xingyun::tb links xingyun::scenarios whole (tb/CMakeLists.txt): the built-in scenarios register
# themselves in every program that links it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Headers under include/xingyun-sdk/ keep the tree they have here, so that the same include lines
# ("kernel/...", "hw/...", "rtl/...", "sys/...", "tlm/...", "tb/...") work against the installed package.
set(XY_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/xingyun-sdk)
set(XY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/xingyun)
file(GLOB_RECURSE xy_headers RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kernel/*.hpp ${PROJECT_SOURCE_DIR}/hw/*.hpp ${PROJECT_SOURCE_DIR}/sys/*.hpp
     ${PROJECT_SOURCE_DIR}/tlm/*.hpp ${PROJECT_SOURCE_DIR}/tb/*.hpp
     ${PROJECT_SOURCE_DIR}/rtl/*.hpp)
foreach(header ${xy_headers})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${XY_INSTALL_INCLUDEDIR}/${dir})
endforeach()

# xy_fstapi is no API, but xy_kernel links it: it goes in the export set too. The blocks are every
# library of a folder under hw/, so that a new block is exported without a line here.
set(xy_exported kernel fstapi lingyun twins tlm scenarios tb xysim)
get_property(xy_block_dirs DIRECTORY ${PROJECT_SOURCE_DIR}/hw PROPERTY SUBDIRECTORIES)
foreach(dir ${xy_block_dirs})
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY" AND target MATCHES "^xy_(.+)$")
      list(APPEND xy_exported ${CMAKE_MATCH_1})
    endif()
  endforeach()
endforeach()
foreach(name ${xy_exported})
  set_target_properties(xy_${name} PROPERTIES EXPORT_NAME ${name})
  list(APPEND xy_exported_targets xy_${name})
endforeach()
install(TARGETS ${xy_exported_targets} EXPORT xingyunTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${XY_INSTALL_INCLUDEDIR})
install(TARGETS xysim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT xingyunTargets NAMESPACE xingyun:: DESTINATION ${XY_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/xingyunConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/xingyunConfig.cmake INSTALL_DESTINATION ${XY_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/xingyunConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/xingyunConfig.cmake ${PROJECT_BINARY_DIR}/xingyunConfigVersion.cmake
        DESTINATION ${XY_INSTALL_CMAKEDIR})
