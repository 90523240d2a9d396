# The API reference (`doc`: Doxygen over the installed public headers) and
# the documentation's tests: DoxygenTest (no Doxygen warning, an
# undocumented public name included) and DocsTest (tests/docs_test.py: links,
# the tested examples of README.md and docs/, help(autocat)).
find_package(Doxygen QUIET)
set(AUTOCAT_DOXYGEN_OUTPUT "${PROJECT_BINARY_DIR}/doc")
set(AUTOCAT_DOXYGEN_WARNINGS "${PROJECT_BINARY_DIR}/doc/warnings.log")
# The filter that marks the headers' comments for Doxygen runs on python3.
find_program(AUTOCAT_DOXYGEN_PYTHON NAMES python3 HINTS /usr/bin)
configure_file("${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in"
               "${PROJECT_BINARY_DIR}/doc/Doxyfile" @ONLY)
if(DOXYGEN_FOUND AND AUTOCAT_DOXYGEN_PYTHON)
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
  if(DOXYGEN_FOUND AND AUTOCAT_DOXYGEN_PYTHON)
    set(doxygen_command "${DOXYGEN_EXECUTABLE}")
  else()
    set(doxygen_command "")
  endif()
  add_test(NAME DoxygenTest
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/doxygen_test.sh" "${doxygen_command}"
            "${PROJECT_BINARY_DIR}/doc/Doxyfile" "${AUTOCAT_DOXYGEN_WARNINGS}")
  set_tests_properties(DoxygenTest PROPERTIES TIMEOUT 120)

  if(AUTOCAT_BUILD_PYTHON AND AUTOCAT_BUILD_EXAMPLES)
    add_test(NAME DocsTest
      COMMAND "${AUTOCAT_PYTHON_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/docs_test.py"
              "${PROJECT_SOURCE_DIR}" "$<TARGET_FILE:autocat>" "$<TARGET_FILE:search_app>"
              "${PROJECT_BINARY_DIR}/python" "${CMAKE_CURRENT_BINARY_DIR}/tests/docs")
    set_tests_properties(DocsTest PROPERTIES TIMEOUT 120
      ENVIRONMENT "${AUTOCAT_PYTHON_SANITIZER_ENVIRONMENT}")
  endif()
endif()
