//===- tile-opt.cpp - Tile IR in, passes, text out (placeholder) -----------===//
#include <cstdio>
int main() {
  std::fprintf(stderr, "tile-opt: not built yet\n");
  return 1;
}
