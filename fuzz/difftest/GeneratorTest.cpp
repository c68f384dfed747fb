//===- GeneratorTest.cpp - The differential tester's generator and minimiser ===//
//
// The generator's programs are valid (parsed, type-checked and through the
// Tile IR pipeline, as the compiler takes them), it produces every feature
// of issue 32's list (featureGroups) within a seed range, an argument's data
// does not depend on the other arguments, and the minimiser shrinks a
// planted failure to a small program without its unused parameters.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Generator.h"
#include "Minimiser.h"
#include "Program.h"

#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/support/Diagnostics.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

using namespace tilejit;
using namespace tilejit::difftest;

namespace {

/// "" when the compiler's front end and Tile IR pipeline accept the
/// program (as `tile-opt --emit tile-opt` would), else the diagnostics.
std::string compileErrors(const Program &p) {
  DiagnosticEngine diags;
  uint32_t buf = diags.addBuffer("difftest.tile", printKernel(p));
  auto file = dsl::parse(diags, buf);
  if (!file)
    return "parse: " + diags.renderAll();
  auto k = dsl::lowerKernel(*file, p.kernel, specOf(p), diags);
  if (!k)
    return "lower: " + diags.renderAll();
  if (!passes::runDefaultPipeline(*k, diags))
    return "pipeline: " + diags.renderAll();
  return "";
}

size_t countStatements(const std::vector<Stmt> &body) {
  size_t n = 0;
  for (const Stmt &s : body)
    n += 1 + countStatements(s.body) + countStatements(s.elseBody);
  return n;
}

TEST(DifftestGenerator, SameSeedSameProgram) {
  for (uint64_t seed : {1u, 77u, 4242u})
    EXPECT_EQ(printRegression(generateProgram(seed), "none", ""),
              printRegression(generateProgram(seed), "none", ""));
}

TEST(DifftestGenerator, EveryProgramIsAccepted) {
  {
    // The check itself rejects what the compiler rejects.
    Program bad = generateProgram(1);
    Stmt s;
    s.kind = Stmt::Kind::Expr;
    s.value.kind = Expr::Kind::Name;
    s.value.text = "undeclared_name";
    bad.body.push_back(s);
    EXPECT_NE(compileErrors(bad), "");
  }
  int failed = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Program p = generateProgram(seed);
    std::string err = compileErrors(p);
    if (!err.empty() && ++failed <= 5)
      ADD_FAILURE() << "seed " << seed << " rejected: " << err << "\n" << printKernel(p);
  }
  EXPECT_EQ(failed, 0);
}

TEST(DifftestGenerator, EveryFeatureIsGenerated) {
  // Generation only (no compiling): every group of issue 32's list, and of
  // the later additions, within the first 3000 seeds, most many times.
  std::map<std::string, int> count;
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    Program p = generateProgram(seed);
    for (const FeatureGroup &g : featureGroups())
      if (g.covers(p.features))
        ++count[g.name];
  }
  for (const FeatureGroup &g : featureGroups())
    EXPECT_GE(count[g.name], 3) << "feature " << g.name << " is (almost) never generated";
}

TEST(DifftestGenerator, ConditionalParametersPresentAndAbsent) {
  bool present = false, absent = false;
  for (uint64_t seed = 1; seed <= 2000 && !(present && absent); ++seed) {
    Program p = generateProgram(seed);
    for (const ArgSpec &a : p.args) {
      if (a.guard.empty())
        continue;
      std::string text = printKernel(p);
      EXPECT_NE(text.find(a.name + ": gm<"), std::string::npos);
      EXPECT_NE(text.find(" if " + a.guard), std::string::npos);
      // The header lists the launch: a present one, not an absent one.
      std::string file = printRegression(p, "none", "");
      Program q;
      std::string kernelText;
      ASSERT_FALSE(parseRegression(file, q, kernelText));
      bool listed = false;
      for (const ArgSpec &b : q.args)
        listed |= b.name == a.name;
      EXPECT_EQ(listed, a.present) << a.name << " in seed " << seed;
      (a.present ? present : absent) = true;
    }
  }
  EXPECT_TRUE(present);
  EXPECT_TRUE(absent);
}

