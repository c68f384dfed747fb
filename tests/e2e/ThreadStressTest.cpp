//===- ThreadStressTest.cpp - Streams, executors and threads --------------===//
//
// The C API under threads: stream destruction against a device-wide
// synchronise, a repeatable executor on several streams at once, failures
// on a shared stream, the executor lifetime rules (single use, repeatable,
// destroy, stale handles), and a stress run of every operator from 8
// threads whose outputs must equal a single-threaded run bit for bit.
//
// Phase 1 goes through aclnn::prepareOp (what every GetWorkspaceSize calls
// with its arguments packed), phase 2 through the public aclnnXxx.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "runtime/Runtime.h"
#include "ops/Operators.h"
#include "ops/Workloads.h"
#include "ops/common/RunStates.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"
#include "ops/host/DataType.h"
#include "ops/host/Stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace tilejit;
using host::DataType;
using host::TensorView;

namespace {

using Bytes = std::vector<unsigned char>;

std::string recentError() {
  const char *m = aclGetRecentErrMsg();
  return m ? std::string(m) : std::string();
}

/// `count` f16 values uniform in [-1, 1).
Bytes randomHalves(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Bytes out(static_cast<size_t>(count * 2));
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t h = host::floatToHalfBits(u(rng));
    std::memcpy(&out[static_cast<size_t>(i * 2)], &h, 2);
  }
  return out;
}

/// One operator call with its own buffers: the same seed gives the same
/// inputs, so two jobs of one kind and seed must produce equal outputs.
class Job {
public:
  virtual ~Job() = default;
  /// Restores every buffer the call writes to its state before any call.
  virtual void reset() = 0;
  /// Phase 1 (the C API's own path).
  virtual aclnnStatus prepare(uint64_t &workspaceSize,
                              aclOpExecutor *&executor) = 0;
  /// Phase 2 through the public entry point.
  virtual aclnnStatus launch(void *workspace, uint64_t workspaceSize,
                             aclOpExecutor *executor, aclrtStream stream) = 0;
  /// Everything the call writes.
  virtual Bytes outputs() const = 0;
};

/// A job of the operator whose arguments are `ArgsT` and whose phase 2 is
/// `Run`; the subclass fills `args_`.
template <class ArgsT, aclnnStatus (*Run)(void *, uint64_t, aclOpExecutor *, aclrtStream)>
class JobOf : public Job {
public:
  aclnnStatus prepare(uint64_t &ws, aclOpExecutor *&exec) override {
    return aclnn::prepareOp(args_, &ws, &exec);
  }
  aclnnStatus launch(void *w, uint64_t n, aclOpExecutor *e, aclrtStream s) override {
    return Run(w, n, e, s);
  }

protected:
  ArgsT args_;
};

/// ScatterPaKvCache, Norm: 6 tokens of 2 x 16 f16 into a 4 x 8-slot cache.
class ScatterJob : public JobOf<aclnn::ScatterPaKvCacheArgs, aclnnScatterPaKvCache> {
public:
  explicit ScatterJob(uint32_t seed)
      : key_(randomHalves(6 * 32, seed)), value_(randomHalves(6 * 32, seed + 1)),
        cache0_(randomHalves(4 * 8 * 32, seed + 2)), kc_(cache0_), vc_(cache0_),
        slots_{3, 17, 8, -1, 30, 21} {
    views_[0] = host::contiguousView(key_.data(), DataType::Float16, {6, 2, 16});
    views_[1] = host::contiguousView(kc_.data(), DataType::Float16, {4, 8, 2, 16});
    views_[2] = host::contiguousView(slots_.data(), DataType::Int32, {6});
    views_[3] = host::contiguousView(value_.data(), DataType::Float16, {6, 2, 16});
    views_[4] = host::contiguousView(vc_.data(), DataType::Float16, {4, 8, 2, 16});
    args_.key = &views_[0];
    args_.keyCacheRef = &views_[1];
    args_.slotMapping = &views_[2];
    args_.value = &views_[3];
    args_.valueCacheRef = &views_[4];
    args_.cacheModeOptional = "Norm";
  }
  void reset() override {
    kc_ = cache0_; // same size: the views stay valid
    vc_ = cache0_;
  }
  Bytes outputs() const override {
    Bytes out = kc_;
    out.insert(out.end(), vc_.begin(), vc_.end());
    return out;
  }

private:
  Bytes key_, value_, cache0_, kc_, vc_;
  std::vector<int32_t> slots_;
  TensorView views_[5];
};

