# Included by ctest before it reads the tests (the top-level
# CMakeLists.txt adds it to TEST_INCLUDE_FILES): every test's TIMEOUT is
# multiplied by tools/ci/speed_factor.sh's factor, measured once as ctest
# starts, so that a slow or busy machine gets longer limits rather than
# failures (a busy 2-core machine ran bdwgc's staticrootstest in 69-108 s
# against a fixed 60).  SGC_SPEED_FACTOR=N in the environment sets it.
if(NOT COMMAND _sgc_timeouts_scaled)
  function(_sgc_timeouts_scaled)
  endfunction()
  get_filename_component(_sgc_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  execute_process(COMMAND sh "${_sgc_root}/tools/ci/speed_factor.sh"
    OUTPUT_VARIABLE _sgc_factor OUTPUT_STRIP_TRAILING_WHITESPACE)
  # Tenths, for CMake's integer arithmetic: "2.6" -> 26, at least 10.
  set(_sgc_tenths 10)
  if(_sgc_factor MATCHES "^([0-9]+)\\.([0-9])")
    set(_sgc_tenths "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  elseif(_sgc_factor MATCHES "^([0-9]+)$")
    set(_sgc_tenths "${CMAKE_MATCH_1}0")
  endif()
  if(_sgc_tenths LESS 10)
    set(_sgc_tenths 10)
  endif()
  message(STATUS "sgc: time limits x${_sgc_factor} (tools/ci/speed_factor.sh)")
  set(SGC_TIMEOUT_TENTHS ${_sgc_tenths})

  # set_tests_properties with each TIMEOUT value scaled; every argument
  # is passed on whole (ENVIRONMENT lists keep their semicolons).
  function(set_tests_properties)
    set(args "")
    set(scale_next 0)
    math(EXPR last "${ARGC} - 1")
    foreach(i RANGE ${last})
      set(a "${ARGV${i}}")
      if(scale_next)
        math(EXPR a "(${a} * ${SGC_TIMEOUT_TENTHS} + 9) / 10")
        set(scale_next 0)
      elseif(a STREQUAL "TIMEOUT")
        set(scale_next 1)
      endif()
      string(REPLACE ";" "\\;" a "${a}")
      list(APPEND args "${a}")
    endforeach()
    _set_tests_properties(${args})
  endfunction()
endif()
