# CPACK_PRE_BUILD_SCRIPTS: CPACK_STRIP_FILES strips executables and shared
# libraries only; strip the debug information from the static library too
# (as Debian's dh_strip does), or it is most of the package.
find_program(AUTOCAT_STRIP NAMES strip REQUIRED)
file(GLOB_RECURSE archives "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.a")
foreach(archive IN LISTS archives)
  execute_process(COMMAND "${AUTOCAT_STRIP}" --strip-debug "${archive}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
