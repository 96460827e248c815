# The layering of the source tree (docs/architecture.md#layers), enforced by the build.
#
# No target has the repository root as an include directory. Instead each library gets an
# include tree of its own in the build folder, build/include/<target>/, holding symbolic
# links to the source folders it may include: its own folder and the lower folders it
# builds on. `#include "rl/learner.hpp"` in a sim/ file therefore fails to compile
# ("No such file or directory") instead of quietly adding an upward dependency.
#
#   schedsim_layer(<target> SEES <folder>... [FILES <header>...])
#
# SEES: folders relative to the repository root (base, sim, world/physics, ...).
# FILES: single headers of a higher folder that the target may include although it may
# not include the rest of that folder: the known exceptions, each listed in
# docs/architecture.md#exceptions and to be removed, never added to lightly.
#
# The tree is PUBLIC: a target that links this one sees these folders too, which are all
# at or below the linking target's own layer.
function(schedsim_layer target)
  cmake_parse_arguments(LAYER "" "" "SEES;FILES" ${ARGN})
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  # Rebuilt at every configure, so that a folder taken off the list is gone from the tree.
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(entry IN LISTS LAYER_SEES LAYER_FILES)
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${entry})
      message(FATAL_ERROR "schedsim_layer(${target}): ${entry} does not exist in the source tree")
    endif()
    get_filename_component(parent ${root}/${entry} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${entry} ${root}/${entry} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC ${root})
  set_property(TARGET ${target} PROPERTY SCHEDSIM_LAYER_SEES ${LAYER_SEES})
  set_property(TARGET ${target} PROPERTY SCHEDSIM_LAYER_FILES ${LAYER_FILES})
endfunction()

