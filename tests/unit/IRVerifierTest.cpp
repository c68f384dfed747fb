//===- IRVerifierTest.cpp - What the Tile IR verifier rejects -------------===//
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Printer.h"
#include "dsl/ir/Verifier.h"

#include <gtest/gtest.h>

using namespace tilejit;

namespace {

/// A kernel with tensor %t, scalar %n and the given body ops.
std::string kernelWith(const std::string &body, const std::string &header = "") {
  return "kernel @k(%t: tensor<f32, 2>, %n: i64) {\n" + header +
         "  grid {\n    %0 = dim %t {axis = 0} : i64\n    yield %0\n  }\n"
         "  body {\n" +
         body + "  }\n}\n";
}

/// Parses and verifies; returns "ok", or the first error as "line:message".
std::string verifyText(const std::string &text, bool requirePlanned = false) {
  DiagnosticEngine diags;
  auto m = ir::parseModule(diags, diags.addBuffer("v.tir", text));
  if (!m)
    return "parse error: " + diags.renderAll();
  ir::VerifyOptions o;
  o.requirePlanned = requirePlanned;
  if (ir::verify(*m->kernels.at(0), diags, o))
    return "ok";
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      return std::to_string(d.loc.line) + ":" + d.message;
  return "failed without an error";
}

} // namespace

TEST(IRVerifier, AcceptsALegalKernel) {
  EXPECT_EQ(verifyText(kernelWith(
                "    %1 = program_id {axis = 0} : i64\n"
                "    %2 = const {value = 0} : i64\n"
                "    %3 = load %t, %1, %2 : tile<f32, 8>\n"
                "    %4 = exp %3 : tile<f32, 8>\n"
                "    store %t, %1, %2, %4\n")),
            "ok");
}

TEST(IRVerifier, RejectsWrongOperandCounts) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = add %1 : f32\n")),
            "8:invalid 'add': has 1 operands, expected 2");
  EXPECT_EQ(verifyText(kernelWith("    %1 = program_id {axis = 0} : i64\n"
                                  "    %2 = load %t, %1 : tile<f32, 8>\n")),
            "8:invalid 'load': has 2 operands, expected 3");
}

TEST(IRVerifier, RejectsTypeMismatches) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = const {value = 1} : i32\n"
                                  "    %3 = add %1, %2 : f32\n")),
            "9:invalid 'add': operand element kind differs from the result's");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 4>\n"
                                  "    %3 = splat %1 : tile<f32, 8>\n"
                                  "    %4 = mul %2, %3 : tile<f32, 8>\n")),
            "10:invalid 'mul': operand tile<f32, 4> does not have the result's "
            "shape tile<f32, 8>");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f16\n"
                                  "    %2 = add %1, %1 : f16\n")),
            "8:invalid 'add': arithmetic on f16/bf16 (storage kinds)");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 4, 3>\n"
                                  "    %3 = broadcast %2 : tile<f32, 4, 8>\n")),
            "9:invalid 'broadcast': cannot broadcast tile<f32, 4, 3> to "
            "tile<f32, 4, 8>");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 4, 8>\n"
                                  "    %3 = splat %1 : tile<f32, 4, 4>\n"
                                  "    %4 = mma %2, %2, %3 : tile<f32, 4, 4>\n")),
            "10:invalid 'mma': shapes do not form an M x K by K x N product");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : i32\n"
                                  "    %2 = const {value = 1} : i32\n"
                                  "    %3 = bitcast %1 : i16\n")),
            "9:invalid 'bitcast': bitcast between kinds of different widths");
}

TEST(IRVerifier, RejectsUseOutsideTheDefiningBlock) {
  // %3 is defined inside the loop and used after it: not dominated.
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    for %1, %n, %1 {\n"
                                  "    ^(%2: i64):\n"
                                  "      %3 = add %2, %2 : i64\n"
                                  "      yield\n"
                                  "    }\n"
                                  "    %4 = add %3, %3 : i64\n")),
            "13:invalid 'add': uses a value that is not defined before it");
}

