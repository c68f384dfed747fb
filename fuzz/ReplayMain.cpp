//===- ReplayMain.cpp - Replays saved fuzz inputs as a regular test -------===//
//
//   tilejit-fuzz-replay TARGET PATH...
//
// Runs TARGET's entry function over each file (a directory: each file in
// it, sorted), in any build: the crashes a fuzzer once found, kept under
// fuzz/regressions/TARGET/, and the seed corpus run this way under ASan in
// the sanitize step. Exit status 0 when every input returned; a regression
// shows as the crash or sanitizer report itself.
//
//===----------------------------------------------------------------------===//
#include "FuzzTargets.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using Entry = int (*)(const uint8_t *, size_t);

struct Target {
  const char *name;
  Entry entry;
};

const Target kTargets[] = {
    {"dsl", tilejit::fuzz::dslFrontEnd},
    {"tir", tilejit::fuzz::tileIR},
    {"aclnn", tilejit::fuzz::aclnnOperators},
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET PATH...\n", argv[0]);
    return 2;
  }
  Entry entry = nullptr;
  for (const Target &t : kTargets)
    if (std::strcmp(t.name, argv[1]) == 0)
      entry = t.entry;
  if (!entry) {
    std::fprintf(stderr, "unknown fuzz target '%s' (dsl, tir, aclnn)\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto &e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    entry(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("%s: %zu inputs replayed\n", argv[1], files.size());
  return 0;
}
