# The library applications link: one `autocat` built from the classify/ and
# plugin/ objects, as a versioned shared library (libautocat.so.MAJOR) and a
# static one (libautocat.a), both position-independent. Consumers see only
# the public headers (classify/include/autocat, plugin/include/autocat and the generated
# version.h).

configure_file("${PROJECT_SOURCE_DIR}/cmake/version.h.in"
               "${PROJECT_BINARY_DIR}/include/autocat/version.h" @ONLY)

set(AUTOCAT_PUBLIC_INCLUDE_DIRS
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/classify/include>"
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/plugin/include>"
  "$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
# The public headers include <xapian.h>; ICU, Boost and zlib stay private.
set(AUTOCAT_PRIVATE_DEPENDENCIES ICU::uc ICU::i18n Boost::serialization ZLIB::ZLIB)

# Only the public API (AUTOCAT_EXPORT, autocat/export.h) leaves the shared
# library; the engine's internal:: names stay hidden. The CLI, tests and the
# Python module link the static library, where visibility does not matter.
foreach(objects autocat_classify autocat_plugin)
  set_target_properties(${objects} PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endforeach()

add_library(autocat_shared SHARED
  $<TARGET_OBJECTS:autocat_classify> $<TARGET_OBJECTS:autocat_plugin>)
add_library(autocat_static STATIC
  $<TARGET_OBJECTS:autocat_classify> $<TARGET_OBJECTS:autocat_plugin>)
foreach(library autocat_shared autocat_static)
  target_include_directories(${library} PUBLIC ${AUTOCAT_PUBLIC_INCLUDE_DIRS})
  target_link_libraries(${library}
    PUBLIC Xapian::Xapian
    PRIVATE ${AUTOCAT_PRIVATE_DEPENDENCIES} $<BUILD_INTERFACE:autocat_sanitize>)
  target_compile_features(${library} INTERFACE cxx_std_17)
endforeach()
# SONAME libautocat.so.MAJOR; before 1.0 every minor version may break the
# ABI, so it is libautocat.so.0.MINOR.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(AUTOCAT_SOVERSION "0.${PROJECT_VERSION_MINOR}")
else()
  set(AUTOCAT_SOVERSION "${PROJECT_VERSION_MAJOR}")
endif()
# The version script keeps the template instances compiled into the library
# (std::, boost::) local too, so the export table is autocat::'s alone.
target_link_options(autocat_shared PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/libautocat.map")
set_target_properties(autocat_shared PROPERTIES
  LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/libautocat.map"
  OUTPUT_NAME autocat EXPORT_NAME autocat
  VERSION ${PROJECT_VERSION} SOVERSION ${AUTOCAT_SOVERSION})
set_target_properties(autocat_static PROPERTIES
  OUTPUT_NAME autocat EXPORT_NAME autocat_static)
# Same names as the installed package, for examples built in this tree.
add_library(autocat::autocat ALIAS autocat_shared)
add_library(autocat::autocat_static ALIAS autocat_static)
