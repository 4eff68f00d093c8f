# stride_probe_fingerprint(<out_var> <sdk_include_dir>)
# The build fingerprint (stride/abi.hpp: compiler, standard library, C++ standard, nlohmann/json
# and Eigen versions, type sizes) that a plugin compiled here with the SDK's flags would carry,
# as key=value pairs separated by '|' (no semicolons: the text is written into a config file).
# Used twice: by Stride's own build to record the host's, and by the installed
# StrideSDKConfig.cmake to refuse, at configure time, a compiler whose plugins the host would
# refuse at load.
function(stride_probe_fingerprint out include_dir)
  set(standard 20)
  if(DEFINED CMAKE_CXX_STANDARD AND CMAKE_CXX_STANDARD GREATER 20)
    set(standard ${CMAKE_CXX_STANDARD})
  endif()
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/stride_fingerprint)
  try_compile(ok ${dir} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/fingerprint_probe.cpp
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${include_dir}"
    COMPILE_DEFINITIONS -DJSON_DIAGNOSTICS=1
    LINK_LIBRARIES Eigen3::Eigen nlohmann_json::nlohmann_json
    CXX_STANDARD ${standard} CXX_STANDARD_REQUIRED ON
    OUTPUT_VARIABLE log
    COPY_FILE ${dir}/probe.a)
  if(NOT ok)
    message(FATAL_ERROR "Stride SDK: the build-fingerprint probe does not compile with ${CMAKE_CXX_COMPILER}:\n${log}")
  endif()
  file(STRINGS ${dir}/probe.a found REGEX "STRIDE_FINGERPRINT_PROBE=")
  string(REPLACE "STRIDE_FINGERPRINT_PROBE=" "" found "${found}")
  string(REPLACE "\\;" "|" found "${found}")  # file(STRINGS) escapes the string's own semicolons
  string(REPLACE ";" "|" found "${found}")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# stride_check_fingerprint(<host_fingerprint> <sdk_include_dir> <ok_var> <reason_var>)
function(stride_check_fingerprint host include_dir ok_var reason_var)
  stride_probe_fingerprint(mine ${include_dir})
  string(REPLACE "|" ";" mine "${mine}")
  string(REPLACE "|" ";" host "${host}")
  set(differ "")
  foreach(pair IN LISTS host)
    string(REGEX REPLACE "=.*" "" key "${pair}")
    string(REGEX REPLACE "^[^=]*=" "" host_value "${pair}")
    set(my_value "(none)")
    foreach(m IN LISTS mine)
      if(m MATCHES "^${key}=(.*)$")
        set(my_value "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    if(NOT my_value STREQUAL host_value)
      string(APPEND differ "\n  ${key}: host ${host_value}, this build ${my_value}")
    endif()
  endforeach()
  if(differ STREQUAL "")
    set(${ok_var} TRUE PARENT_SCOPE)
  else()
    set(${ok_var} FALSE PARENT_SCOPE)
    string(CONCAT reason "plugins built here (${CMAKE_CXX_COMPILER}) would be refused by the Stride host installed "
      "with this SDK: their build fingerprint (stride/abi.hpp) differs from the host's in${differ}\n"
      "Configure this project with the compiler and C++ standard the host was built with "
      "(-DCMAKE_CXX_COMPILER=..., CMAKE_CXX_STANDARD 20), or rebuild Stride with this compiler.")
    set(${reason_var} "${reason}" PARENT_SCOPE)
  endif()
endfunction()
