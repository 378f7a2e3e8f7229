# nbody_embed_shaders(OUT NAMESPACE FILE...): the shader files of this folder's shaders/, embedded
# into the generated source OUT as NAMESPACE::shader_source(name) (embed_shaders.cmake). Every
# shader is named: a file added to shaders/ is embedded only when it is listed.
function(nbody_embed_shaders out namespace)
  set(files)
  foreach(shader IN LISTS ARGN)
    list(APPEND files ${CMAKE_CURRENT_SOURCE_DIR}/shaders/${shader})
  endforeach()
  string(REPLACE ";" "," list "${files}")  # a list would split the command line
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} "-DSHADERS=${list}" -DNAMESPACE=${namespace}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_shaders.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_shaders.cmake
    COMMENT "Embedding the shaders of ${namespace}"
    VERBATIM)
endfunction()
