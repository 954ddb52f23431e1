# manpages.cmake — the man pages, made from the docs with pandoc.
#
# Each page has a Markdown source in docs/man/ (NAME, SYNOPSIS, ...); where
# a long part already exists in docs/ (the commands of supervisectl, the
# config keys) the source includes that doc (docs/man/include.lua) instead
# of repeating it. pandoc because it is packaged by Debian and reads the
# Markdown the docs are written in (docs/man/README.md).
#
# When pandoc is found the pages are part of the default build (target
# `man`) and `cmake --install` puts them in share/man/man{1,3,5,8}; without
# it, configure says so once and nothing else changes.
# SV_PANDOC (cache) is how tests/man and tests/install tell.
find_program(SV_PANDOC pandoc)

set(SV_MAN_PAGES supervised.8 supervisectl.1 supervised.conf.5 libsupervise.3)
set(SV_MAN_SRC ${CMAKE_CURRENT_SOURCE_DIR}/docs/man)
set(SV_MAN_OUT ${CMAKE_CURRENT_BINARY_DIR}/man)

if(NOT SV_PANDOC)
  message(STATUS "pandoc not found: the man pages are not built or installed "
                 "(Debian package pandoc; scripts/install-deps.sh installs it)")
  return()
endif()

message(STATUS "pandoc found (${SV_PANDOC}): man pages in ${SV_MAN_OUT}")
file(MAKE_DIRECTORY ${SV_MAN_OUT})
set(sv_man_files)
foreach(page ${SV_MAN_PAGES})
  # Every page depends on every doc it may include: a change to one
  # remakes the pages (four small pandoc runs).
  add_custom_command(
    OUTPUT ${SV_MAN_OUT}/${page}
    COMMAND ${SV_PANDOC} -s -t man
            --lua-filter ${SV_MAN_SRC}/include.lua
            -M "footer=libsupervise ${PROJECT_VERSION}"
            -o ${SV_MAN_OUT}/${page} ${SV_MAN_SRC}/${page}.md
    DEPENDS ${SV_MAN_SRC}/${page}.md ${SV_MAN_SRC}/include.lua
            ${CMAKE_CURRENT_SOURCE_DIR}/docs/supervisectl.md
            ${CMAKE_CURRENT_SOURCE_DIR}/docs/config.md
    COMMENT "pandoc docs/man/${page}.md" VERBATIM)
  list(APPEND sv_man_files ${SV_MAN_OUT}/${page})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" sect ${page})
  install(FILES ${SV_MAN_OUT}/${page}
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sect})
endforeach()
add_custom_target(man ALL DEPENDS ${sv_man_files})
