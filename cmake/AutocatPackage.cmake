# `cpack` in a build directory: one Debian package, autocat_VERSION_ARCH.deb,
# of everything install() puts in place (library, headers, CMake package,
# autocat.pc, the CLI with its man page and bash completion, the Python
# module). Configure it with -DCMAKE_INSTALL_PREFIX=/usr (Debian's multiarch
# libdir, and the Python module in /usr/lib/python3/dist-packages where
# /usr/bin/python3 finds it) and -DAUTOCAT_BUILD_TESTS=OFF (no test seam).
# scripts/package-smoke.sh builds, installs and uses it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME autocat)
set(CPACK_PACKAGE_CONTACT "autocat developers <dev@autocat.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "text categorization built into a Xapian search index")
set(CPACK_PACKAGE_DESCRIPTION
    "autocat trains on labelled examples and gives each indexed document its categories as Xapian terms, so searches filter by category and show facet counts. This package holds the autocat tool, libautocat (shared and static) with its headers, CMake package and pkg-config file, and the Python module.")
# The package installs where the build was configured to install.
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/cmake/debian/strip_static.cmake")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION text)
# Run-time dependencies from the ELF files (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The shlibs file for libautocat.so.0.MINOR (SONAME), written here rather
# than by CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS, which takes the Python
# extension for a library without a SONAME and warns.
file(WRITE "${PROJECT_BINARY_DIR}/debian/shlibs"
     "libautocat ${AUTOCAT_SOVERSION} autocat (>= ${PROJECT_VERSION})\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_BINARY_DIR}/debian/shlibs")
if(AUTOCAT_BUILD_PYTHON)
  # The extension is built for one Python minor version, and its package
  # imports python3-xapian; prerm removes the bytecode Python leaves behind.
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" python_version "${AUTOCAT_PYTHON_VERSION}")
  math(EXPR python_next_minor "${CMAKE_MATCH_2} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${python_version}), \
python3 (<< ${CMAKE_MATCH_1}.${python_next_minor}), python3-xapian")
  list(APPEND CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/cmake/debian/prerm")
endif()
# What building an application against the headers needs.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libxapian-dev, libicu-dev, libboost-serialization-dev, zlib1g-dev, cmake | pkg-config")
include(CPack)
