# cmake --install: libencrt.so and libencrt.a, the public headers, the encrt CLI, a CMake package
# (find_package(encrt): encrt::encrt is the shared library, encrt::encrt_static the static one)
# and encrt.pc for pkg-config. The converter, npy and the tests stay in the build tree.
include(CMakePackageConfigHelpers)

set(ENCRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/encrt)

install(TARGETS encrt_shared EXPORT encrt-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS encrt_static EXPORT encrt-static-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/encrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(TARGETS encrt_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Two export sets: the config loads the static library's only when its dependencies are found,
# so an app that links the shared library does not need XNNPACK's development files.
install(EXPORT encrt-targets NAMESPACE encrt:: DESTINATION ${ENCRT_CMAKE_DIR}
  FILE encrt-targets.cmake)
install(EXPORT encrt-static-targets NAMESPACE encrt:: DESTINATION ${ENCRT_CMAKE_DIR}
  FILE encrt-static-targets.cmake)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/encrt-config.cmake.in
  ${PROJECT_BINARY_DIR}/encrt-config.cmake INSTALL_DESTINATION ${ENCRT_CMAKE_DIR})
# The SONAME carries the major version (libencrt.so.0), and so does the package's compatibility.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/encrt-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/encrt-config.cmake ${PROJECT_BINARY_DIR}/encrt-config-version.cmake
  DESTINATION ${ENCRT_CMAKE_DIR})

# encrt.pc: relocatable (prefix from the .pc file's own place), so `cmake --install --prefix`
# anywhere gives a working file. Libs.private is what libencrt.a needs beyond itself: a C
# program linking it statically also needs the C++ runtime and libm.
set(ENCRT_PC_LIBS_PRIVATE "-lpthread")
if(ANDROID)
  # Bionic's libc holds the pthread functions; there is no libpthread to link.
  set(ENCRT_PC_LIBS_PRIVATE "")
endif()
if(ENCRT_HAVE_XNNPACK)
  string(APPEND ENCRT_PC_LIBS_PRIVATE " -lXNNPACK -lpthreadpool")
endif()
if(ENCRT_HAVE_CUDA)
  string(APPEND ENCRT_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
string(APPEND ENCRT_PC_LIBS_PRIVATE " -lstdc++ -lm")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ENCRT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH ENCRT_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" ENCRT_PC_UP "${ENCRT_PC_UP}")
  set(ENCRT_PC_PREFIX "\${pcfiledir}/${ENCRT_PC_UP}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/encrt.pc.in ${PROJECT_BINARY_DIR}/encrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/encrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
