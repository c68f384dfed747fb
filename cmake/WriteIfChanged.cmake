# write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already holds
# it, so that a generated header keeps its timestamp (and its dependents stay
# built) while its content is the same. For the -P scripts beside it.
function(write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" _old)
    if(_old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()