/// GatherPaKvCache, Norm: lengths 5 and 11 from a 4 x 8-slot cache of
/// 2 x 16 f16.
class GatherJob : public JobOf<aclnn::GatherPaKvCacheArgs, aclnnGatherPaKvCache> {
public:
  explicit GatherJob(uint32_t seed)
      : kc_(randomHalves(4 * 8 * 32, seed)), vc_(randomHalves(4 * 8 * 32, seed + 1)),
        ko_(16 * 32 * 2), vo_(16 * 32 * 2), table_{2, 0, 3, 1}, lens_{5, 11} {
    views_[0] = host::contiguousView(kc_.data(), DataType::Float16, {4, 8, 2, 16});
    views_[1] = host::contiguousView(vc_.data(), DataType::Float16, {4, 8, 2, 16});
    views_[2] = host::contiguousView(table_.data(), DataType::Int32, {2, 2});
    views_[3] = host::contiguousView(lens_.data(), DataType::Int32, {2});
    views_[4] = host::contiguousView(ko_.data(), DataType::Float16, {16, 2, 16});
    views_[5] = host::contiguousView(vo_.data(), DataType::Float16, {16, 2, 16});
    args_.keyCache = &views_[0];
    args_.valueCache = &views_[1];
    args_.blockTables = &views_[2];
    args_.seqLens = &views_[3];
    args_.keyRef = &views_[4];
    args_.valueRef = &views_[5];
    args_.cacheMode = "Norm";
  }
  void reset() override {
    std::fill(ko_.begin(), ko_.end(), 0xA5);
    std::fill(vo_.begin(), vo_.end(), 0xA5);
  }
  Bytes outputs() const override {
    Bytes out = ko_;
    out.insert(out.end(), vo_.begin(), vo_.end());
    return out;
  }

private:
  Bytes kc_, vc_, ko_, vo_;
  std::vector<int32_t> table_, lens_;
  TensorView views_[6];
};

/// IncreFlashAttentionV4, BSH, paged (blocks of 128): B = 2, N = 4 over
/// N_kv = 2, D = 64, f16, the given KV lengths.
class IfaJob
    : public JobOf<aclnn::IncreFlashAttentionV4Args, aclnnIncreFlashAttentionV4> {
public:
  IfaJob(uint32_t seed, std::vector<int64_t> lengths) {
    const int64_t b = 2, n = 4, nkv = 2, d = 64, bs = 128;
    int64_t per = 1;
    for (int64_t l : lengths)
      per = std::max(per, (l + bs - 1) / bs);
    const int64_t blocks = b * per;
    q_ = randomHalves(b * n * d, seed);
    k_ = randomHalves(blocks * bs * nkv * d, seed + 1);
    v_ = randomHalves(blocks * bs * nkv * d, seed + 2);
    out_.resize(q_.size());
    table_.resize(static_cast<size_t>(blocks));
    std::iota(table_.begin(), table_.end(), 0);
    std::shuffle(table_.begin(), table_.end(), std::mt19937(seed + 3));
    lens_.values = std::move(lengths);
    qv_ = host::contiguousView(q_.data(), DataType::Float16, {b, 1, n * d});
    kl_.entries.emplace_back(
        host::contiguousView(k_.data(), DataType::Float16, {blocks, bs, nkv * d}));
    vl_.entries.emplace_back(
        host::contiguousView(v_.data(), DataType::Float16, {blocks, bs, nkv * d}));
    tv_ = host::contiguousView(table_.data(), DataType::Int32, {b, per});
    ov_ = host::contiguousView(out_.data(), DataType::Float16, {b, 1, n * d});
    args_.query = &qv_;
    args_.key = &kl_;
    args_.value = &vl_;
    args_.actualSeqLengths = &lens_;
    args_.blocktable = &tv_;
    args_.blockSize = bs;
    args_.numHeads = n;
    args_.numKeyValueHeads = nkv;
    args_.scaleValue = 0.125;
    args_.inputLayout = "BSH";
    args_.innerPrecise = 1;
    args_.attentionOut = &ov_;
  }
  /// Makes the block table name a block past the cache (a launch error).
  void breakTable() { table_[0] = 1 << 20; }
  void reset() override { std::fill(out_.begin(), out_.end(), 0xA5); }
  Bytes outputs() const override { return out_; }

private:
  Bytes q_, k_, v_, out_;
  std::vector<int32_t> table_;
  host::IntArray lens_;
  TensorView qv_, tv_, ov_;
  host::TensorList kl_, vl_;
};

