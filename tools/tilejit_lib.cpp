//===- tilejit_lib.cpp - Anchor of the shared libtilejit --------------------===//
//
// libtilejit.so is the object files of every room; this file only
// gives the target a source of its own.
//
//===----------------------------------------------------------------------===//
extern "C" __attribute__((visibility("default"))) const char *tilejit_version_string() { return "tilejit"; }
