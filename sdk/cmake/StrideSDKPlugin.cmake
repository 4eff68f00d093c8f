# stride_add_plugin(<target> SOURCES <files>... [LIBRARIES <libs>...] [OUTPUT_DIRECTORY <dir>])
# Declares a Stride plugin: a MODULE library with hidden visibility whose only exported
# symbol is the entry point defined by STRIDE_PLUGIN / STRIDE_REGISTER_PLUGIN.
function(stride_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Stride::SDK ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX ""
    OUTPUT_NAME "stride_${target}")
  set_property(GLOBAL APPEND PROPERTY STRIDE_PLUGIN_TARGETS ${target})
  if(TARGET stride_plugin_pch AND NOT STRIDE_NO_PLUGIN_PCH)
    target_precompile_headers(${target} REUSE_FROM stride_plugin_pch)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
    return()  # a plugin with its own folder (tests) is not installed
  elseif(DEFINED STRIDE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${STRIDE_PLUGIN_OUTPUT_DIR})
  endif()
  # Installed next to `stride` (<prefix>/lib/stride/plugins), where the host looks first.
  install(TARGETS ${target} LIBRARY DESTINATION lib/stride/plugins)
endfunction()

# stride_add_force_element(<target> SOURCES <files>... [LIBRARIES <libs>...] [OUTPUT_DIRECTORY <dir>])
# A force-element library (stride/force_element.hpp), loaded by the `mechanism` model plugin
# from the `forces` folder beside the plugins: stride_force_<target>.so.
function(stride_add_force_element target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Stride::SDK ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX ""
    OUTPUT_NAME "stride_force_${target}")
  set_property(GLOBAL APPEND PROPERTY STRIDE_PLUGIN_TARGETS ${target})
  if(TARGET stride_plugin_pch AND NOT STRIDE_NO_PLUGIN_PCH)
    target_precompile_headers(${target} REUSE_FROM stride_plugin_pch)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
    return()  # an element with its own folder (tests) is not installed
  elseif(DEFINED STRIDE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${STRIDE_PLUGIN_OUTPUT_DIR}/forces)
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION lib/stride/plugins/forces)
endfunction()