TEST(IRVerifier, RequiresTerminators) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    for %1, %n, %1 {\n"
                                  "    ^(%2: i64):\n"
                                  "      %3 = add %2, %2 : i64\n"
                                  "    }\n")),
            "8:invalid IR: the for block must end in 'yield'");
  EXPECT_EQ(verifyText("kernel @k() {\n  grid {\n  }\n  body {\n  }\n}\n"),
            "1:invalid IR: the grid block must end in 'yield'");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    yield %1\n"
                                  "    %2 = const {value = 0} : i64\n")),
            "8:invalid 'yield': yield must be the last op of its block");
}

TEST(IRVerifier, ChecksLoopsAndBranches) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = const {value = 0} : f32\n"
                                  "    %3 = for %1, %n, %1, %2 : i64 {\n"
                                  "    ^(%4: i64, %5: f32):\n"
                                  "      yield %5\n"
                                  "    }\n")),
            "9:invalid 'for': iteration value types must match");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = if %1 : i64 {\n"
                                  "      yield %1\n"
                                  "    } else {\n"
                                  "      yield %1\n"
                                  "    }\n")),
            "8:invalid 'if': needs an i1 condition and two blocks");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : i1\n"
                                  "    %2 = if %1 : i1 {\n"
                                  "      yield %1\n"
                                  "    } else {\n"
                                  "      yield\n"
                                  "    }\n")),
            "11:invalid 'yield': yields the wrong number of values");
}

TEST(IRVerifier, ChecksFusedBodies) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8>\n"
                                  "    %3 = fused %2 : tile<f32, 8> {\n"
                                  "    ^(%4: f32):\n"
                                  "      %5 = splat %4 : tile<f32, 8>\n"
                                  "      yield %4\n"
                                  "    }\n")),
            "11:invalid 'splat': only elementwise ops, constants and iota may appear "
            "in a fused body");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8>\n"
                                  "    %3 = fused %2 : tile<f32, 8> {\n"
                                  "    ^(%4: i32):\n"
                                  "      yield %4\n"
                                  "    }\n")),
            "9:invalid 'fused': body argument kinds must be the inputs' "
            "element kinds");
  // A fused body sees only its own arguments.
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8>\n"
                                  "    %3 = fused %2 : tile<f32, 8> {\n"
                                  "    ^(%4: f32):\n"
                                  "      %5 = add %4, %1 : f32\n"
                                  "      yield %5\n"
                                  "    }\n")),
            "11:invalid 'add': uses a value that is not defined before it");
}

TEST(IRVerifier, RequirePlannedWantsEveryTileBuffered) {
  std::string body = "    %1 = const {value = 1} : f32\n"
                     "    %2 = splat %1 : tile<f32, 8>\n";
  EXPECT_EQ(verifyText(kernelWith(body), true),
            "1:invalid IR: buffers are not planned");
  EXPECT_EQ(verifyText(kernelWith(body, "  scratch 64\n"), true),
            "9:invalid 'splat': tile result has no planned buffer");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8> buf(0)\n",
                                  "  scratch 64\n"),
                       true),
            "ok");
}

TEST(IRVerifier, ChecksReductionsAndShapeOps) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 4, 8>\n"
                                  "    %3 = reduce %2 {kind = sum, axis = 1} : tile<f32, 8>\n")),
            "9:invalid 'reduce': result must be tile<f32, 4>, the operand "
            "without axis 1");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8>\n"
                                  "    %3 = reduce %2 {kind = max, axis = 0} : f32\n")),
            "ok");
  EXPECT_EQ(verifyText(kernelWith("    %1 = iota {axis = 2} : tile<i32, 4, 8>\n")),
            "7:invalid 'iota': axis is outside the tile's rank");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 4, 8>\n"
                                  "    %3 = transpose %2 : tile<f32, 8, 8>\n")),
            "9:invalid 'transpose': transposes a rank-2 tile");
  EXPECT_EQ(verifyText(kernelWith("    %1 = program_id {axis = 3} : i64\n")),
            "7:invalid 'program_id': axis must be 0, 1 or 2");
}

