//===- tilejit.cpp - The tilejit command line (placeholder) ----------------===//
#include <cstdio>
int main() {
  std::fprintf(stderr, "tilejit: not built yet\n");
  return 1;
}