/// NsaCompressWithCache: 4 entries of 4 heads x 64 f16, windows of 32
/// (stride 16) from one 128-token page each.
class NsaJob : public JobOf<aclnn::NsaCompressWithCacheArgs, aclnnNsaCompressWithCache> {
public:
  explicit NsaJob(uint32_t seed)
      : input_(randomHalves(4 * 128 * 4 * 64, seed)), weight_(randomHalves(32 * 4, seed + 1)),
        out0_(randomHalves(4 * 4 * 64, seed + 2)), out_(out0_), table_{3, 1, 0, 2},
        slots_{2, 0, 3, 1} {
    lens_.values = {48, 64, 96, 128};
    views_[0] = host::contiguousView(input_.data(), DataType::Float16, {4, 128, 4, 64});
    views_[1] = host::contiguousView(weight_.data(), DataType::Float16, {32, 4});
    views_[2] = host::contiguousView(slots_.data(), DataType::Int32, {4});
    views_[3] = host::contiguousView(table_.data(), DataType::Int32, {4, 1});
    views_[4] = host::contiguousView(out_.data(), DataType::Float16, {4, 4, 64});
    args_.input = &views_[0];
    args_.weight = &views_[1];
    args_.slotMapping = &views_[2];
    args_.actSeqLenOptional = &lens_;
    args_.blockTableOptional = &views_[3];
    args_.compressBlockSize = 32;
    args_.compressStride = 16;
    args_.actSeqLenType = 1;
    args_.pageBlockSize = 128;
    args_.outputCache = &views_[4];
  }
  void reset() override { out_ = out0_; }
  Bytes outputs() const override { return out_; }

private:
  Bytes input_, weight_, out0_, out_;
  std::vector<int32_t> table_, slots_;
  host::IntArray lens_;
  TensorView views_[5];
};

/// FlashAttentionUnpaddingScoreGradV5: two sequences of 48 and 80 tokens,
/// 2 query heads over 1 KV head, D = 64, f16.
class FagJob : public JobOf<aclnn::FlashAttentionUnpaddingScoreGradV5Args,
                            aclnnFlashAttentionUnpaddingScoreGradV5> {
public:
  explicit FagJob(uint32_t seed) : data_(config(seed)) { args_ = data_.args(); }
  void reset() override { data_.resetOutputs(); }
  Bytes outputs() const override {
    Bytes out;
    for (const char *name : {"dq", "dk", "dv"}) {
      std::vector<double> values = data_.output(name);
      const auto *p = reinterpret_cast<const unsigned char *>(values.data());
      out.insert(out.end(), p, p + values.size() * sizeof(double));
    }
    return out;
  }

private:
  static ops::fag::Config config(uint32_t seed) {
    ops::fag::Config c;
    c.dtype = DataType::Float16;
    c.seqQ = c.seqKv = {48, 80};
    c.n1 = 2;
    c.n2 = 1;
    c.d = 64;
    c.seed = seed;
    return c;
  }
  ops::fag::Data data_;
};

constexpr int kKinds = 5;
/// The seed of every job whose outputs are compared with expectedOutput().
constexpr uint32_t kSeed = 100;

std::unique_ptr<Job> makeJob(int kind, uint32_t seed) {
  switch (kind) {
  case 0:
    return std::make_unique<ScatterJob>(seed);
  case 1:
    return std::make_unique<GatherJob>(seed);
  case 2:
    return std::make_unique<IfaJob>(seed, std::vector<int64_t>{150, 233});
  case 3:
    return std::make_unique<NsaJob>(seed);
  default:
    return std::make_unique<FagJob>(seed);
  }
}

/// A call in flight: its workspace lives until the stream is synchronised.
struct Pending {
  std::unique_ptr<unsigned char[]> workspace;
};

/// Runs phase 1 and queues phase 2 on `stream`; the workspace goes into
/// `pending`. Returns the first non-success status.
aclnnStatus submit(Job &job, aclrtStream stream, std::vector<Pending> &pending) {
  uint64_t size = 0;
  aclOpExecutor *exec = nullptr;
  if (aclnnStatus s = job.prepare(size, exec))
    return s;
  Pending p{std::make_unique<unsigned char[]>(size ? size : 1)};
  aclnnStatus s = job.launch(p.workspace.get(), size, exec, stream);
  pending.push_back(std::move(p));
  return s;
}

