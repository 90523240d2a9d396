# The CLI's man page and bash completion, generated at build time from the
# built tool's own --help, so they never drift from it.
set(AUTOCAT_MAN_PAGE "${PROJECT_BINARY_DIR}/man/autocat.1")
set(AUTOCAT_COMPLETION "${PROJECT_BINARY_DIR}/completion/autocat")
add_custom_command(
  OUTPUT "${AUTOCAT_MAN_PAGE}" "${AUTOCAT_COMPLETION}"
  COMMAND "${CMAKE_COMMAND}" -DAUTOCAT=$<TARGET_FILE:autocat> -DMAN_PAGE=${AUTOCAT_MAN_PAGE}
          -DCOMPLETION=${AUTOCAT_COMPLETION} -P "${PROJECT_SOURCE_DIR}/cmake/generate_cli_docs.cmake"
  DEPENDS autocat "${PROJECT_SOURCE_DIR}/cmake/generate_cli_docs.cmake"
  COMMENT "Generating the autocat man page and bash completion from --help"
  VERBATIM)
add_custom_target(autocat_cli_docs ALL DEPENDS "${AUTOCAT_MAN_PAGE}" "${AUTOCAT_COMPLETION}")

install(FILES "${AUTOCAT_MAN_PAGE}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES "${AUTOCAT_COMPLETION}"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions")
