# Writes OUTPUT, a C++ file defining autocat::cli::kServePage as the text of
# INPUT (the page autocat serve shows), so the binary needs no installed files.
# usage: cmake -DINPUT=index.html -DOUTPUT=serve_page.cc -P embed.cmake
file(READ "${INPUT}" page)
string(FIND "${page}" ")autocat_page\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )autocat_page\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed.cmake; do not edit.\n"
  "#include \"indexer/serve_page.h\"\n"
  "namespace autocat::cli {\n"
  "const char kServePage[] = R\"autocat_page(${page})autocat_page\";\n"
  "}  // namespace autocat::cli\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
