# sv_enums.cmake: the bindings' enums, state names and error codes come from
# the C library's public headers (docs/bindings.md).
#
#   sv_binding_enums(LANG INTERPRETER [ENV VAR=VALUE ...])
#     - at build time (target LANG_enums, part of ALL): runs
#       scripts/gen_enums.py --write LANG whenever a public header or the
#       script changes; it rewrites the binding's checked-in declaration file
#       (bindings/python/supervise/_enums.py, bindings/ruby/lib/supervise/
#       enums.rb, bindings/lua/src/supervise/enums.lua) only when its text
#       differs;
#     - test LANG.enums: scripts/check_enums.py LANG INTERPRETER loads the
#       binding and fails on any difference between its view and the headers
#       (and between the headers and the .proto enums).
set(SV_ENUMS_PYTHON /usr/bin/python3)
file(GLOB SV_PUBLIC_HEADERS CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/libsupervise/include/supervise/*.h)

function(sv_binding_enums lang interpreter)
  cmake_parse_arguments(ARG "" "" "ENV" ${ARGN})
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${lang}_enums.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${SV_ENUMS_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/gen_enums.py
            --write ${lang}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${PROJECT_SOURCE_DIR}/scripts/gen_enums.py ${SV_PUBLIC_HEADERS}
    COMMENT "Generating the ${lang} binding's enums from the C headers"
    VERBATIM)
  add_custom_target(${lang}_enums ALL DEPENDS ${stamp})
  if(BUILD_TESTING)
    add_test(NAME ${lang}.enums
      COMMAND ${CMAKE_COMMAND} -E env
              SUPERVISE_LIBRARY=$<TARGET_FILE:supervise> ${ARG_ENV}
              ${SV_ENUMS_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_enums.py
              ${lang} ${interpreter})
    set_tests_properties(${lang}.enums PROPERTIES TIMEOUT 120)
  endif()
endfunction()