TEST(DifftestGenerator, DroppingAnArgumentKeepsTheOthersData) {
  Program p = generateProgram(11);
  ASSERT_GE(p.args.size(), 2u);
  std::vector<Argument> all = makeInputs(p);
  Program q = p;
  q.args.erase(q.args.begin());
  std::vector<Argument> rest = makeInputs(q);
  ASSERT_EQ(rest.size(), all.size() - 1);
  for (size_t i = 0; i < rest.size(); ++i) {
    if (const auto *t = std::get_if<Tensor>(&rest[i])) {
      EXPECT_EQ(t->storage, std::get<Tensor>(all[i + 1]).storage) << q.args[i].name;
    }
  }
}

TEST(DifftestGenerator, RegressionFilesKeepEachTensorsData) {
  Program p = generateProgram(23);
  for (size_t i = 0; i < p.args.size(); ++i)
    p.args[i].dataSeed = 1000 + i * 3; // not the positional default
  std::string file = printRegression(p, "none", "");
  Program q;
  std::string text;
  ASSERT_FALSE(parseRegression(file, q, text));
  size_t j = 0;
  for (const ArgSpec &a : p.args) {
    if (!a.present)
      continue;
    ASSERT_LT(j, q.args.size());
    if (a.isTensor) {
      EXPECT_EQ(q.args[j].dataSeed, a.dataSeed) << a.name;
    }
    ++j;
  }
  // A header line without `data`: the seed of the argument's position.
  Program r;
  ASSERT_FALSE(parseRegression("// difftest: class x seed 5 inputs 7 kernel k\n"
                               "// difftest: scalar n i64 3\n"
                               "// difftest: tensor t f32 shape 4 strides 1 offset 0 storage 4 exact 1\n"
                               "kernel k(n: i64, t: gm<f32>[_]) grid(1) {}\n",
                               r, text));
  ASSERT_EQ(r.args.size(), 2u);
  EXPECT_EQ(r.args[1].dataSeed, positionalDataSeed(7, 1));
}

TEST(DifftestMinimiser, ShrinksAPlantedFailure) {
  // The "failure": a valid program that scatters. The first seeds whose
  // program scatters among other statements shrink to a few statements
  // with no unused parameter.
  int checked = 0;
  for (uint64_t seed = 1; seed <= 400 && checked < 3; ++seed) {
    Program p = generateProgram(seed);
    std::string text = printKernel(p);
    if (text.find("scatter(") == std::string::npos || countStatements(p.body) < 6 ||
        !compileErrors(p).empty())
      continue;
    ++checked;
    auto classify = [](const Program &q) -> std::string {
      if (printKernel(q).find("scatter(") == std::string::npos)
        return "";
      return compileErrors(q).empty() ? "planted" : "rejected";
    };
    int tries = 0;
    MinimiseBudget budget;
    budget.maxTries = 3000;
    budget.maxSeconds = 60;
    Program small = minimise(p, "planted", classify, budget, tries);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", minimised in " + std::to_string(tries) +
                 " tries:\n" + printKernel(small));
    EXPECT_EQ(classify(small), "planted");
    EXPECT_LE(countStatements(small.body), 2u);
    EXPECT_LT(countStatements(small.body), countStatements(p.body));
    EXPECT_TRUE(unusedParameters(small).empty());
    EXPECT_LE(small.args.size(), 1u); // the scattered tensor
    EXPECT_LE(small.cparams.size(), 1u); // its dtype parameter, if it has one
  }
  EXPECT_EQ(checked, 3);
}

TEST(DifftestMinimiser, StopsAtTheDeadline) {
  Program p = generateProgram(5);
  int calls = 0;
  auto classify = [&](const Program &) -> std::string {
    ++calls;
    return "planted";
  };
  MinimiseBudget budget;
  budget.deadline = std::chrono::steady_clock::now();
  int tries = 0;
  Program out = minimise(p, "planted", classify, budget, tries);
  EXPECT_EQ(tries, 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(printKernel(out), printKernel(p));
}

} // namespace
