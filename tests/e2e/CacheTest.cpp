//===- CacheTest.cpp - Tiling keys and the in-process kernel cache --------===//
#include "jit/Compiler.h"
#include "tests/e2e/ScaleKernel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace tilejit;
using namespace tilejit::jit;

namespace {

TilingKey::Fields baseFields() {
  TilingKey::Fields f;
  f.kernel = "softmax";
  f.sourceHash = 0x1234;
  f.params = {{"T", dtypeValue(rt::ElemType::F16)}, {"BN", 1024}};
  f.level = "avx512";
  f.cpu = "znver4";
  f.features = "+avx512f";
  f.l1dBytes = 32768;
  f.tilejitVersion = "0.1.0";
  f.llvmVersion = "19.1.7";
  f.optLevel = 3;
  return f;
}

using test_support::kScale;

} // namespace

TEST(TilingKey, PrintsReadablyAndSortsParameters) {
  TilingKey k(baseFields());
  EXPECT_EQ(k.str(), "softmax[BN=1024,T=f16]@avx512.O3");
  EXPECT_NE(k.canonical().find("llvm:6:19.1.7;"), std::string::npos);
  EXPECT_EQ(k.symbolStem().size(), 3u + 16u);
  TilingKey same(baseFields());
  EXPECT_EQ(k, same);
  EXPECT_EQ(k.hash(), same.hash());
  EXPECT_EQ(std::hash<TilingKey>()(k), std::hash<TilingKey>()(same));
}

TEST(TilingKey, EveryFieldChangesTheKey) {
  std::vector<std::function<void(TilingKey::Fields &)>> edits = {
      [](auto &f) { f.kernel = "softmax2"; },
      [](auto &f) { f.sourceHash ^= 1; },
      [](auto &f) { f.params = {{"T", dtypeValue(rt::ElemType::BF16)}, {"BN", 1024}}; },
      [](auto &f) { f.params = {{"T", dtypeValue(rt::ElemType::F16)}, {"BN", 512}}; },
      [](auto &f) { f.params.push_back({"CAUSAL", true}); },
      [](auto &f) { f.level = "avx2"; },
      [](auto &f) { f.cpu = "haswell"; },
      [](auto &f) { f.features = "+avx2"; },
      [](auto &f) { f.l1dBytes = 49152; },
      [](auto &f) { f.tilejitVersion = "0.1.1"; },
      [](auto &f) { f.llvmVersion = "19.1.8"; },
      [](auto &f) { f.optLevel = 2; },
  };
  TilingKey base(baseFields());
  std::set<uint64_t> hashes{base.hash()};
  for (auto &edit : edits) {
    TilingKey::Fields f = baseFields();
    edit(f);
    TilingKey k(f);
    EXPECT_NE(k, base) << k.canonical();
    EXPECT_NE(k.canonical(), base.canonical());
    hashes.insert(k.hash());
  }
  EXPECT_EQ(hashes.size(), edits.size() + 1) << "hash collision between fields";
}

TEST(KernelCache, HitReturnsTheSameKernelWithoutCompiling) {
  Compiler &c = Compiler::instance();
  KernelSource src("cache_hit.tile", kScale);
  auto first = c.get(src, "scale", {{"T", "f32"}, {"BN", "48"}});
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_TRUE(first->compiled);
  CacheStats before = c.stats();
  auto second = c.get(src, "scale", {{"BN", "48"}, {"T", "f32"}}); // order-insensitive
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_FALSE(second->compiled);
  EXPECT_EQ(second->kernel.get(), first->kernel.get());
  CacheStats after = c.stats();
  EXPECT_EQ(after.compiles, before.compiles);
  EXPECT_EQ(after.memoryHits, before.memoryHits + 1);
  // Another specialisation is another kernel.
  auto other = c.get(src, "scale", {{"T", "f16"}, {"BN", "48"}});
  ASSERT_TRUE(static_cast<bool>(other));
  EXPECT_TRUE(other->compiled);
  EXPECT_NE(other->kernel->key(), first->kernel->key());
}