/// What a job of `kind` writes when run alone, single-threaded, on the
/// default stream (computed once per kind, on first use: a test compiles
/// only the kernels it runs).
const Bytes &expectedOutput(int kind) {
  // Referencing the workloads links every operator's registration into a
  // test program that links the static library (ops/host/OpRegistry.h).
  static const bool linked = !ops::workloads().empty();
  EXPECT_TRUE(linked);
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Bytes>> expected(kKinds);
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = expected[static_cast<size_t>(kind)];
  if (!slot) {
    auto job = makeJob(kind, kSeed);
    job->reset();
    std::vector<Pending> pending;
    EXPECT_EQ(submit(*job, nullptr, pending), ACLNN_SUCCESS) << recentError();
    slot = std::make_unique<Bytes>(job->outputs());
  }
  return *slot;
}

aclrtStream newStream() {
  aclrtStream s = nullptr;
  EXPECT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  return s;
}

/// Blocks `stream` until the returned promise is set (a task queued
/// directly on the runtime stream).
std::promise<void> gate(aclrtStream stream) {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  static_cast<host::Stream *>(stream)->submit([opened] {
    opened.wait();
    return host::Status::ok();
  });
  return open;
}

} // namespace

//===----------------------------------------------------------------------===//
// Streams across threads
//===----------------------------------------------------------------------===//

TEST(Threads, DestroyStreamRacesDeviceSynchronize) {
  // Streams created, given work and destroyed on one thread while others
  // synchronise the whole device (also through aclrtResetDevice): every
  // call succeeds and nothing is used after it was freed (ASan, TSan).
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> syncers;
  for (int t = 0; t < 2; ++t)
    syncers.emplace_back([&, t] {
      while (!done) {
        aclError e = t == 0 ? aclrtSynchronizeDevice() : aclrtResetDevice(0);
        if (e != ACL_SUCCESS)
          ++failures;
      }
    });
  std::vector<int32_t> src(256, 7), dst(256);
  for (int i = 0; i < 500; ++i) {
    aclrtStream s = newStream();
    ASSERT_EQ(aclrtMemcpyAsync(dst.data(), 1024, src.data(), 1024,
                               ACL_MEMCPY_HOST_TO_DEVICE, s),
              ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    ASSERT_EQ(dst[255], 7) << "destroy waits for the stream's work";
    dst[255] = 0;
  }
  done = true;
  for (auto &t : syncers)
    t.join();
  EXPECT_EQ(failures, 0);
}

TEST(Threads, SubmitRacesDestroyStream) {
  // A phase 2 racing a destroy of its stream is either refused (the handle
  // is gone) or runs before the destroy returns: never a use after free.
  GatherJob job(kSeed);
  for (int i = 0; i < 200; ++i) {
    aclrtStream s = newStream();
    job.reset();
    uint64_t size = 0;
    aclOpExecutor *exec = nullptr;
    ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
    std::vector<unsigned char> ws(size + 1);
    aclnnStatus launched = ACLNN_SUCCESS;
    std::thread submitter([&] { launched = job.launch(ws.data(), size, exec, s); });
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    submitter.join();
    if (launched == ACLNN_SUCCESS) {
      ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
      EXPECT_EQ(job.outputs(), expectedOutput(1));
    } else {
      EXPECT_EQ(launched, ACLNN_ERR_PARAM_INVALID);
      // Refused before it was consumed: the executor is still live.
      EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_SUCCESS);
    }
  }
}

//===----------------------------------------------------------------------===//
// A repeatable executor on several streams at once
//===----------------------------------------------------------------------===//

namespace {
/// A run state as the operators keep one: a buffer and a pack over it.
struct PackedBuffer {
  std::vector<float> buffer = std::vector<float>(64, 0.0f);
  rt::ArgPack pack;
  std::unique_ptr<PackedBuffer> clone() const {
    auto c = std::make_unique<PackedBuffer>();
    c->pack = pack;
    ops::relocateBuffer(buffer, c->buffer, c->pack);
    return c;
  }
};
} // namespace

