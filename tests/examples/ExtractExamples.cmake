# ExtractExamples.cmake - pull the C++ example programs out of Markdown.
#
# tilejit_extract_examples(<doc.md> <outdir> <outvar>) writes every fenced
# code block of <doc.md> whose info string is c++/cpp/cxx (any case) and that
# defines `main` to <outdir>/<DocName>.cpp (or <DocName>_<n>.cpp when the
# document has several), byte for byte as it stands between the fences, and
# appends the written paths to <outvar>. A fence left open runs to the end of
# the document, as in CommonMark. Files are rewritten only when their
# text changed, so an unchanged document rebuilds nothing.
#
# The document text is handled as one string (never as a CMake list): C++ is
# full of semicolons.

function(tilejit_extract_examples md outdir outvar)
  file(READ "${md}" text)
  get_filename_component(docName "${md}" NAME_WE)
  set(bodies)
  set(count 0)
  set(fence "```")
  set(scanning ON)
  while(scanning)
    string(FIND "${text}" "${fence}" open)
    if(open EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" ${open} -1 rest)
    string(FIND "${rest}" "\n" eol)
    if(eol EQUAL -1)
      break()
    endif()
    math(EXPR infoLength "${eol} - 3")
    string(SUBSTRING "${rest}" 3 ${infoLength} info)
    string(STRIP "${info}" info)
    string(TOLOWER "${info}" info)
    math(EXPR bodyStart "${eol} + 1")
    string(SUBSTRING "${rest}" ${bodyStart} -1 rest)
    string(FIND "${rest}" "${fence}" close)
    if(close EQUAL -1)
      # An unclosed fence runs to the end of the document (CommonMark).
      set(body "${rest}")
      set(text "")
      set(scanning OFF)
    else()
      string(SUBSTRING "${rest}" 0 ${close} body)
      math(EXPR after "${close} + 3")
      string(SUBSTRING "${rest}" ${after} -1 text)
      # Drop the closing fence's indentation (after the last newline).
      string(FIND "${body}" "\n" lastNewline REVERSE)
      if(lastNewline EQUAL -1)
        continue()
      endif()
      math(EXPR keep "${lastNewline} + 1")
      string(SUBSTRING "${body}" 0 ${keep} body)
    endif()
    if(info MATCHES "^(c\\+\\+|cpp|cxx)$" AND body MATCHES "int[ \t]+main[ \t]*\\(")
      math(EXPR count "${count} + 1")
      set(body_${count} "${body}")
    endif()
  endwhile()

  set(written ${${outvar}})
  foreach(i RANGE 1 ${count})
    if(count EQUAL 0)
      break()
    endif()
    if(count EQUAL 1)
      set(out "${outdir}/${docName}.cpp")
    else()
      set(out "${outdir}/${docName}_${i}.cpp")
    endif()
    file(WRITE "${out}.tmp" "${body_${i}}")
    file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
    file(REMOVE "${out}.tmp")
    list(APPEND written "${out}")
  endforeach()
  set(${outvar} ${written} PARENT_SCOPE)
endfunction()
