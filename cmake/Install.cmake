# Installation: `cmake --install build --prefix P` gives
#   P/bin/tilejit, P/lib/libtilejit.so, P/include/{acl,aclnn,aclnnop}/ (the
#   aclnn-compatible C API), P/include/tilejit/{tilejit,args}.h (the C++
#   API), P/lib/cmake/tilejit/ (find_package(tilejit) -> tilejit::tilejit) and
#   P/lib/pkgconfig/tilejit.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tilejit-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tilejit EXPORT tilejitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# include/ holds the public headers and nothing else: the C API's and the
# C++ API's, which includes only its own (<tilejit/args.h>). No header of the
# rooms is installed (the layering-installed-headers test checks it).
install(DIRECTORY ${TILEJIT_SOURCE_ROOT}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT tilejitTargets NAMESPACE tilejit::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilejit)
configure_package_config_file(${TILEJIT_SOURCE_ROOT}/cmake/tilejitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tilejitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilejit)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tilejitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tilejitConfig.cmake
  ${CMAKE_BINARY_DIR}/tilejitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilejit)

configure_file(${TILEJIT_SOURCE_ROOT}/cmake/tilejit.pc.in ${CMAKE_BINARY_DIR}/tilejit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tilejit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
