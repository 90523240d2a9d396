# ctest entries for the package: install + out-of-tree app (CMake and
# pkg-config), and the Python module's unittest suite.
set(AUTOCAT_SANITIZER_LINK_FLAGS "")
if(AUTOCAT_SANITIZE)
  set(AUTOCAT_SANITIZER_LINK_FLAGS "-fsanitize=address,undefined")
endif()
add_test(NAME PackageInstall
         COMMAND bash "${PROJECT_SOURCE_DIR}/tests/install/install_test.sh"
                 "${PROJECT_BINARY_DIR}" "${PROJECT_SOURCE_DIR}" "${AUTOCAT_SANITIZER_LINK_FLAGS}")
set_tests_properties(PackageInstall PROPERTIES TIMEOUT 600)

if(AUTOCAT_BUILD_PYTHON)
  set(python_environment
    "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
    "AUTOCAT_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "AUTOCAT_CLI=$<TARGET_FILE:autocat>")
  if(AUTOCAT_SANITIZE)
    # The interpreter is not instrumented: load the runtime first, and leave
    # CPython's deliberate leaks at exit alone.
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libasan.so
                    OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND python_environment "LD_PRELOAD=${asan_runtime}" "ASAN_OPTIONS=detect_leaks=0")
  endif()
  add_test(NAME PythonModule
           COMMAND "${AUTOCAT_PYTHON_EXECUTABLE}"
                   "${PROJECT_SOURCE_DIR}/tests/python/test_autocat.py" -v)
  set_tests_properties(PythonModule PROPERTIES ENVIRONMENT "${python_environment}" TIMEOUT 300)
endif()