TEST(Threads, ArgPackCopiesPointAtTheirOwnValues) {
  float outside = 0;
  std::vector<float> buffer(16);
  rt::ArgPack a;
  a.i64(42).named("n");
  a.tensor(buffer.data() + 4, {4}).named("inside");
  a.tensor(&outside, {1}).named("outside");
  a.f32(1.5f);
  rt::ArgPack b = a;
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NE(b.data()[i], a.data()[i]) << "entry " << i << " is the copy's own";
    EXPECT_EQ(b.entry(i).name, a.entry(i).name);
  }
  EXPECT_EQ(*static_cast<const int64_t *>(b.data()[0]), 42);
  EXPECT_EQ(*static_cast<const float *>(b.data()[3]), 1.5f);
  std::vector<float> other(16);
  b.relocate(buffer.data(), buffer.size() * sizeof(float), other.data());
  auto dataOf = [](const rt::ArgPack &p, size_t i) {
    return static_cast<const rt::TensorDesc *>(p.data()[i])->data;
  };
  EXPECT_EQ(dataOf(b, 1), other.data() + 4);
  EXPECT_EQ(dataOf(b, 2), &outside); // outside the buffer: kept
  EXPECT_EQ(dataOf(a, 1), buffer.data() + 4); // the original is untouched
  rt::ArgPack moved = std::move(b);
  EXPECT_EQ(dataOf(moved, 1), other.data() + 4);
}

TEST(Threads, ConcurrentRunsGetTheirOwnState) {
  auto first = std::make_unique<PackedBuffer>();
  first->pack.tensor(first->buffer.data(), {64}).named("ws");
  const PackedBuffer *firstState = first.get();
  ops::RunStates<PackedBuffer> states(std::move(first));
  // Run 1 holds a state while runs 2 and 3 start: three distinct states,
  // each run's pack over its own buffer.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<const PackedBuffer *> seen(3, nullptr);
  std::vector<int> ownBuffer(3, 0);
  std::barrier holding(3);
  auto runner = [&](int i) {
    return std::thread([&, i] {
      (void)states.run([&](PackedBuffer &s) {
        seen[static_cast<size_t>(i)] = &s;
        ownBuffer[static_cast<size_t>(i)] =
            static_cast<const rt::TensorDesc *>(s.pack.data()[0])->data == s.buffer.data();
        holding.arrive_and_wait();
        released.wait();
        return host::Status::ok();
      });
    });
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.push_back(runner(i));
  release.set_value();
  for (auto &t : threads)
    t.join();
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_NE(seen[1], seen[2]);
  EXPECT_NE(seen[0], seen[2]);
  EXPECT_TRUE(std::count(seen.begin(), seen.end(), firstState) == 1);
  EXPECT_EQ(ownBuffer, std::vector<int>(3, 1));
  // Later runs reuse the pooled states (no new clone).
  std::set<const PackedBuffer *> reused;
  for (int i = 0; i < 5; ++i)
    (void)states.run([&](PackedBuffer &s) {
      reused.insert(&s);
      return host::Status::ok();
    });
  EXPECT_EQ(reused.size(), 1u);
  EXPECT_TRUE(std::count(seen.begin(), seen.end(), *reused.begin()) == 1);
}

TEST(Threads, RepeatableIfaExecutorOnFourStreamsAtOnce) {
  // KV lengths that split into several parts (the partial results the
  // combine kernel reads are per run): every launch writes the same,
  // correct output however the runs interleave. (Runs of one executor
  // compute equal partials, so sharing them would mostly go unseen here;
  // ConcurrentRunsGetTheirOwnState checks the isolation itself.)
  IfaJob reference(7, {1500, 2047});
  reference.reset();
  std::vector<Pending> pending;
  ASSERT_EQ(submit(reference, nullptr, pending), ACLNN_SUCCESS) << recentError();
  const Bytes expected = reference.outputs();

  IfaJob job(7, {1500, 2047});
  uint64_t size = 0;
  aclOpExecutor *exec = nullptr;
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_SUCCESS);
  constexpr int kStreams = 4, kRounds = 40, kLaunches = 4;
  std::vector<aclrtStream> streams;
  for (int i = 0; i < kStreams; ++i)
    streams.push_back(newStream());
  std::vector<unsigned char> ws(size + 1);
  std::barrier sync(kStreams + 1);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kStreams; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        sync.arrive_and_wait(); // the output was reset
        for (int l = 0; l < kLaunches; ++l)
          if (job.launch(ws.data(), size, exec, streams[t]) != ACLNN_SUCCESS)
            ++failures;
        if (aclrtSynchronizeStream(streams[t]) != ACL_SUCCESS)
          ++failures;
        sync.arrive_and_wait(); // all ran
      }
    });
  int wrong = 0;
  for (int r = 0; r < kRounds; ++r) {
    job.reset();
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    wrong += job.outputs() != expected;
  }
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(wrong, 0) << "rounds with a wrong output, of " << kRounds;
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_SUCCESS);
  for (aclrtStream s : streams)
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Failures on a shared stream
//===----------------------------------------------------------------------===//

