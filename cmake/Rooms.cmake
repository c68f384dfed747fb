# Rooms: one static library per stage of the pipeline, and the include path
# each one exports.
#
# Sources include each other by their path in the tree ("dsl/ir/IR.h",
# "jit/Compiler.h"). A room does not export the root of the tree, which would
# let any file include any other: it exports a folder of the build tree,
# ${CMAKE_BINARY_DIR}/include-rooms/<room>/, that holds links to the folders
# (and single headers) the room owns and nothing else, e.g.
#   include-rooms/tilejit_ir/dsl/ir -> <source>/dsl/ir
# A file therefore sees its own room's folders and those of the rooms its room
# links, and an #include back up the pipeline (codegen/ including jit/, jit/
# including ops/) does not compile. scripts/check-layering.sh checks the same
# rules on the text of the sources (the `layering-includes` test).

set(TILEJIT_ROOM_INCLUDE_ROOT ${CMAKE_BINARY_DIR}/include-rooms)

# tilejit_room_includes(TARGET SCOPE PATH...): gives TARGET (SCOPE: PUBLIC,
# PRIVATE or INTERFACE) an include folder of links to the PATHs alone. A PATH
# is a folder or header of the tree as sources include it ("dsl/ir",
# "dsl/Frontend.h"), or NAME=PATH where the include name differs from the
# path in the tree ("tilejit/args.h=include/tilejit/args.h"). A PATH that does
# not exist (yet) is skipped; the globs of tilejit_room notice it appearing.
function(tilejit_room_includes target scope)
  set(stage ${TILEJIT_ROOM_INCLUDE_ROOT}/${target})
  # When the list changes, the folder (links only: REMOVE_RECURSE does not
  # follow them) is made afresh, so a path no longer listed does not linger.
  set(_list "${ARGN}")
  set(_old "")
  if(EXISTS ${stage}.list)
    file(READ ${stage}.list _old)
  endif()
  if(NOT _old STREQUAL _list)
    file(REMOVE_RECURSE ${stage})
    file(WRITE ${stage}.list "${_list}")
  endif()
  file(MAKE_DIRECTORY ${stage})
  foreach(entry ${ARGN})
    if(entry MATCHES "^([^=]+)=(.+)$")
      set(name ${CMAKE_MATCH_1})
      set(path ${CMAKE_MATCH_2})
    else()
      set(name ${entry})
      set(path ${entry})
    endif()
    if(NOT EXISTS ${TILEJIT_SOURCE_ROOT}/${path})
      continue()
    endif()
    if(IS_SYMLINK ${stage}/${name})
      file(READ_SYMLINK ${stage}/${name} _to)
      if(_to STREQUAL ${TILEJIT_SOURCE_ROOT}/${path})
        continue()
      endif()
    endif()
    get_filename_component(parent ${stage}/${name} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${TILEJIT_SOURCE_ROOT}/${path} ${stage}/${name} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${stage}>)
endfunction()

# tilejit_room(NAME DIRS folder... [HEADERS path...] DEPS room...): the
# static library NAME of every .cpp directly in the DIRS, exporting the DIRS
# and HEADERS (see tilejit_room_includes). Its DEPS are the rooms it may use,
# so both the compiler and the linker check the arrows.
function(tilejit_room name)
  cmake_parse_arguments(R "" "" "DIRS;HEADERS;DEPS" ${ARGN})
  set(_srcs)
  set(_hdrs)
  foreach(d ${R_DIRS})
    file(GLOB _s CONFIGURE_DEPENDS ${TILEJIT_SOURCE_ROOT}/${d}/*.cpp)
    file(GLOB _h CONFIGURE_DEPENDS ${TILEJIT_SOURCE_ROOT}/${d}/*.h)
    list(APPEND _srcs ${_s})
    list(APPEND _hdrs ${_h})
  endforeach()
  add_library(${name} STATIC ${_srcs} ${_hdrs})
  tilejit_room_includes(${name} PUBLIC ${R_DIRS} ${R_HEADERS})
  target_link_libraries(${name} PUBLIC ${R_DEPS})
endfunction()
