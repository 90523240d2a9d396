# The API reference (`doc`: Doxygen over the installed public headers) and
# its test, DoxygenTest (no Doxygen warning, an undocumented public name
# included).
find_package(Doxygen QUIET)
set(AUTOCAT_DOXYGEN_OUTPUT "${PROJECT_BINARY_DIR}/doc")
set(AUTOCAT_DOXYGEN_WARNINGS "${PROJECT_BINARY_DIR}/doc/warnings.log")
find_program(AUTOCAT_DOXYGEN_PYTHON NAMES python3 REQUIRED)
configure_file("${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in"
               "${PROJECT_BINARY_DIR}/doc/Doxyfile" @ONLY)
if(DOXYGEN_FOUND)
  add_custom_target(doc
    COMMAND "${CMAKE_COMMAND}" -E remove -f "${AUTOCAT_DOXYGEN_WARNINGS}"
    COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/doc/Doxyfile"
    COMMAND "${CMAKE_COMMAND}" -E echo "autocat: API reference in ${AUTOCAT_DOXYGEN_OUTPUT}/html/index.html"
    WORKING_DIRECTORY "${PROJECT_BINARY_DIR}/doc"
    COMMENT "Doxygen: the API reference of the public headers"
    VERBATIM)
endif()

if(AUTOCAT_BUILD_TESTS)
  # Doxygen is a test dependency (scripts/install-deps.sh installs it): a
  # missing doxygen fails the test, naming the package, rather than skipping.
  if(DOXYGEN_FOUND)
    set(doxygen_command "${DOXYGEN_EXECUTABLE}")
  else()
    set(doxygen_command "")
  endif()
  add_test(NAME DoxygenTest
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/doxygen_test.sh" "${doxygen_command}"
            "${PROJECT_BINARY_DIR}/doc/Doxyfile" "${AUTOCAT_DOXYGEN_WARNINGS}")
  set_tests_properties(DoxygenTest PROPERTIES TIMEOUT 120)

endif()
