#!/usr/bin/env bash
# The layering of the tree (docs/architecture.md, the top CMakeLists.txt's
# rooms), checked on what was built from it. Four checks, one per test:
#
#   check-layering.sh includes SRC         the #include lines of the sources
#                                          (test layering-includes)
#   check-layering.sh installed BUILD SRC  what `cmake --install` puts under
#                                          include/ (test layering-installed-headers)
#   check-layering.sh symbols LIB          what libtilejit.so holds
#                                          (test shipped-library-symbols)
#   check-layering.sh declarations SRC ARCHIVE
#                                          what the product headers of ops/
#                                          declare, against what the
#                                          test-support ARCHIVE defines
#                                          (test layering-product-headers)
#
# includes: dependencies point one way, dsl <- codegen <- jit <- ops <- tools,
#   with runtime/ below codegen, jit and ops:
#   - nothing under dsl/ or codegen/ includes jit/, ops/, tools/, bench/,
#     tests/, fuzz/ or python/; nothing under dsl/ includes codegen/ or runtime/;
#   - nothing under jit/ includes ops/, tools/, bench/, tests/ or fuzz/;
#   - runtime/ includes no LLVM header and no folder but runtime/ and the
#     public tilejit/;
#   - a public header (include/) includes only public headers;
#   - no source reaches another folder through "../";
#   - in ops/, only test support (twins, references, test problems,
#     workloads: the names ops/CMakeLists.txt gives tilejit_testsupport)
#     includes a test-support header;
#   - a product header of ops/ declares nothing of test support: outside
#     comments it names no twin, reference or workload (the words of the
#     symbols check below); their declarations live in the test-support
#     headers (<Op>Twin.h, ops/Workloads.h, ...).
#   The compiler enforces the first rules too (each room sees only its own
#   folders and its dependencies'); this check also names the offending line.
# installed: every installed header is a public header of include/, byte
#   for byte; nothing of the rooms is installed.
# symbols: libtilejit.so holds the compiler, the runtime and the operators,
#   none of the test support: no symbol (defined or referenced) of a
#   hand-written twin, a reference or a workload.
# declarations: no product header of ops/ declares (or calls) a free
#   function that tilejit_testsupport defines: those are declared in the
#   test-support headers (ops/<op>/<Op>Twin.h, ...). The `includes` check
#   catches the same by name; this one by what the archive holds.
set -euo pipefail

fail=0
problem() { echo "layering: $*" >&2; fail=1; }

