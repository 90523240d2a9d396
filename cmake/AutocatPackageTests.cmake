# ctest entries for the package: install + out-of-tree app (CMake and
# pkg-config), and the Python module's unittest suite.
set(AUTOCAT_SANITIZER_LINK_FLAGS "")
# What /usr/bin/python3 (not instrumented) needs to load a sanitized module:
# the ASan runtime first and libstdc++ (for its __cxa_throw interceptor), and
# CPython's deliberate leaks at exit left alone.
set(AUTOCAT_PYTHON_SANITIZER_ENVIRONMENT "")
if(AUTOCAT_SANITIZE)
  set(AUTOCAT_SANITIZER_LINK_FLAGS "-fsanitize=address,undefined")
  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libasan.so
                  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE cxx_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(AUTOCAT_PYTHON_SANITIZER_ENVIRONMENT
      "LD_PRELOAD=${asan_runtime} ${cxx_runtime}" "ASAN_OPTIONS=detect_leaks=0")
endif()
add_test(NAME PackageInstall
         COMMAND bash "${PROJECT_SOURCE_DIR}/tests/install/install_test.sh"
                 "${PROJECT_BINARY_DIR}" "${PROJECT_SOURCE_DIR}" "${AUTOCAT_SANITIZER_LINK_FLAGS}")
string(REPLACE ";" "|" python_preload "${AUTOCAT_PYTHON_SANITIZER_ENVIRONMENT}")
set_tests_properties(PackageInstall PROPERTIES TIMEOUT 600
                     ENVIRONMENT "AUTOCAT_PYTHON_ENVIRONMENT=${python_preload}")

if(AUTOCAT_BUILD_PYTHON)
  set(python_environment
    "PYTHONPATH=${PROJECT_BINARY_DIR}/python"
    "AUTOCAT_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "AUTOCAT_CLI=$<TARGET_FILE:autocat>"
    ${AUTOCAT_PYTHON_SANITIZER_ENVIRONMENT})
  add_test(NAME PythonModule
           COMMAND "${AUTOCAT_PYTHON_EXECUTABLE}"
                   "${PROJECT_SOURCE_DIR}/tests/python/test_autocat.py" -v)
  # 77: python3-xapian is built on another Xapian series than autocat (the
# test says which); their serialised documents do not mix.
set_tests_properties(PythonModule PROPERTIES ENVIRONMENT "${python_environment}" TIMEOUT 300
                     SKIP_RETURN_CODE 77)
endif()
