//===- KernelJIT.cpp - One ORC LLJIT per target level ---------------------===//
#include "jit/KernelJIT.h"
#include "jit/HostCaches.h"
#include "jit/Options.h"
#include "runtime/Runtime.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/JITLink/EHFrameSupport.h"
#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/EPCEHFrameRegistrar.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/SymbolSize.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <cassert>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include <unistd.h>

namespace tilejit::jit {

/// JITLink's in-process memory manager, counting what it maps: the bytes of
/// each allocation's standard segments (code, read-only and writable data,
/// whole pages; the finalize-only segments are unmapped after linking), by
/// object (its buffer's name), for the kernel that linked it to take.
class CountingMemoryManager final : public llvm::jitlink::JITLinkMemoryManager {
public:
  CountingMemoryManager(std::unique_ptr<llvm::jitlink::InProcessMemoryManager> inner,
                        uint64_t pageSize)
      : inner_(std::move(inner)), pageSize_(pageSize) {}

  void allocate(const llvm::jitlink::JITLinkDylib *dylib, llvm::jitlink::LinkGraph &graph,
                OnAllocatedFunction done) override {
    uint64_t bytes = 0;
    llvm::jitlink::BasicLayout layout(graph);
    if (auto sizes = layout.getContiguousPageBasedLayoutSizes(pageSize_))
      bytes = sizes->StandardSegs;
    else
      llvm::consumeError(sizes.takeError()); // the inner manager reports it
    std::string name = graph.getName();
    inner_->allocate(dylib, graph,
                     [this, name, bytes, done = std::move(done)](AllocResult r) mutable {
                       if (!r)
                         return done(r.takeError());
                       done(std::make_unique<InFlight>(*this, name, bytes, std::move(*r)));
                     });
  }
  using JITLinkMemoryManager::allocate;

  void deallocate(std::vector<FinalizedAlloc> allocs, OnDeallocatedFunction done) override {
    inner_->deallocate(std::move(allocs), std::move(done));
  }
  using JITLinkMemoryManager::deallocate;

  /// The bytes linked for the object named `name` (its buffer's name).
  uint64_t takeBytesOf(const std::string &name) {
    std::lock_guard lock(mutex_);
    auto it = linking_.find(name);
    if (it == linking_.end())
      return 0;
    uint64_t bytes = it->second;
    linking_.erase(it);
    return bytes;
  }

private:
  /// The inner in-flight allocation, recording the finalized one's size.
  class InFlight final : public InFlightAlloc {
  public:
    InFlight(CountingMemoryManager &owner, std::string name, uint64_t bytes,
             std::unique_ptr<InFlightAlloc> inner)
        : owner_(owner), name_(std::move(name)), bytes_(bytes), inner_(std::move(inner)) {}
    void abandon(OnAbandonedFunction done) override { inner_->abandon(std::move(done)); }
    void finalize(OnFinalizedFunction done) override {
      inner_->finalize([this, done = std::move(done)](llvm::Expected<FinalizedAlloc> f) mutable {
        if (f) {
          std::lock_guard lock(owner_.mutex_);
          owner_.linking_[name_] += bytes_;
        }
        done(std::move(f));
      });
    }

  private:
    CountingMemoryManager &owner_;
    std::string name_;
    uint64_t bytes_;
    std::unique_ptr<InFlightAlloc> inner_;
  };

  std::unique_ptr<llvm::jitlink::InProcessMemoryManager> inner_;
  uint64_t pageSize_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint64_t> linking_; ///< by object name

};

namespace {

/// Sets one of LLVM's code-generation options (they exist only as
/// command-line options) as if given on the command line; a no-op when this
/// LLVM does not have it.
void setCodeGenOption(llvm::StringRef name, llvm::StringRef value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it != options.end())
    it->second->addOccurrence(0, name, value);
}

/// Two machine passes that cost a sixth of a kernel's machine-code time and
/// buy it nothing: loop strength reduction (the generated loops already step
/// their addresses by constants, and measured kernels run as fast or faster
/// without it) and the post-RA list scheduler (the targets are out-of-order
/// cores). These options are process-wide; tilejit's fingerprint covers them.
void tuneCodeGeneration() {
  setCodeGenOption("disable-lsr", "true");
  setCodeGenOption("post-RA-scheduler", "false");
}

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    tuneCodeGeneration();
  });
}