TEST(Threads, AFailureOnASharedStreamNeverHidesAnotherThreadsWork) {
  // This thread (A) queues a failing call, thread B a scatter behind it on
  // the same stream; then either synchronises first. B's scatter runs
  // either way, and A's failure reaches A.
  aclrtStream shared = newStream();
  for (bool failingThreadSyncsFirst : {true, false}) {
    IfaJob bad(9, {150, 233});
    bad.breakTable();
    ScatterJob good(kSeed);
    good.reset();
    std::promise<void> open = gate(shared);
    std::vector<Pending> pa, pb;
    ASSERT_EQ(submit(bad, shared, pa), ACLNN_SUCCESS);
    std::promise<void> submitted, go;
    aclnnStatus launchedB = ACLNN_SUCCESS;
    aclError fromB = ACL_SUCCESS;
    std::string messageB;
    std::thread b([&] {
      launchedB = submit(good, shared, pb);
      submitted.set_value();
      go.get_future().wait();
      fromB = aclrtSynchronizeStream(shared);
      messageB = recentError();
    });
    submitted.get_future().wait();
    open.set_value();
    aclError fromA = ACL_SUCCESS;
    std::string messageA;
    if (failingThreadSyncsFirst) {
      fromA = aclrtSynchronizeStream(shared);
      messageA = recentError();
      go.set_value();
      b.join();
      // A's failure was A's to take.
      EXPECT_EQ(fromB, ACL_SUCCESS) << messageB;
    } else {
      go.set_value();
      b.join();
      fromA = aclrtSynchronizeStream(shared);
      messageA = recentError();
      // B is told that another thread's work failed (not cleared: A still
      // gets it).
      EXPECT_EQ(fromB, ACLNN_ERR_PARAM_INVALID);
      EXPECT_NE(messageB.find("work another thread queued on this stream "
                              "failed: aclnnIncreFlashAttentionV4: blocktable"),
                std::string::npos)
          << messageB;
    }
    EXPECT_EQ(launchedB, ACLNN_SUCCESS);
    EXPECT_EQ(fromA, ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(messageA.find("aclrtSynchronizeStream: aclnnIncreFlashAttentionV4: "
                            "blocktable: entry [0, 0] = 1048576"),
              std::string::npos)
        << messageA;
    EXPECT_EQ(good.outputs(), expectedOutput(0));
    // Reported to its owner: the stream is clean again.
    EXPECT_EQ(aclrtSynchronizeStream(shared), ACL_SUCCESS);
  }
  EXPECT_EQ(aclrtDestroyStream(shared), ACL_SUCCESS);
}

TEST(Threads, AFailingThreadsLaterWorkIsSkippedUntilItSynchronises) {
  // Within one thread the tasks behind a failure would read its unfinished
  // results: they are skipped, and that thread's synchronise says so.
  aclrtStream s = newStream();
  IfaJob bad(9, {150, 233});
  bad.breakTable();
  GatherJob after(kSeed);
  after.reset();
  std::vector<Pending> pending;
  ASSERT_EQ(submit(bad, s, pending), ACLNN_SUCCESS);
  ASSERT_EQ(submit(after, s, pending), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACLNN_ERR_PARAM_INVALID);
  Bytes untouched = after.outputs();
  after.reset();
  EXPECT_EQ(untouched, after.outputs());
  // Cleared: the next call runs.
  ASSERT_EQ(submit(after, s, pending), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(after.outputs(), expectedOutput(1));
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(Threads, AFailureOfAThreadThatExitedIsReportedOnceAndNotInherited) {
  // Thread C queues a failing call and exits without synchronising: the
  // next synchronise (by anyone) reports it once and clears it. Threads
  // started afterwards (std::thread::id values are reused) run their work.
  aclrtStream shared = newStream();
  IfaJob bad(9, {150, 233});
  bad.breakTable();
  std::vector<Pending> pc;
  aclnnStatus launchedC = ACL_ERROR_INVALID_PARAM;
  std::thread c([&] { launchedC = submit(bad, shared, pc); });
  c.join();
  ASSERT_EQ(launchedC, ACLNN_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(shared), ACLNN_ERR_PARAM_INVALID);
  const std::string message = recentError();
  EXPECT_NE(message.find("work a thread that has since exited queued on this "
                         "stream failed: aclnnIncreFlashAttentionV4: blocktable"),
            std::string::npos)
      << message;
  EXPECT_EQ(aclrtSynchronizeStream(shared), ACL_SUCCESS);
  for (int r = 0; r < 4; ++r) {
    // Each new thread fails once on its own, exits, and the next one's work
    // still runs.
    ScatterJob good(kSeed);
    good.reset();
    std::vector<Pending> pd;
    aclnnStatus launched = ACL_ERROR_INVALID_PARAM, failed = ACL_ERROR_INVALID_PARAM;
    aclError synced = ACL_ERROR_INVALID_PARAM;
    std::thread d([&] {
      launched = submit(good, shared, pd);
      synced = aclrtSynchronizeStream(shared);
      failed = submit(bad, shared, pd);
    });
    d.join();
    EXPECT_EQ(launched, ACLNN_SUCCESS);
    EXPECT_EQ(synced, ACL_SUCCESS) << recentError();
    EXPECT_EQ(failed, ACLNN_SUCCESS);
    EXPECT_EQ(good.outputs(), expectedOutput(0));
    EXPECT_EQ(aclrtSynchronizeStream(shared), ACLNN_ERR_PARAM_INVALID);
  }
  EXPECT_EQ(aclrtSynchronizeStream(shared), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(shared), ACL_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Executor lifetime
//===----------------------------------------------------------------------===//

TEST(Threads, ASingleUseExecutorRunsOnce) {
  const size_t live = aclnn::liveExecutorCount();
  GatherJob job(kSeed);
  job.reset();
  uint64_t size = 0;
  aclOpExecutor *exec = nullptr;
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  EXPECT_EQ(aclnn::liveExecutorCount(), live + 1);
  std::vector<unsigned char> ws(size + 1);
  ASSERT_EQ(job.launch(ws.data(), size, exec, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(job.outputs(), expectedOutput(1));
  EXPECT_EQ(aclnn::liveExecutorCount(), live);
  // A second use, on the default stream and on a stream: refused, nothing
  // written.
  job.reset();
  const Bytes before = job.outputs();
  EXPECT_EQ(job.launch(ws.data(), size, exec, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentError().find("aclnnGatherPaKvCache: executor is not a live "
                               "executor"),
            std::string::npos);
  aclrtStream s = newStream();
  EXPECT_EQ(job.launch(ws.data(), size, exec, s), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(job.outputs(), before);
  // Destroying or making repeatable what phase 2 consumed: refused.
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentError().find("aclDestroyAclOpExecutor: executor is not a live"),
            std::string::npos);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_ERR_PARAM_INVALID);
  // Queued on a stream: consumed at once, freed after it ran.
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  std::promise<void> open = gate(s);
  ASSERT_EQ(job.launch(ws.data(), size, exec, s), ACLNN_SUCCESS);
  EXPECT_EQ(job.launch(ws.data(), size, exec, s), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_ERR_PARAM_INVALID);
  open.set_value();
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(job.outputs(), expectedOutput(1));
  EXPECT_EQ(aclnn::liveExecutorCount(), live);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(Threads, ExecutorHandlesAreCheckedBeforeUse) {
  const size_t live = aclnn::liveExecutorCount();
  GatherJob job(kSeed);
  uint64_t size = 0;
  aclOpExecutor *exec = nullptr;
  // Never run: destroyed, then every use is refused.
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_SUCCESS);
  EXPECT_EQ(aclnn::liveExecutorCount(), live);
  std::vector<unsigned char> ws(size + 1);
  EXPECT_EQ(job.launch(ws.data(), size, exec, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_ERR_PARAM_INVALID);
  // A pointer that never was an executor is recognised without being read
  // (its bytes would make no sense as one).
  alignas(64) unsigned char junk[512];
  std::memset(junk, 0xFF, sizeof(junk));
  auto *fake = reinterpret_cast<aclOpExecutor *>(junk);
  EXPECT_EQ(job.launch(ws.data(), size, fake, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(fake), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(fake), ACLNN_ERR_PARAM_INVALID);
  // Phase 2 of another operator, or too little workspace: refused without
  // consuming the executor.
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnScatterPaKvCache(ws.data(), size, exec, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentError().find("prepared by aclnnGatherPaKvCache"), std::string::npos);
  job.reset();
  ASSERT_EQ(job.launch(ws.data(), size, exec, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(job.outputs(), expectedOutput(1));
  EXPECT_EQ(aclnn::liveExecutorCount(), live);
}

TEST(Threads, ARepeatableExecutorDestroyedWhileQueuedRunsThenIsFreed) {
  const size_t live = aclnn::liveExecutorCount();
  NsaJob job(kSeed);
  job.reset();
  uint64_t size = 0;
  aclOpExecutor *exec = nullptr;
  ASSERT_EQ(job.prepare(size, exec), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_SUCCESS); // idempotent
  std::vector<unsigned char> ws(size + 1);
  // Runs any number of times.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(job.launch(ws.data(), size, exec, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(job.outputs(), expectedOutput(3));
  aclrtStream s1 = newStream(), s2 = newStream();
  job.reset();
  std::promise<void> open1 = gate(s1), open2 = gate(s2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(job.launch(ws.data(), size, exec, s1), ACLNN_SUCCESS);
    ASSERT_EQ(job.launch(ws.data(), size, exec, s2), ACLNN_SUCCESS);
  }
  // Destroyed with ten launches queued: the handle is dead at once, the
  // executor lives until the last launch ran.
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_SUCCESS);
  EXPECT_EQ(aclnn::liveExecutorCount(), live);
  EXPECT_EQ(job.launch(ws.data(), size, exec, s1), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_ERR_PARAM_INVALID);
  open1.set_value();
  open2.set_value();
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(job.outputs(), expectedOutput(3));
  EXPECT_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Stress: 8 threads, every operator, 10 000 calls
//===----------------------------------------------------------------------===//

TEST(ThreadStress, EightThreadsMatchASingleThreadedRun) {
  constexpr int kThreads = 8, kCalls = 10000;
  constexpr int kRoundsPerThread = kCalls / kThreads / kKinds; // 250
  std::vector<Bytes> expected;
  for (int kind = 0; kind < kKinds; ++kind)
    expected.push_back(expectedOutput(kind));
  // Threads 0-3 own a stream each; threads 4-7 share one.
  std::vector<aclrtStream> streams;
  for (int i = 0; i < 5; ++i)
    streams.push_back(newStream());
  std::atomic<int> calls{0}, errors{0}, mismatches{0};
  std::vector<std::string> firstProblem(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      aclrtStream stream = streams[static_cast<size_t>(std::min(t, 4))];
      std::vector<std::unique_ptr<Job>> jobs;
      for (int kind = 0; kind < kKinds; ++kind)
        jobs.push_back(makeJob(kind, kSeed));
      // One repeatable executor per kind, used every other round.
      std::vector<aclOpExecutor *> repeatable(kKinds, nullptr);
      std::vector<uint64_t> repeatableSize(kKinds, 0);
      std::vector<std::unique_ptr<unsigned char[]>> repeatableWs;
      for (int kind = 0; kind < kKinds; ++kind) {
        if (jobs[kind]->prepare(repeatableSize[kind], repeatable[kind]) != ACLNN_SUCCESS ||
            aclSetAclOpExecutorRepeatable(repeatable[kind]) != ACLNN_SUCCESS) {
          ++errors;
          return;
        }
        repeatableWs.push_back(
            std::make_unique<unsigned char[]>(repeatableSize[kind] + 1));
      }
      auto note = [&](const std::string &what) {
        if (firstProblem[t].empty())
          firstProblem[t] = what;
      };
      for (int round = 0; round < kRoundsPerThread; ++round) {
        std::vector<Pending> pending;
        for (auto &job : jobs)
          job->reset();
        for (int i = 0; i < kKinds; ++i) {
          const int kind = (i + t + round) % kKinds;
          aclnnStatus s;
          if ((round + kind) % 2)
            s = jobs[kind]->launch(repeatableWs[kind].get(), repeatableSize[kind],
                                   repeatable[kind], stream);
          else
            s = submit(*jobs[kind], stream, pending);
          ++calls;
          if (s != ACLNN_SUCCESS) {
            ++errors;
            note("call: " + recentError());
          }
        }
        if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
          ++errors;
          note("synchronize: " + recentError());
        }
        for (int kind = 0; kind < kKinds; ++kind)
          if (jobs[kind]->outputs() != expected[kind]) {
            ++mismatches;
            note("round " + std::to_string(round) + ": kind " + std::to_string(kind) +
                 " differs");
          }
      }
      for (aclOpExecutor *e : repeatable)
        if (aclDestroyAclOpExecutor(e) != ACLNN_SUCCESS)
          ++errors;
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(firstProblem[t], "") << "thread " << t;
  EXPECT_EQ(calls, kCalls);
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(mismatches, 0);
  for (aclrtStream s : streams)
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}