TEST(IRVerifier, ChecksMemoryOperands) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = load %t, %1, %1 : tile<f16, 8>\n")),
            "8:invalid 'load': element kind f16 differs from the tensor's f32");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = load %t, %1, %1 : tile<f32, 2, 2, 2>\n")),
            "8:invalid 'load': needs a tile of rank at most the tensor's");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = iota {axis = 0} : tile<i64, 4>\n"
                                  "    %3 = cmp %2, %2 {predicate = lt} : tile<i1, 4>\n"
                                  "    %4 = load %t, %1, %1, %3 {mask} : tile<f32, 8>\n")),
            "10:invalid 'load': mask must be an i1 tile of the data's shape");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = const {value = 0} : i32\n"
                                  "    store_scalar %t, %1, %1, %2\n")),
            "9:invalid 'store_scalar': element kind i32 differs from the "
            "tensor's f32");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = const {value = 0} : f32\n"
                                  "    %3 = store_scalar %t, %1, %1, %2 : f32\n")),
            "9:invalid 'store_scalar': has 1 results, expected 0");
}

TEST(IRVerifier, ChecksLoopBoundsAndYieldCounts) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i32\n"
                                  "    for %1, %1, %1 {\n"
                                  "    ^(%2: i64):\n"
                                  "      yield\n"
                                  "    }\n")),
            "8:invalid 'for': bounds and step must be i64");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = for %1, %n, %1, %1 : i64 {\n"
                                  "    ^(%3: i64, %4: i64):\n"
                                  "      yield\n"
                                  "    }\n")),
            "10:invalid 'yield': yields 0 values for 1 iteration values");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : i1\n"
                                  "    %2 = const {value = 1} : i64\n"
                                  "    %3 = if %1 : i1 {\n"
                                  "      yield %2\n"
                                  "    } else {\n"
                                  "      yield %1\n"
                                  "    }\n")),
            "10:invalid 'yield': yields a value of the wrong type");
}

TEST(IRVerifier, RequirePlannedChecksAlignmentAndLoopArguments) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 8> buf(32)\n",
                                  "  scratch 128\n"),
                       true),
            "9:invalid 'splat': buffer at 32 is unaligned or outside the "
            "128-byte scratch area");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f32\n"
                                  "    %2 = splat %1 : tile<f32, 64> buf(64)\n",
                                  "  scratch 128\n"),
                       true),
            "9:invalid 'splat': buffer at 64 is unaligned or outside the "
            "128-byte scratch area");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 0} : i64\n"
                                  "    %2 = const {value = 1} : f32\n"
                                  "    %3 = splat %2 : tile<f32, 8> buf(0)\n"
                                  "    %4 = for %1, %n, %1, %3 : tile<f32, 8> buf(64) {\n"
                                  "    ^(%5: i64, %6: tile<f32, 8>):\n"
                                  "      yield %6\n"
                                  "    }\n",
                                  "  scratch 128\n"),
                       true),
            "11:invalid 'for': tile iteration argument has no valid planned "
            "buffer");
}

TEST(IRVerifier, MathIsDefinedOnF32Only) {
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : i32\n"
                                  "    %2 = tanh %1 : i32\n")),
            "8:invalid 'tanh': is defined on f32 only");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : i64\n"
                                  "    %2 = exp %1 : i64\n")),
            "8:invalid 'exp': is defined on f32 only");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 1} : f16\n"
                                  "    %2 = sin %1 : f16\n")),
            "8:invalid 'sin': arithmetic on f16/bf16 (storage kinds)");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 2.0} : f32\n"
                                  "    %2 = const {value = 3} : i32\n"
                                  "    %3 = pow %1, %2 : f32\n")),
            "9:invalid 'pow': operand element kind differs from the result's");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 2.0} : f32\n"
                                  "    %2 = pow %1 : f32\n")),
            "8:invalid 'pow': has 1 operands, expected 2");
  EXPECT_EQ(verifyText(kernelWith("    %1 = const {value = 2.0} : f32\n"
                                  "    %2 = pow %1, %1 : f32\n"
                                  "    %3 = sigmoid %2 : f32\n")),
            "ok");
}
