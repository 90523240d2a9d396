# install(): public headers, libautocat (shared and static), the CLI with its
# man page and bash completion, the CMake package (find_package(autocat)
# -> autocat::autocat, autocat::autocat_static) and autocat.pc.
include(CMakePackageConfigHelpers)

set(AUTOCAT_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/autocat")

# The vocabulary headers (classify/include) and the plugin's install together.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/classify/include/autocat"
                  "${PROJECT_SOURCE_DIR}/plugin/include/autocat"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/include/autocat/version.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/autocat")
install(TARGETS autocat_shared autocat_static EXPORT autocatTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" NAMELINK_COMPONENT Development
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS autocat RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
if(AUTOCAT_CRASH_POINTS)
  # A test build: its library and CLI obey AUTOCAT_CRASH_AT (see CMakeLists.txt).
  install(CODE "message(WARNING \"autocat: this build obeys AUTOCAT_CRASH_AT, a test seam \
(AUTOCAT_CRASH_POINTS=ON, the default with tests); for a build to install, configure with \
-DAUTOCAT_BUILD_TESTS=OFF\")")
endif()

install(EXPORT autocatTargets NAMESPACE autocat:: DESTINATION "${AUTOCAT_CMAKE_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/autocatConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/autocatConfig.cmake" INSTALL_DESTINATION "${AUTOCAT_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/autocatConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/autocatConfig.cmake"
              "${PROJECT_BINARY_DIR}/autocatConfigVersion.cmake"
        DESTINATION "${AUTOCAT_CMAKE_DIR}")

# pkg-config: `pkg-config --cflags --libs autocat` (add --static for
# libautocat.a). Relocatable: the prefix is found from the .pc file's place,
# so `cmake --install --prefix P` works for any P.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(AUTOCAT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(AUTOCAT_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(AUTOCAT_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(AUTOCAT_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file("${PROJECT_SOURCE_DIR}/cmake/autocat.pc.in" "${PROJECT_BINARY_DIR}/autocat.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/autocat.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