TEST(KernelCache, EightThreadsCompileOneNewKeyOnce) {
  Compiler &c = Compiler::instance();
  KernelSource src("cache_race.tile", kScale);
  CacheStats before = c.stats();
  std::vector<std::thread> threads;
  std::atomic<int> compiledCount{0}, ok{0};
  std::vector<const CompiledKernel *> seen(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto k = c.get(src, "scale", {{"T", "f16"}, {"BN", "112"}});
      if (!k) {
        llvm::consumeError(k.takeError());
        return;
      }
      ++ok;
      compiledCount += k->compiled;
      seen[t] = k->kernel.get();
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(compiledCount.load(), 1);
  EXPECT_EQ(c.stats().compiles, before.compiles + 1);
  for (int t = 1; t < 8; ++t)
    EXPECT_EQ(seen[t], seen[0]);
}

// Kernels linking against the runtime library before any of its functions
// is (each test is a process of its own): eight threads compile eight keys
// at once, f32 and f16 ones, so that first uses of one function race each
// other and first uses of different ones run side by side (ThreadSanitizer
// watches them under scripts/dev.sh tsan); every kernel then computes right.
TEST(KernelCache, EightThreadsFirstUseTheRuntimeLibraryAtOnce) {
  Compiler &c = Compiler::instance();
  KernelSource src("runtime_race.tile", kScale);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const bool half = t % 2;
      auto k = c.get(src, "scale",
                     {{"T", half ? "f16" : "f32"}, {"BN", std::to_string(40 + 8 * t)}});
      if (!k) {
        ADD_FAILURE() << llvm::toString(k.takeError());
        return;
      }
      // 100 elements: the last program's tile is partial (a row move).
      rt::ArgPack args;
      std::vector<float> x(100, 2.0f), y(100, 0.0f);
      std::vector<uint16_t> hx(100, 0x4000), hy(100, 0); // f16 2.0
      if (half)
        args.tensor(rt::ElemType::F16, hx.data(), {100})
            .tensor(rt::ElemType::F16, hy.data(), {100});
      else
        args.tensor(x.data(), {100}).tensor(y.data(), {100});
      args.f32(3.0f);
      if (llvm::Error err = k->kernel->launch(args)) {
        ADD_FAILURE() << llvm::toString(std::move(err));
        return;
      }
      for (int i = 0; i < 100; ++i)
        if (half ? hy[i] != 0x4600 : y[i] != 6.0f) { // f16 6.0
          ADD_FAILURE() << "thread " << t << ", element " << i;
          return;
        }
      ++ok;
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 8);
}