bool hostHas(const llvm::StringMap<bool> &f,
             std::initializer_list<const char *> names) {
  for (const char *n : names) {
    auto it = f.find(n);
    if (it == f.end() || !it->second)
      return false;
  }
  return true;
}

} // namespace

bool requestAmxPermission() {
  static const bool granted = [] {
#if defined(__linux__) && defined(__x86_64__)
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return granted;
}

bool Compiler::hostSupports(TargetLevel level) {
  llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
  switch (level) {
  case TargetLevel::Avx2:
    return hostHas(f, {"avx2", "fma", "f16c"});
  case TargetLevel::Avx512:
    return hostHas(
        f, {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma", "f16c"});
  case TargetLevel::Host:
    return hostHas(f, {"avx2", "fma", "f16c"});
  }
  return false;
}

llvm::Expected<TargetChoice> chooseTarget(TargetLevel level, bool emitOnly) {
  initializeLLVM();
  const Options &options = Options::process();
  if (level == TargetLevel::Host) {
    auto wanted = options.target();
    if (!wanted)
      return wanted.takeError();
    level = *wanted;
    if (level == TargetLevel::Host)
      level = Compiler::hostSupports(TargetLevel::Avx512) ? TargetLevel::Avx512
                                                          : TargetLevel::Avx2;
  }
  bool runnable = Compiler::hostSupports(level);
  if (!runnable && !emitOnly)
    return llvm::createStringError(
        std::string("this CPU cannot run ") +
        (level == TargetLevel::Avx512 ? "AVX-512" : "AVX2") +
        " code (needs avx2, fma and f16c" +
        (level == TargetLevel::Avx512 ? ", avx512f/bw/vl/dq)" : ")"));
  TargetChoice t;
  t.level = level;
  t.info.triple = llvm::sys::getProcessTriple();
  if (level == TargetLevel::Avx512 && !runnable) {
    t.levelName = "avx512";
    t.info.cpu = "skylake-avx512";
    t.info.features = "+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+popcnt,+lzcnt,+movbe,"
                      "+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512cd";
    t.info.vectorBits = 512;
  } else if (level == TargetLevel::Avx512) {
    t.levelName = "avx512";
    t.info.cpu = llvm::sys::getHostCPUName().str();
    std::string features;
    llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> names;
    for (auto &kv : f) {
      std::string name = kv.first().str();
      name.insert(name.begin(), kv.second ? '+' : '-');
      names.push_back(std::move(name));
    }
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) {
      if (!features.empty())
        features += ',';
      features += n;
    }
    t.info.vectorBits = 512;
    t.info.hasBf16Dot = hostHas(f, {"avx512bf16"});
    // AMX: the tile registers need the kernel's leave (once per process);
    // without it they stay off, in the features too (the tiling key).
    t.info.hasAmxBf16 = hostHas(f, {"amx-tile", "amx-bf16"}) && requestAmxPermission();
    if (!t.info.hasAmxBf16)
      for (const char *amx : {"amx-tile", "amx-bf16", "amx-int8", "amx-fp16", "amx-complex"}) {
        std::string on = std::string("+") + amx;
        if (size_t at = features.find(on); at != std::string::npos)
          features[at] = '-';
      }
    t.info.features = features;
    // AMD cores (znver*) sum a vector of bf16 pairs per cycle, twice the
    // f32 FMA's products; the Intel host measured half a `vdpbf16ps` per
    // cycle and core, fewer products than its two FMA pipes (docs/dsl.md 8.7).
    t.info.bf16DotFast =
        t.info.hasBf16Dot && llvm::StringRef(t.info.cpu).starts_with("znver");
  } else {
    t.levelName = "avx2";
    t.info.cpu = "haswell";
    t.info.features = "+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+popcnt,+lzcnt,+movbe,"
                      "-avx512f,-avx512bw,-avx512vl,-avx512dq,-avx512cd";
    t.info.vectorBits = 256;
  }
  // Code that runs here is tuned to this host's L1; code only emitted (for
  // a target this host cannot run) assumes nothing of it. TILEJIT_L1D_BYTES
  // overrides either (0: assume nothing).
  auto l1 = options.l1dBytes();
  if (!l1)
    return l1.takeError();
  if (*l1)
    t.info.l1dBytes = static_cast<unsigned>(**l1);
  else if (runnable)
    t.info.l1dBytes = static_cast<unsigned>(hostCacheBytes(1));
  return t;
}

namespace {

/// One function of the runtime library (codegen::lowerRuntimeLibrary),
/// linked when a kernel first links against it: its object kept by an
/// earlier process (RuntimeObjects), or compiled as a kernel is (the same
/// optimisation pipeline and TargetMachine settings) and kept. A process
/// that links only a few kernels compiles only the functions they call, and
/// one that loads them from the disk cache none. ORC materialises each unit
/// once; first uses of different functions on different threads compile in
/// parallel, each in a context and TargetMachine of its own.
class RuntimeFunctionUnit : public llvm::orc::MaterializationUnit {
public:
  RuntimeFunctionUnit(const KernelJIT &jit, codegen::TargetInfo target,
                      KernelJIT::RuntimeObjects objects, llvm::orc::ObjectLayer &layer,
                      llvm::orc::SymbolStringPtr name)
      : MaterializationUnit(Interface(
            {{name, llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable}},
            nullptr)),
        jit_(jit), target_(std::move(target)), objects_(std::move(objects)), layer_(layer),
        name_((*name).str()) {}

  llvm::StringRef getName() const override { return name_; }

  void materialize(std::unique_ptr<llvm::orc::MaterializationResponsibility> r) override {
    std::optional<std::vector<char>> kept;
    if (objects_.load)
      kept = objects_.load(name_);
    if (!kept) {
      auto object = compile();
      if (!object) {
        layer_.getExecutionSession().reportError(object.takeError());
        r->failMaterialization();
        return;
      }
      if (objects_.store)
        objects_.store(name_, *object);
      kept = std::move(*object);
    }
    layer_.emit(std::move(r), llvm::MemoryBuffer::getMemBufferCopy(
                                  llvm::StringRef(kept->data(), kept->size()), name_));
  }

private:
  void discard(const llvm::orc::JITDylib &, const llvm::orc::SymbolStringPtr &) override {}

  llvm::Expected<std::vector<char>> compile() const {
    auto tm = jit_.makeTargetMachine();
    if (!tm)
      return tm.takeError();
    llvm::LLVMContext context;
    DiagnosticEngine diags;
    auto module = codegen::lowerRuntimeLibrary(context, target_, diags, name_);
    if (!module)
      return llvm::createStringError(diags.renderAll());
    module->setDataLayout((*tm)->createDataLayout());
    codegen::optimizeModule(*module, **tm, /*optLevel=*/3);
    return emitObject(*module, **tm);
  }

  const KernelJIT &jit_;
  const codegen::TargetInfo target_;
  const KernelJIT::RuntimeObjects objects_;
  llvm::orc::ObjectLayer &layer_;
  const std::string name_;
};

/// Links `names`, functions of the runtime library, and waits until they
/// are ready (their memory final) before a kernel that calls them is linked.
/// A kernel linked while another thread was still linking one of them could
/// otherwise be ready, and run, first: ORC (LLVM 19) let it jump to a page
/// not yet executable (KernelCache.EightThreadsFirstUseTheRuntimeLibraryAtOnce
/// crashed 3 runs in 5 without this).
llvm::Error readyRuntimeFunctions(llvm::orc::LLJIT &jit, llvm::orc::JITDylib &runtime,
                                  const std::vector<std::string> &names) {
  for (const std::string &name : names)
    if (auto found = jit.lookup(runtime, name); !found)
      return found.takeError();
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::shared_ptr<KernelJIT>>
KernelJIT::create(const TargetChoice &t, RuntimeObjects objects) {
  initializeLLVM();
  std::shared_ptr<KernelJIT> kj(new KernelJIT(t));
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(t.info.triple)};
  jtmb.setCPU(t.info.cpu);
  llvm::SubtargetFeatures features(t.info.features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  auto pages = llvm::jitlink::InProcessMemoryManager::Create();
  if (!pages)
    return pages.takeError();
  uint64_t pageSize = llvm::sys::Process::getPageSizeEstimate();
  auto memory = std::make_unique<CountingMemoryManager>(std::move(*pages), pageSize);
  kj->memory_ = memory.get();
  // LLJIT's own choice for x86-64 ELF (JITLink, unwind frames registered),
  // with the counting memory manager.
  auto linker = [&memory](llvm::orc::ExecutionSession &es, const llvm::Triple &)
      -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(es, std::move(memory));
    auto frames = llvm::orc::EPCEHFrameRegistrar::Create(es);
    if (!frames)
      return frames.takeError();
    layer->addPlugin(
        std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(es, std::move(*frames)));
    return layer;
  };
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(jtmb)
                 .setObjectLinkingLayerCreator(linker)
                 .create();
  if (!jit)
    return jit.takeError();
  kj->jit_ = std::move(*jit);
  // The runtime's half of partial tile moves, visible to every kernel's
  // JITDylib (they link against the process symbols).
  auto &es = kj->jit_->getExecutionSession();
  llvm::orc::SymbolMap runtime;
  runtime[es.intern(rt::kLoadTileSymbol)] = llvm::orc::ExecutorSymbolDef(
      llvm::orc::ExecutorAddr::fromPtr(&rt::tilejit_rt_load_tile), llvm::JITSymbolFlags::Exported);
  runtime[es.intern(rt::kStoreTileSymbol)] = llvm::orc::ExecutorSymbolDef(
      llvm::orc::ExecutorAddr::fromPtr(&rt::tilejit_rt_store_tile), llvm::JITSymbolFlags::Exported);
  runtime[es.intern(rt::kBoundsViolationSymbol)] = llvm::orc::ExecutorSymbolDef(
      llvm::orc::ExecutorAddr::fromPtr(&rt::tilejit_rt_bounds_violation),
      llvm::JITSymbolFlags::Exported);
  if (auto err = kj->jit_->getProcessSymbolsJITDylib()->define(
          llvm::orc::absoluteSymbols(std::move(runtime))))
    return err;
  // The runtime library, which every kernel links against: each function
  // loaded or compiled at its first use (RuntimeFunctionUnit).
  auto library = kj->jit_->createJITDylib("tilejit.runtime");
  if (!library)
    return library.takeError();
  for (const std::string &name : codegen::runtimeLibraryFunctions())
    if (auto err = library->define(std::make_unique<RuntimeFunctionUnit>(
            *kj, t.info, objects, kj->jit_->getObjLinkingLayer(), es.intern(name))))
      return err;
  kj->runtime_ = &*library;
  kj->jit_->getMainJITDylib().addToLinkOrder(*kj->runtime_);
  return kj;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
KernelJIT::makeTargetMachine() const {
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target_.info.triple)};
  jtmb.setCPU(target_.info.cpu);
  llvm::SubtargetFeatures features(target_.info.features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  return jtmb.createTargetMachine();
}

KernelJIT::~KernelJIT() = default;

KernelCode::~KernelCode() { jit_->remove(*this); }

void KernelJIT::remove(KernelCode &code) {
  // Removing a tracker deallocates what its link mapped and drops its
  // symbols; only a broken session invariant could make it fail.
  llvm::Error err = code.tracker_->remove();
  assert(!err && "a kernel's resource tracker is removed once");
  llvm::consumeError(std::move(err));
  kernelBytes_.fetch_sub(code.bytes_);
  std::lock_guard lock(homesMutex_);
  homes_[code.home_].stems.erase(code.stem_);
}

uint64_t KernelJIT::mappedBytes() const { return kernelBytes_.load(); }

namespace {

/// With TILEJIT_PERF_MAP set, appends the kernel's functions to
/// /tmp/perf-<pid>.map (the format `perf report` reads for JIT code):
/// address, size and a name carrying the tiling key.
void recordForProfilers(llvm::ArrayRef<char> object, const std::string &stem,
                        const std::string &label, const void *program, const void *grid) {
  if (!Options::process().perfMap())
    return;
  auto obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), stem));
  if (!obj) {
    llvm::consumeError(obj.takeError());
    return;
  }
  std::string lines;
  for (const auto &[sym, size] : llvm::object::computeSymbolSizes(**obj)) {
    auto name = sym.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    const void *addr = *name == stem + "_program" ? program
                       : *name == stem + "_grid"  ? grid
                                                  : nullptr;
    if (addr && size)
      lines += llvm::formatv("{0:x-} {1:x-} tilejit:{2}:{3}\n", reinterpret_cast<uintptr_t>(addr),
                             size, label, name->substr(stem.size() + 1))
                   .str();
  }
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  if (FILE *f = std::fopen(path.c_str(), "a")) {
    std::fputs(lines.c_str(), f);
    std::fclose(f);
  }
}

/// The runtime library's functions that `object` calls: its undefined
/// symbols named tilejit.*.
llvm::Expected<std::vector<std::string>> runtimeFunctionsCalledBy(llvm::ArrayRef<char> object,
                                                                  const std::string &stem) {
  auto obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), stem));
  if (!obj)
    return obj.takeError();
  std::vector<std::string> names;
  for (const llvm::object::SymbolRef &sym : (*obj)->symbols()) {
    auto flags = sym.getFlags();
    if (!flags)
      return flags.takeError();
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined))
      continue;
    auto name = sym.getName();
    if (!name)
      return name.takeError();
    if (name->starts_with("tilejit."))
      names.push_back(name->str());
  }
  return names;
}

} // namespace