# include_lines FILE...: "file:line:target" for each #include.
include_lines() {
  [ $# -gt 0 ] || return 0
  grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$@" 2>/dev/null |
    sed -E 's/^([^:]+:[0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"].*/\1:\2/' || true
}

sources_under() { # folder... (relative to the source root)
  local d
  for d in "$@"; do
    [ -d "$d" ] && find "$d" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.inc' -o -name '*.def' -o -name '*.c' \)
  done | sort
}

# forbid FOLDERS REGEX WHY: no file under FOLDERS includes a path matching REGEX.
forbid() {
  local folders=$1 re=$2 why=$3 hits
  # shellcheck disable=SC2086
  hits=$(include_lines $(sources_under $folders) | awk -F: -v re="$re" '$3 ~ re' || true)
  if [ -n "$hits" ]; then
    problem "$why:"
    echo "$hits" | sed 's/^/  /' >&2
  fi
}

# The file names of test support in ops/ (as ops/CMakeLists.txt has them).
support_source_re='(Handwritten[A-Za-z0-9]*|Reference[A-Za-z0-9]*|Twin[A-Za-z0-9]*|Workloads|Data)\.cpp$'
support_header_re='(Twin|Data|Workloads|Handwritten[A-Za-z0-9]*|Reference[A-Za-z0-9]*)\.(h|inc)$'
# Words naming test support in a demangled symbol (inside tilejit's
# namespaces) and in a product header's declarations: *Handwritten*,
# *Reference*, *Workload(s)*, *Twin* (and handwritten*, workload*, twin* at
# the start of a name).
support_symbol_re='\b([A-Za-z0-9_]*(Handwritten|Reference|Workloads?|Twin)[A-Za-z0-9_]*|(handwritten|workload|twin)[A-Za-z0-9_]*)\b'

check_includes() {
  local src=$1
  cd "$src"
  forbid "dsl codegen" '^(jit|ops|tools|bench|tests|fuzz|python)/' \
    "dsl/ and codegen/ include a later stage of the pipeline"
  forbid "dsl" '^(codegen|runtime)/' "dsl/ includes codegen/ or runtime/"
  forbid "jit" '^(ops|tools|bench|tests|fuzz|python)/' "jit/ includes a later stage"
  forbid "runtime" '^(llvm|llvm-c)/' "runtime/ includes LLVM"
  forbid "runtime" '^(dsl|codegen|jit|ops|tools|bench|tests|fuzz|python)/' \
    "runtime/ includes a folder above it"
  # A public header includes only what is installed beside it.
  local line file target
  while IFS= read -r line; do
    file=${line%%:*}; target=${line##*:}
    case $target in
      */*) [ -f "include/$target" ] ||
             problem "$file includes $target, which is not a public header" ;;
    esac
  done < <(include_lines $(sources_under include))
  forbid "dsl codegen runtime jit ops tools" '(^|/)\.\./' "a source reaches up with ../"
  # Product files of ops/ include no test-support header.
  local product=() f
  for f in $(sources_under ops); do
    [[ $f =~ $support_source_re || $f =~ $support_header_re ]] || product+=("$f")
  done
  local hits
  hits=$(include_lines "${product[@]}" | awk -F: -v re="$support_header_re" '$3 ~ re' || true)
  if [ -n "$hits" ]; then
    problem "operator code (part of libtilejit.so) includes test support:"
    echo "$hits" | sed 's/^/  /' >&2
  fi
  # Library code never calls the accessor that ends the process when the
  # host has no compiler (jit::Compiler::instance(), for programs and tests);
  # it asks instance(TargetLevel) and returns the error.
  hits=$(grep -nE 'Compiler::instance\(\)' $(sources_under dsl codegen runtime jit) \
           "${product[@]}" | grep -vE '^jit/Compiler\.h:' || true)
  if [ -n "$hits" ]; then
    problem "library code calls Compiler::instance(), which ends the process without a compiler (use instance(TargetLevel::Host) and return the error):"
    echo "$hits" | sed 's/^/  /' >&2
  fi
  # Product headers of ops/ declare no twin, reference or workload.
  hits=$(for f in "${product[@]}"; do
           case $f in *.h|*.inc|*.def) ;; *) continue ;; esac
           sed -E 's://.*$::' "$f" | grep -nE "$support_symbol_re" | sed "s|^|$f:|" || true
         done)
  if [ -n "$hits" ]; then
    problem "an operator header (part of libtilejit.so) declares test support (move it to a test-support header, e.g. <Op>Twin.h):"
    echo "$hits" | sed 's/^/  /' >&2
  fi
}

check_installed() {
  local build=$1 src=$2 prefix
  prefix=$(mktemp -d)
  trap 'rm -rf "$prefix"' RETURN
  cmake --install "$build" --prefix "$prefix" >/dev/null
  [ -d "$prefix/include" ] || { problem "nothing installed under include/"; return; }
  local h
  while IFS= read -r h; do
    h=${h#./}
    if [ ! -f "$src/include/$h" ]; then
      problem "installed include/$h is not a public header (not in the tree's include/)"
    elif ! cmp -s "$prefix/include/$h" "$src/include/$h"; then
      problem "installed include/$h differs from the tree's include/$h"
    fi
  done < <(cd "$prefix/include" && find . -type f | sort)
}

check_symbols() {
  local lib=$1 hits n
  [ -f "$lib" ] || { problem "no library $lib"; return; }
  hits=$(nm -C "$lib" | grep 'tilejit::' | grep -E "$support_symbol_re" || true)
  n=$(printf '%s' "$hits" | grep -c . || true)
  if [ "$n" -gt 0 ]; then
    problem "$(basename "$lib") holds $n symbols of test support (twins, references, workloads), e.g.:"
    echo "$hits" | head -20 | sed 's/^/  /' >&2
  else
    echo "$(basename "$lib"): no symbol of test support"
  fi
}

# The unqualified names of the free functions (in tilejit's namespaces, not
# members) that ARCHIVE defines.
free_functions_of() {
  nm -C --defined-only -g "$1" 2>/dev/null |
    sed -nE 's/^[0-9a-fA-F]+ T (.*)$/\1/p' | sed -E 's/\(.*$//' |
    sed -nE 's/^tilejit(::[a-z_][a-z0-9_]*)*::([A-Za-z_][A-Za-z0-9_]*)$/\2/p' | sort -u || true
}

check_declarations() {
  local src=$1 archive=$2 names re f hits
  [ -f "$archive" ] || { problem "no archive $archive"; return; }
  names=$(free_functions_of "$archive")
  [ -n "$names" ] || { problem "no function defined in $archive (nm failed?)"; return; }
  re="(^|[^A-Za-z0-9_.>:])($(echo "$names" | paste -sd'|'))[[:space:]]*\("
  cd "$src"
  hits=$(for f in $(sources_under ops); do
           case $f in *.h|*.inc|*.def) ;; *) continue ;; esac
           [[ $f =~ $support_header_re ]] && continue
           sed -E 's://.*$::' "$f" | grep -nE "$re" | sed "s|^|$f:|" || true
         done)
  if [ -n "$hits" ]; then
    problem "an operator header (part of libtilejit.so) declares what tilejit_testsupport defines (move it to a test-support header, e.g. <Op>Twin.h):"
    echo "$hits" | sed 's/^/  /' >&2
  fi
}

case ${1:-} in
  includes) [ $# -eq 2 ] || { echo "usage: $0 includes SRC" >&2; exit 2; }
            check_includes "$2" ;;
  installed) [ $# -eq 3 ] || { echo "usage: $0 installed BUILD SRC" >&2; exit 2; }
             check_installed "$2" "$3" ;;
  symbols) [ $# -eq 2 ] || { echo "usage: $0 symbols LIB" >&2; exit 2; }
           check_symbols "$2" ;;
  declarations) [ $# -eq 3 ] || { echo "usage: $0 declarations SRC ARCHIVE" >&2; exit 2; }
                check_declarations "$2" "$3" ;;
  *) echo "usage: $0 includes SRC | installed BUILD SRC | symbols LIB | declarations SRC ARCHIVE" >&2; exit 2 ;;
esac
[ $fail -eq 0 ] || exit 1
echo "layering: $1: ok"