TEST(KernelCache, DslErrorsCarryLocationsAndAreNotCached) {
  Compiler &c = Compiler::instance();
  KernelSource bad("broken.tile", "kernel k(x: gm<f32>[N]) grid(N) {\n  let a = nope;\n}\n");
  for (int i = 0; i < 2; ++i) {
    auto k = c.get(bad, "k", {});
    ASSERT_FALSE(static_cast<bool>(k));
    std::string msg = llvm::toString(k.takeError());
    EXPECT_NE(msg.find("broken.tile:2:11: error: use of undeclared name 'nope'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("^"), std::string::npos) << msg;
  }
}

TEST(KernelCache, LaunchChecksShapeConstraints) {
  Compiler &c = Compiler::instance();
  KernelSource src("constraint.tile", kScale);
  auto k = c.get(src, "scale", {{"T", "f32"}});
  ASSERT_TRUE(static_cast<bool>(k));
  std::vector<float> x(100, 2.0f), y(99, 0.0f);
  rt::ArgPack args;
  args.tensor(x.data(), {100}).tensor(y.data(), {99}).f32(3.0f);
  llvm::Error err = k->kernel->launch(args);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "y: size of axis 0 must equal N (size of x axis 0)");
  EXPECT_EQ(y[0], 0.0f) << "nothing may run when a constraint fails";
  rt::ArgPack good;
  std::vector<float> y2(100, 0.0f);
  good.tensor(x.data(), {100}).tensor(y2.data(), {100}).f32(3.0f);
  ASSERT_FALSE(static_cast<bool>(k->kernel->launch(good)));
  for (float v : y2)
    EXPECT_EQ(v, 6.0f);
}

TEST(KernelCache, LaunchChecksTheArgumentsAgainstTheSignature) {
  Compiler &c = Compiler::instance();
  KernelSource src("signature.tile", kScale);
  auto k = c.get(src, "scale", {{"T", "f32"}});
  ASSERT_TRUE(static_cast<bool>(k));
  const auto &sig = k->kernel->signature();
  ASSERT_EQ(sig.size(), 3u);
  EXPECT_EQ(sig[0].name, "x");
  EXPECT_TRUE(sig[0].tensor);
  EXPECT_EQ(sig[0].type, rt::ElemType::F32);
  EXPECT_EQ(sig[0].rank, 1);
  EXPECT_EQ(sig[2].name, "a");
  EXPECT_FALSE(sig[2].tensor);

  std::vector<float> x(100, 2.0f), y(100, 0.0f);
  std::vector<int64_t> xi(100, 2);
  std::vector<float> x2(100 * 2, 2.0f);
  using Build = std::function<void(rt::ArgPack &)>;
  const std::pair<Build, const char *> cases[] = {
      {[&](rt::ArgPack &a) { a.tensor(x.data(), {100}).tensor(y.data(), {100}); },
       "kernel scale takes 3 arguments (x, y, a); given 2"},
      {[&](rt::ArgPack &a) { a.tensor(x.data(), {100}).tensor(y.data(), {100}).f32(3).i64(1); },
       "kernel scale takes 3 arguments (x, y, a); given 4"},
      {[&](rt::ArgPack &a) { a.tensor(x.data(), {100}).tensor(y.data(), {100}).i64(3); },
       "argument 2 ('a') of kernel scale: is a scalar f32; given a scalar i64"},
      {[&](rt::ArgPack &a) { a.tensor(x.data(), {100}).f32(1).f32(3); },
       "argument 1 ('y') of kernel scale: is a tensor gm<f32> of rank 1; given a scalar f32"},
      {[&](rt::ArgPack &a) { a.tensor(xi.data(), {100}).tensor(y.data(), {100}).f32(3); },
       "argument 0 ('x') of kernel scale: is a tensor gm<f32> of rank 1; given a tensor of i64"},
      {[&](rt::ArgPack &a) { a.tensor(x2.data(), {100, 2}).tensor(y.data(), {100}).f32(3); },
       "argument 0 ('x') of kernel scale: is a tensor gm<f32> of rank 1; given rank 2"},
      {[&](rt::ArgPack &a) {
         a.tensor(x.data(), {1, 1, 1, 1, 1, 1, 100}).tensor(y.data(), {100}).f32(3);
       },
       "argument 0 ('x') of kernel scale: is a tensor gm<f32> of rank 1; given rank 7"},
      {[&](rt::ArgPack &a) {
         a.tensor(x.data(), {100}).tensor(y.data(), {100}, {1, 1}).f32(3);
       },
       "argument 1 ('y') of kernel scale: is a tensor gm<f32> of rank 1; given sizes and "
       "strides of different lengths"},
      {[&](rt::ArgPack &a) {
         a.tensor(y.data(), {100}).named("y").tensor(x.data(), {100}).named("x").f32(3);
       },
       "argument 0 ('x') of kernel scale: given an argument meant for 'y'"},
      {[&](rt::ArgPack &a) {
         a.tensor(static_cast<float *>(nullptr), {100}).tensor(y.data(), {100}).f32(3);
       },
       "argument 0 ('x') of kernel scale: has elements but no data (a null pointer)"},
      {[&](rt::ArgPack &a) { a.tensor(x.data(), {-4}).tensor(y.data(), {-4}).f32(3); },
       "argument 0 ('x') of kernel scale: size -4 of axis 0 is negative"},
  };
  for (const auto &[build, message] : cases) {
    rt::ArgPack args;
    build(args);
    llvm::Error err = k->kernel->launch(args);
    ASSERT_TRUE(static_cast<bool>(err)) << message;
    EXPECT_EQ(llvm::toString(std::move(err)), message);
    for (float v : y)
      ASSERT_EQ(v, 0.0f) << "nothing may run when an argument is wrong: " << message;
  }
  // Named and well-typed, it runs; an empty tensor may have no data.
  rt::ArgPack good;
  good.tensor(x.data(), {100}).named("x").tensor(y.data(), {100}).named("y").f32(3).named("a");
  ASSERT_FALSE(static_cast<bool>(k->kernel->launch(good)));
  EXPECT_EQ(y[99], 6.0f);
  rt::ArgPack empty;
  empty.tensor(static_cast<float *>(nullptr), {0}).tensor(static_cast<float *>(nullptr), {0}).f32(3);
  EXPECT_FALSE(static_cast<bool>(k->kernel->launch(empty)));
}

TEST(KernelCache, EmitReturnsEachStage) {
  Compiler &c = Compiler::instance();
  KernelSource src("emit.tile", kScale);
  Specialization spec{{"T", "f16"}};
  auto tile = c.emit(src, "scale", spec, DumpStage::TileOpt);
  ASSERT_TRUE(static_cast<bool>(tile));
  EXPECT_NE(tile->find("fused"), std::string::npos);
  auto ll = c.emit(src, "scale", spec, DumpStage::Llvm);
  ASSERT_TRUE(static_cast<bool>(ll));
  std::string lanes = c.vectorLanes() == 16 ? "<16 x float>" : "<8 x float>";
  EXPECT_NE(ll->find(lanes), std::string::npos);
  auto as = c.emit(src, "scale", spec, DumpStage::Asm);
  ASSERT_TRUE(static_cast<bool>(as));
  EXPECT_NE(as->find("vcvtph2ps"), std::string::npos) << "f16 loads go through F16C";
}

TEST(KernelCache, OneSpecialisationHasOneKey) {
  Compiler &c = Compiler::instance();
  KernelSource src("one_key.tile", kScale);
  auto key = [&](const Specialization &spec) {
    auto k = c.makeKey(src, "scale", spec);
    EXPECT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    return k ? k->str() : std::string();
  };
  // The default given or not, in any spelling: one key, naming every value.
  const std::string want = "scale[BN=64,T=f32]@";
  for (const Specialization &spec :
       {Specialization{{"T", "f32"}}, Specialization{{"T", "f32"}, {"BN", "64"}},
        Specialization{{"BN", "0x40"}, {"T", "f32"}}, Specialization{{"BN", "0064"}, {"T", "f32"}}})
    EXPECT_EQ(key(spec).rfind(want, 0), 0u) << key(spec);
  // The emitted stage and the compiled kernel come from the same binding.
  auto tile = c.emit(src, "scale", {{"BN", "0x40"}, {"T", "f32"}}, DumpStage::Tile);
  ASSERT_TRUE(static_cast<bool>(tile)) << llvm::toString(tile.takeError());
  EXPECT_NE(tile->find("tile<f32, 64>"), std::string::npos) << *tile;
}

TEST(KernelCache, OneParsePerSourceAndOneTypedValuePerKey) {
  Compiler &c = Compiler::instance();
  // A text no other test uses, so its parse is counted here.
  KernelSource src("one_parse.tile", std::string(kScale) + "\n// one parse\n");
  const uint64_t before = KernelSource::parseCount();
  // Keys, emits and compiles of several specialisations, in text and typed.
  auto typed = c.specialize(src, "scale", {{"T", dtypeValue(rt::ElemType::F32)}, {"BN", 32}});
  ASSERT_TRUE(static_cast<bool>(typed)) << llvm::toString(typed.takeError());
  EXPECT_TRUE(typed->bound());
  EXPECT_EQ(typed->str(), "BN=32,T=f32");
  auto fromText = c.specialize(src, "scale", {{"BN", "0x20"}, {"T", "f32"}});
  ASSERT_TRUE(static_cast<bool>(fromText)) << llvm::toString(fromText.takeError());
  EXPECT_EQ(*fromText, *typed);
  EXPECT_EQ(fromText->hash(), typed->hash());
  for (const Specialization &spec :
       {Specialization{{"T", "f32"}, {"BN", "32"}}, *typed,
        Specialization{{"T", dtypeValue(rt::ElemType::F16)}, {"BN", 16}}}) {
    auto k = c.get(src, "scale", spec);
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    // The key holds the bound value and reuses its hash.
    EXPECT_TRUE(k->kernel->key().fields().params.bound());
    auto tile = c.emit(src, "scale", spec, DumpStage::Tile);
    ASSERT_TRUE(static_cast<bool>(tile)) << llvm::toString(tile.takeError());
  }
  auto key = c.makeKey(src, "scale", *typed);
  ASSERT_TRUE(static_cast<bool>(key));
  EXPECT_EQ(key->fields().params, *typed);
  EXPECT_EQ(KernelSource::parseCount() - before, 1u) << "one parse per source text";
  // Another KernelSource object with the same text shares the parse.
  KernelSource copy("one_parse_copy.tile", src.text());
  ASSERT_TRUE(static_cast<bool>(c.makeKey(copy, "scale", {{"T", "f32"}})));
  EXPECT_EQ(KernelSource::parseCount() - before, 1u);
}

TEST(KernelCache, TypedValuesOfTheWrongKindNameTheParameter) {
  Compiler &c = Compiler::instance();
  KernelSource src("wrong_kind.tile", kScale);
  auto k = c.makeKey(src, "scale", {{"T", dtypeValue(rt::ElemType::F32)}, {"BN", true}});
  ASSERT_FALSE(static_cast<bool>(k));
  std::string text = llvm::toString(k.takeError());
  EXPECT_NE(text.find("'true' is a boolean, but 'BN' takes an integer"), std::string::npos)
      << text;
  EXPECT_EQ(text.rfind("wrong_kind.tile:", 0), 0u) << text;
}

TEST(KernelCache, BadSpecialisationsAreRejectedBeforeKeying) {
  Compiler &c = Compiler::instance();
  KernelSource src("bad_spec.tile", kScale);
  const std::pair<Specialization, const char *> cases[] = {
      {{{"T", "f32"}, {"T", "f16"}}, "'T' of kernel 'scale' is given twice"},
      {{{"T", "f32"}, {"BM", "64"}}, "unknown compile-time parameter 'BM' for kernel 'scale'; "
                                     "did you mean 'BN'?"},
      {{{"T", "f32"}, {"BN", "99999999999999999999"}}, "out of range for 'BN'"},
      {{{"T", "f32"}, {"BN", "72057594037927936"}}, "more than 2^40 elements"},
  };
  CacheStats before = c.stats();
  for (const auto &[spec, message] : cases) {
    // The last case binds (the value is an int64) and fails in the front end.
    auto k = c.get(src, "scale", spec);
    ASSERT_FALSE(static_cast<bool>(k));
    std::string text = llvm::toString(k.takeError());
    EXPECT_NE(text.find(message), std::string::npos) << text;
    EXPECT_EQ(text.rfind("bad_spec.tile:", 0), 0u) << text;
  }
  EXPECT_EQ(c.stats().compiles, before.compiles);
}

TEST(KernelSource, FromFileReadsOnlyRegularFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tilejit-src-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "fifo.tile").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, const char *> cases[] = {
      {dir.string(), "it is a directory"},
      {fifo, "it is not a regular file"},
      {(dir / "missing.tile").string(), "No such file or directory"},
  };
  for (const auto &[path, why] : cases) {
    auto s = KernelSource::fromFile(path);
    ASSERT_FALSE(static_cast<bool>(s)) << path;
    std::string text = llvm::toString(s.takeError());
    EXPECT_EQ(text, "cannot read kernel source '" + path + "': " + why);
  }
  {
    std::ofstream(dir / "ok.tile") << kScale;
  }
  auto ok = KernelSource::fromFile((dir / "ok.tile").string());
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->text(), kScale);
  fs::remove_all(dir);
}