llvm::Expected<KernelJIT::Symbols> KernelJIT::addObject(llvm::ArrayRef<char> object,
                                                      const std::string &stem,
                                                      const std::string &label) {
  // A JITDylib costs the session far more memory than a resource tracker:
  // kernels share a few, each under its own tracker. The same kernel linked
  // again while an older copy lives (a key evicted and reloaded while a
  // handle holds it) goes to a dylib that does not define its symbols yet.
  size_t home;
  llvm::orc::JITDylib *dylib;
  {
    std::lock_guard lock(homesMutex_);
    home = homes_.size();
    for (size_t i = 0; i < homes_.size(); ++i)
      if (!homes_[i].stems.count(stem)) {
        home = i;
        break;
      }
    if (home == homes_.size()) {
      auto jd = jit_->createJITDylib("tilejit." + std::to_string(home));
      if (!jd)
        return jd.takeError();
      jd->addToLinkOrder(*runtime_);
      homes_.push_back({&*jd, {}});
    }
    homes_[home].stems.insert(stem);
    dylib = homes_[home].dylib;
  }
  llvm::orc::JITDylib &jd = *dylib;
  // Owned from here: a failed link frees what it mapped with the tracker.
  auto code = std::make_shared<KernelCode>(shared_from_this(), jd.createResourceTracker(), home,
                                           stem);
  std::string name = stem + "." + std::to_string(links_.fetch_add(1));
  auto called = runtimeFunctionsCalledBy(object, stem);
  if (!called)
    return called.takeError();
  if (auto err = readyRuntimeFunctions(*jit_, *runtime_, *called))
    return err;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.data(), object.size()), name);
  if (auto err = jit_->addObjectFile(code->tracker_, std::move(buffer)))
    return err;
  // One lookup of the three symbols: one trip through the session.
  auto &es = jit_->getExecutionSession();
  llvm::orc::SymbolStringPtr names[] = {es.intern(stem + "_program"), es.intern(stem + "_grid"),
                                        es.intern(stem + "_scratch")};
  llvm::orc::SymbolLookupSet wanted;
  for (const auto &n : names)
    wanted.add(n);
  auto found = es.lookup(llvm::orc::makeJITDylibSearchOrder(&jd), std::move(wanted));
  if (!found)
    return found.takeError();
  Symbols s;
  s.program = (*found)[names[0]].getAddress().toPtr<rt::ProgramFn>();
  s.grid = (*found)[names[1]].getAddress().toPtr<rt::GridFn>();
  s.scratchBytes = *(*found)[names[2]].getAddress().toPtr<const int64_t *>();
  // The lookup linked the object: its bytes are counted.
  code->bytes_ = memory_->takeBytesOf(name);
  kernelBytes_.fetch_add(code->bytes_);
  s.code = std::move(code);
  recordForProfilers(object, stem, label.empty() ? stem : label,
                     reinterpret_cast<const void *>(s.program),
                     reinterpret_cast<const void *>(s.grid));
  return s;
}

llvm::Expected<std::vector<char>> emitObject(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  // The module was verified after code generation and optimisation.
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile,
                             /*DisableVerify=*/true))
    return llvm::createStringError("this target cannot emit object code");
  pm.run(module);
  return std::vector<char>(out.begin(), out.end());
}

std::string emitAssembly(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::SmallString<4096> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::AssemblyFile))
    return "; this target cannot emit assembly\n";
  pm.run(module);
  return std::string(out.str());
}

} // namespace tilejit::jit
