//===- DiskCache.h - The disk tier of the kernel cache ----------*- C++ -*-===//
///
/// \file
/// One file per tiling key, `<dir>/<symbol stem>.tjk`, holding the kernel's
/// object code and what is needed to use it without compiling: the key's
/// canonical text (every field: source hash, parameters, target CPU and
/// features, tilejit and LLVM versions, opt level), the symbol stem, the
/// shape-constraint messages, the compile times, and the optimised Tile IR and
/// LLVM IR (so stage dumps work on hits). A SHA-256 over the whole entry
/// closes it. The runtime library's compiled functions are entries too,
/// under keys of their own (Compiler.cpp, runtimeKey), holding only the
/// object.
///
/// The directory is opened once (O_DIRECTORY | O_NOFOLLOW) and checked on
/// that descriptor: it must be owned by this user and not group- or
/// world-writable, or the disk tier is off (with a warning); a directory this
/// process cannot write is used read-only (with a warning). Every later access
/// is relative to that descriptor, so a directory renamed or replaced by a
/// symbolic link afterwards is never followed (a load warns that it was).
///
/// Loading checks the entry before it is opened (lstat: a regular file, at
/// most kMaxEntryBytes), opens it without following links and without
/// blocking, checks the descriptor again (the same file, owned by this user,
/// writable by nobody else, within the bound), reads at most the size it had
/// (one byte more means it grew: a miss), then verifies in memory its
/// framing, its checksum, and that its key is the requested one (so a foreign
/// target, another version or another key's object is a miss). A miss is
/// rebuilt and replaced; only the verified copy in memory is ever executed,
/// whatever happens to the file meanwhile.
///
/// Entries are published atomically (a temporary file in the directory, then
/// rename), so processes racing on one key each succeed and leave one valid
/// entry; a failed write (a full disk, a file size limit) removes its
/// temporary file. The directory is bounded (TILEJIT_CACHE_MAX_BYTES, default
/// 1 GiB): least recently used entries go first (a hit refreshes an entry's
/// mtime).
///
/// Errors follow the library's convention (docs/architecture.md): a load
/// or a store that fails returns an llvm::Error saying why, and the caller
/// decides what to print; a set-up that works in a degraded way (the tier
/// off, or only read) is a warning passed to the caller's handler. Nothing
/// here prints or aborts.
///
/// Options (jit/Options.h, docs/options.md): TILEJIT_CACHE=off|read|readwrite
/// (default readwrite), TILEJIT_CACHE_DIR (default $XDG_CACHE_HOME/tilejit,
/// else ~/.cache/tilejit), TILEJIT_CACHE_MAX_BYTES.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_DISKCACHE_H
#define TILEJIT_JIT_DISKCACHE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::jit {

class Options;
class TilingKey;

/// What an entry holds besides its key.
struct DiskEntry {
  std::string stem;                     ///< symbol stem inside the object
  std::vector<char> object;             ///< relocatable object code
  std::vector<std::string> constraints; ///< shape-constraint messages
  std::string times;                    ///< "parse sema passes codegen opt mc total" (ms)
  std::string signature;                ///< the runtime parameters (Compiler.cpp's format)
  std::string tileIR, llvmIR;           ///< optimised Tile IR and LLVM IR text
};

/// One listed entry (`tilejit cache ls`).
struct DiskListing {
  std::string file, key;
  std::string name; ///< the file's name in the cache directory
  uint64_t bytes = 0;
  int64_t lastUse = 0; ///< seconds since the epoch
};

class DiskCache {
public:
  enum class Mode { Off, Read, ReadWrite };

  /// The largest entry read or written. The largest kernel's entry is well
  /// under 1 MiB; a file beyond the bound (truncated to a huge size, say) is
  /// refused before anything is allocated for it.
  static constexpr uint64_t kMaxEntryBytes = uint64_t(64) << 20;

  /// Receives a warning about the set-up: why the tier is off or only read
  /// where the options asked for more (the caller prints it).
  using WarningHandler = llvm::function_ref<void(const std::string &)>;

  /// The disk tier the process's options ask for; Off (with a warning) when
  /// the directory cannot be created or is not safe to load from, Read
  /// (with a warning) when this process must not write it.
  static DiskCache fromEnvironment(WarningHandler warn);
  /// The same for `options` (tests inject theirs).
  static DiskCache fromOptions(const Options &options, WarningHandler warn);
  /// A disk tier in `dir` (tests); Off when `dir` cannot be opened as a
  /// directory. Unlike fromOptions, ownership and mode are not checked.
  DiskCache(std::string dir, Mode mode, uint64_t maxBytes);
  DiskCache() = default;

  Mode mode() const { return mode_; }
  const std::string &dir() const { return dir_; }
  uint64_t maxBytes() const { return maxBytes_; }

  /// The verified entry for `key`; std::nullopt when there is none (or the
  /// tier is off). An error when an entry is present but unusable: "cache
  /// entry PATH ignored: WHY" (the caller rebuilds it).
  llvm::Expected<std::optional<DiskEntry>> load(const TilingKey &key) const;
  /// Publishes an entry for `key`, then evicts least recently used entries
  /// beyond the size bound. An error when nothing was stored: the tier is
  /// not readwrite, the entry is over the bound, or it could not be written
  /// (a directory that cannot be written, a full disk, gives one message
  /// for every key).
  llvm::Error store(const TilingKey &key, const DiskEntry &entry) const;
  /// An error when the directory's path no longer names the directory
  /// opened (renamed, replaced by a link): entries are still read and
  /// written only in the one opened, and the caller may say so.
  llvm::Error checkDirectory() const;

  /// Every entry file (verified or not) with its size and last use.
  std::vector<DiskListing> list() const;
  /// Removes every entry; returns how many.
  size_t clear() const;
  /// Removes entries that do not verify (any key) and temporary files left
  /// for over an hour (by a writer that died), and evicts down to the bound;
  /// returns how many were removed.
  size_t prune() const;

  /// The file an entry for `key` lives in.
  std::string pathOf(const TilingKey &key) const;

  /// Tests: every later write of this disk tier (and its copies) fails with
  /// `error` once `afterBytes` bytes of the entry are written, as a full
  /// file system does.
  void injectWriteFault(uint64_t afterBytes, int error) {
    faultAfterBytes_ = afterBytes;
    faultError_ = error;
  }

  /// The cache directory, opened once (defined in DiskCache.cpp).
  struct Directory;

private:
  DiskCache(std::shared_ptr<const Directory> directory, std::string dir, Mode mode,
            uint64_t maxBytes);
  std::vector<DiskListing> scan(bool keys) const;
  void evict() const;
  int dirFd() const;
  std::shared_ptr<const Directory> directory_; ///< the directory, opened once
  std::string dir_;
  Mode mode_ = Mode::Off;
  uint64_t maxBytes_ = uint64_t(1) << 30;
  uint64_t faultAfterBytes_ = 0;
  int faultError_ = 0; ///< 0: no injected write fault
};

} // namespace tilejit::jit

#endif
