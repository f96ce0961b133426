# sluice_man_page(<program>): after each build of the program, its manual page is written from its
# own option table (<program> --print-man-page, the options --help lists) and installed,
# compressed as Debian wants (gzip -9n: no name or time stamp).
function(sluice_man_page program)
  set(page ${CMAKE_BINARY_DIR}/man/${program}.1.gz)
  add_custom_command(TARGET ${program} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND sh -c "\"$1\" --print-man-page | gzip -9 -n > \"$2\"" sh $<TARGET_FILE:${program}> ${page}
    COMMENT "man page of ${program}"
    VERBATIM)
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
