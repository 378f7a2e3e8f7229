# nbody_unity_in_two(<target>): compile the target's C++ sources as two unity files of about equal
# count, one per core of a 2-core machine. For the targets whose sources share heavy headers (CLI11
# and nlohmann/json are header only): each is parsed, and each inline function compiled, twice
# rather than once a source. Call it after the target's last source is added.
# Left out of the unity files, as CMake does: sources with their own COMPILE_OPTIONS or
# COMPILE_DEFINITIONS, and those marked SKIP_UNITY_BUILD_INCLUSION (e.g. where two sources define
# the same name in anonymous namespaces). -DCMAKE_UNITY_BUILD=OFF compiles one source at a time.
function(nbody_unity_in_two target)
  if(DEFINED CMAKE_UNITY_BUILD AND NOT CMAKE_UNITY_BUILD)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  set(count 0)
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<")  # a source under a generator expression: counted as present
      math(EXPR count "${count} + 1")
      continue()
    endif()
    if(NOT source MATCHES "\\.(c|cc|cpp|cxx)$")
      continue()
    endif()
    get_source_file_property(skip ${source} SKIP_UNITY_BUILD_INCLUSION)
    get_source_file_property(options ${source} COMPILE_OPTIONS)
    get_source_file_property(definitions ${source} COMPILE_DEFINITIONS)
    if(NOT skip AND NOT options AND NOT definitions)
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  math(EXPR half "(${count} + 1) / 2")
  if(half GREATER 0)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${half})
  endif()
endfunction()
