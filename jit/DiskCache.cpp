//===- DiskCache.cpp - The disk tier of the kernel cache ------------------===//
#include "jit/DiskCache.h"

#include "jit/Options.h"
#include "jit/TilingKey.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <system_error>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilejit::jit {

namespace {

constexpr char kMagic[8] = {'T', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormat = 1;
constexpr const char *kSuffix = ".tjk";

/// Creates `path` and its missing parents with mode 0700.
bool makeDirs(const std::string &path) {
  if (path.empty())
    return false;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode);
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !makeDirs(path.substr(0, slash)))
    return false;
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

/// Why `st` (of a directory or an entry) must not be trusted, or "".
std::string unsafe(const struct stat &st) {
  if (st.st_uid != ::geteuid())
    return "owned by another user (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "writable by group or others (mode " +
           std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
           std::to_string(st.st_mode & 7) + ")";
  return "";
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

void put32(std::vector<char> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::vector<char> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(v >> (8 * i)));
}

std::array<uint8_t, 32> sha256(const char *data, size_t n) {
  llvm::SHA256 h;
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data), n));
  return h.final();
}

using Sections = std::map<std::string, std::string>;

std::vector<char> encode(const Sections &sections) {
  std::vector<char> out(kMagic, kMagic + 8);
  put32(out, kFormat);
  put32(out, static_cast<uint32_t>(sections.size()));
  for (const auto &[name, data] : sections) {
    put32(out, static_cast<uint32_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    put64(out, data.size());
    out.insert(out.end(), data.begin(), data.end());
  }
  auto digest = sha256(out.data(), out.size());
  out.insert(out.end(), digest.begin(), digest.end());
  return out;
}

/// Why an entry or a file is refused (the message says it all).
llvm::Error refused(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

/// The sections of an entry, its framing and checksum checked; an error
/// says why it is not an entry.
llvm::Expected<Sections> decode(const std::vector<char> &in) {
  if (in.size() < 8 + 8 + 32)
    return refused("truncated");
  if (std::memcmp(in.data(), kMagic, 8) != 0)
    return refused("not a tilejit cache entry");
  auto digest = sha256(in.data(), in.size() - 32);
  if (std::memcmp(digest.data(), in.data() + in.size() - 32, 32) != 0)
    return refused("checksum mismatch (corrupted or truncated)");
  Sections out;
  size_t pos = 8, end = in.size() - 32;
  auto get = [&](size_t bytes, uint64_t &v) {
    if (end - pos < bytes)
      return false;
    v = 0;
    for (size_t i = 0; i < bytes; ++i)
      v |= uint64_t(static_cast<unsigned char>(in[pos + i])) << (8 * i);
    pos += bytes;
    return true;
  };
  uint64_t format, count;
  if (!get(4, format) || !get(4, count))
    return refused("truncated");
  if (format != kFormat)
    return refused("entry format " + std::to_string(format) + ", this tilejit reads " +
                   std::to_string(kFormat));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t nameLen, len;
    if (!get(4, nameLen) || end - pos < nameLen)
      return refused("truncated");
    std::string name(in.data() + pos, nameLen);
    pos += nameLen;
    if (!get(8, len) || end - pos < len)
      return refused("truncated");
    out[name] = std::string(in.data() + pos, len);
    pos += len;
  }
  if (pos != end)
    return refused("trailing bytes");
  return out;
}

/// A file descriptor, closed when it goes out of scope.
class Fd {
public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  Fd(Fd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd &operator=(Fd &&other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { close(); }
  int get() const { return fd_; }
  /// Closes it now; false (errno set) when close reports an error (a
  /// delayed write failure on some file systems).
  bool close() {
    int fd = std::exchange(fd_, -1);
    return fd < 0 || ::close(fd) == 0;
  }

private:
  int fd_;
};

std::string errnoText(int error) { return std::strerror(error); }

/// What kind of file `st` is, for a message ("a FIFO", "a directory"...).
const char *kindOf(const struct stat &st) {
  if (S_ISLNK(st.st_mode))
    return "a symbolic link";
  if (S_ISFIFO(st.st_mode))
    return "a FIFO";
  if (S_ISCHR(st.st_mode))
    return "a character device";
  if (S_ISBLK(st.st_mode))
    return "a block device";
  if (S_ISDIR(st.st_mode))
    return "a directory";
  if (S_ISSOCK(st.st_mode))
    return "a socket";
  return "an unknown kind of file";
}

/// Why the file `st` describes cannot be an entry, or "".
std::string notAnEntry(const struct stat &st) {
  if (!S_ISREG(st.st_mode))
    return std::string("not a regular file (") + kindOf(st) + ")";
  if (std::string why = unsafe(st); !why.empty())
    return why;
  if (static_cast<uint64_t>(st.st_size) > DiskCache::kMaxEntryBytes)
    return std::to_string(st.st_size) + " bytes, over the bound of " +
           std::to_string(DiskCache::kMaxEntryBytes);
  return "";
}

/// An entry file read into memory; its descriptor stays open, to mark its
/// use once it is verified.
struct EntryFile {
  std::vector<char> bytes;
  Fd fd;
};

/// One attempt of readEntry: the file, std::nullopt when it is absent, or
/// why it is refused; `renamedOver` when a regular file replaced the entry
/// between the check and the open (worth another attempt).
llvm::Expected<std::optional<EntryFile>> readEntryOnce(int dirFd, const std::string &name,
                                                       bool &renamedOver) {
  renamedOver = false;
  struct stat before;
  if (::fstatat(dirFd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT)
      return std::nullopt;
    return refused("cannot stat: " + errnoText(errno));
  }
  if (std::string why = notAnEntry(before); !why.empty())
    return refused(why);
  EntryFile file;
  file.fd = Fd(::openat(dirFd, name.c_str(),
                        O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  const int fd = file.fd.get();
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) // removed since: a plain miss
      return std::nullopt;
    return refused(error == ELOOP ? "replaced by a symbolic link while it was opened"
                                  : "cannot open: " + errnoText(error));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return refused("cannot stat: " + errnoText(errno));
  if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
    renamedOver = S_ISREG(st.st_mode);
    return refused("replaced while it was opened");
  }
  if (std::string why = notAnEntry(st); !why.empty())
    return refused(why);
  const size_t size = static_cast<size_t>(st.st_size);
  std::vector<char> &out = file.bytes;
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, out.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return refused("cannot read: " + errnoText(errno));
    if (n == 0)
      return refused("truncated while it was read (" + std::to_string(done) + " of " +
                     std::to_string(size) + " bytes)");
    done += static_cast<size_t>(n);
  }
  char extra;
  ssize_t n;
  do
    n = ::read(fd, &extra, 1);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return refused("cannot read: " + errnoText(errno));
  if (n > 0)
    return refused("grew while it was read (beyond " + std::to_string(size) + " bytes)");
  return std::optional<EntryFile>(std::move(file));
}

/// Reads the entry `name` of the directory `dirFd`: checked before it is
/// opened (so a FIFO or a device is never opened), opened without following
/// a link or blocking, checked again on the descriptor, and read up to the
/// size it had then (never more: a file that grows is refused). The file,
/// std::nullopt when there is no entry, or why it is refused. An entry that
/// another publisher renamed over between the check and the open is read
/// again (a few times): the file renamed in is whole.
llvm::Expected<std::optional<EntryFile>> readEntry(int dirFd, const std::string &name) {
  bool renamedOver = false;
  for (int attempt = 0;; ++attempt) {
    auto file = readEntryOnce(dirFd, name, renamedOver);
    if (!renamedOver || attempt == 3)
      return file;
    llvm::consumeError(file.takeError());
  }
}

/// Writes `bytes` to `fd`; the error (an errno) when it cannot. A
/// `faultError` (tests) fails the write once `faultAfterBytes` are written.
std::error_code writeAll(int fd, const std::vector<char> &bytes, uint64_t faultAfterBytes,
                         int faultError) {
  size_t done = 0;
  while (done < bytes.size()) {
    size_t want = bytes.size() - done;
    if (faultError) {
      if (done >= faultAfterBytes)
        return std::error_code(faultError, std::generic_category());
      want = static_cast<size_t>(std::min<uint64_t>(want, faultAfterBytes - done));
    }
    ssize_t n = ::write(fd, bytes.data() + done, want);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::error_code(errno, std::generic_category());
    if (n == 0)
      return std::make_error_code(std::errc::no_space_on_device);
    done += static_cast<size_t>(n);
  }
  return {};
}

/// A name for a temporary file no other writer picks at the same time (the
/// open is exclusive too).
std::string temporaryName(const std::string &stem) {
  static std::atomic<uint64_t> counter{0};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, "-%ld-%llu-%llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)),
                static_cast<unsigned long long>(
                    std::chrono::steady_clock::now().time_since_epoch().count()));
  return ".tmp-" + stem + suffix;
}

/// Every name in the directory `dirFd` but "." and "..", read through a
/// descriptor of its own (readdir moves the descriptor's offset).
std::vector<std::string> namesIn(int dirFd) {
  std::vector<std::string> out;
  int fd = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return out;
  DIR *d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return out;
  }
  while (struct dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..")
      out.push_back(std::move(name));
  }
  ::closedir(d);
  return out;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  if (s.empty())
    return out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos)
      return out;
    start = at + 1;
  }
}

} // namespace

struct DiskCache::Directory {
  Fd fd;
  dev_t dev = 0;
  ino_t ino = 0;
};

namespace {

/// Opens `path` as a directory, never through a symbolic link; null (errno
/// set) when it cannot be. `st` receives its status, from the descriptor.
std::shared_ptr<DiskCache::Directory> openDirectory(const std::string &path, struct stat &st) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0)
    return nullptr;
  auto d = std::make_shared<DiskCache::Directory>();
  d->fd = std::move(fd);
  d->dev = st.st_dev;
  d->ino = st.st_ino;
  return d;
}

} // namespace

DiskCache::DiskCache(std::shared_ptr<const Directory> directory, std::string dir, Mode mode,
                     uint64_t maxBytes)
    : directory_(std::move(directory)), dir_(std::move(dir)), mode_(mode),
      maxBytes_(maxBytes) {}

DiskCache::DiskCache(std::string dir, Mode mode, uint64_t maxBytes)
    : dir_(std::move(dir)), mode_(mode), maxBytes_(maxBytes) {
  struct stat st;
  directory_ = openDirectory(dir_, st);
  if (!directory_)
    mode_ = Mode::Off;
}

int DiskCache::dirFd() const { return directory_ ? directory_->fd.get() : -1; }

DiskCache DiskCache::fromEnvironment(WarningHandler warn) {
  return fromOptions(Options::process(), warn);
}

DiskCache DiskCache::fromOptions(const Options &options, WarningHandler warn) {
  DiskCache c;
  // A bad TILEJIT_CACHE was reported by the options and reads as off.
  Mode mode = options.cacheMode();
  if (mode == Mode::Off)
    return c;
  std::string dir = options.cacheDir();
  if (dir.empty()) {
    warn("no TILEJIT_CACHE_DIR, XDG_CACHE_HOME or HOME; the disk cache is off");
    return c;
  }
  // Messages, and the check that the path still names the directory
  // opened, must not depend on a later change of working directory.
  if (dir[0] != '/') {
    if (char *cwd = ::getcwd(nullptr, 0)) {
      dir = std::string(cwd) + "/" + dir;
      std::free(cwd);
    }
  }
  if (mode == Mode::ReadWrite && !makeDirs(dir)) {
    warn("cannot create the cache directory " + dir + " (" + std::strerror(errno) +
         "); the disk cache is off");
    return c;
  }
  // Every check is on the descriptor every later access goes through.
  struct stat st;
  std::shared_ptr<Directory> directory = openDirectory(dir, st);
  if (!directory) {
    if (errno == ENOENT && mode == Mode::Read)
      return c; // nothing to read
    if (errno == ELOOP || errno == ENOTDIR)
      warn("the cache directory " + dir + " is not a directory; the disk cache is off");
    else
      warn("cannot open the cache directory " + dir + " (" + std::strerror(errno) +
           "); the disk cache is off");
    return c;
  }
  if (std::string why = unsafe(st); !why.empty()) {
    warn("refusing the cache directory " + dir + ": " + why +
         "; the disk cache is off (chmod 700 it, or set TILEJIT_CACHE_DIR)");
    return c;
  }
  // A directory this process must not write (no owner write permission, as
  // for root too, or a read-only file system) is only read.
  if (mode == Mode::ReadWrite) {
    std::string why;
    if (!(st.st_mode & S_IWUSR))
      why = "mode " + std::to_string((st.st_mode >> 6) & 7) +
            std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7);
    else if (::faccessat(directory->fd.get(), ".", W_OK, 0) != 0)
      why = std::strerror(errno);
    if (!why.empty()) {
      warn("the cache directory " + dir + " is read-only (" + why +
           "); kernels are loaded from it but not stored");
      mode = Mode::Read;
    }
  }
  return DiskCache(std::move(directory), dir, mode, options.cacheMaxBytes());
}

std::string DiskCache::pathOf(const TilingKey &key) const {
  return dir_ + "/" + key.symbolStem() + kSuffix;
}

llvm::Error DiskCache::checkDirectory() const {
  if (!directory_)
    return llvm::Error::success();
  struct stat st;
  const char *now = nullptr;
  if (::lstat(dir_.c_str(), &st) != 0)
    now = "it is gone";
  else if (S_ISLNK(st.st_mode))
    now = "it is now a symbolic link";
  else if (st.st_dev != directory_->dev || st.st_ino != directory_->ino)
    now = "it is now another file";
  if (!now)
    return llvm::Error::success();
  return refused("the cache directory " + dir_ + " was replaced after this process opened it (" +
                 now + "); entries are read and written only in the directory opened");
}

llvm::Expected<std::optional<DiskEntry>> DiskCache::load(const TilingKey &key) const {
  if (mode_ == Mode::Off)
    return std::nullopt;
  const std::string name = key.symbolStem() + kSuffix;
  auto ignored = [&](const std::string &why) {
    return refused("cache entry " + pathOf(key) + " ignored: " + why);
  };
  auto file = readEntry(dirFd(), name);
  if (!file)
    return ignored(llvm::toString(file.takeError()));
  if (!*file)
    return std::nullopt;
  auto sections = decode((*file)->bytes);
  if (!sections)
    return ignored(llvm::toString(sections.takeError()));
  Sections &s = *sections;
  if (s["key"] != key.canonical())
    return ignored("it holds another key (" + s["str"] +
                   "): another target, version or kernel");
  if (s["stem"].empty() || s["object"].empty())
    return ignored("incomplete");
  DiskEntry e;
  e.stem = s["stem"];
  e.object.assign(s["object"].begin(), s["object"].end());
  e.constraints = split(s["constraints"], '\0');
  e.times = s["times"];
  e.signature = s["signature"];
  e.tileIR = s["tile"];
  e.llvmIR = s["llvm"];
  ::futimens((*file)->fd.get(), nullptr); // last use, for the LRU bound
  return std::optional<DiskEntry>(std::move(e));
}

llvm::Error DiskCache::store(const TilingKey &key, const DiskEntry &entry) const {
  if (mode_ != Mode::ReadWrite)
    return refused("cache entry " + pathOf(key) + " not stored: the disk cache is " +
                   (mode_ == Mode::Off ? "off" : "read-only"));
  Sections s;
  s["key"] = key.canonical();
  s["str"] = key.str();
  s["stem"] = entry.stem;
  s["object"].assign(entry.object.begin(), entry.object.end());
  std::string constraints;
  for (size_t i = 0; i < entry.constraints.size(); ++i) {
    if (i)
      constraints += '\0';
    constraints += entry.constraints[i];
  }
  s["constraints"] = constraints;
  s["times"] = entry.times;
  s["signature"] = entry.signature;
  s["tile"] = entry.tileIR;
  s["llvm"] = entry.llvmIR;
  std::vector<char> bytes = encode(s);
  if (bytes.size() > kMaxEntryBytes)
    return refused("cache entry " + pathOf(key) + " not stored: " +
                   std::to_string(bytes.size()) + " bytes, over the bound of " +
                   std::to_string(kMaxEntryBytes));
  // A full disk or a read-only directory reads the same for every key: one
  // message, printed once.
  auto cannotWrite = [&](const std::string &why) {
    return refused("cannot write to the cache directory " + dir_ + ": " + why +
                   "; kernels are compiled but not cached");
  };
  std::string tmp;
  Fd fd;
  for (int attempt = 0; attempt < 16 && fd.get() < 0; ++attempt) {
    tmp = temporaryName(key.symbolStem());
    fd = Fd(::openat(dirFd(), tmp.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0 && errno != EEXIST)
      break;
  }
  if (fd.get() < 0)
    return cannotWrite(errnoText(errno));
  ::fchmod(fd.get(), 0600);
  // The descriptor is closed on every path, and a temporary file that was
  // not published is removed.
  std::error_code written = writeAll(fd.get(), bytes, faultAfterBytes_, faultError_);
  if (!fd.close() && !written)
    written = std::error_code(errno, std::generic_category());
  if (written) {
    ::unlinkat(dirFd(), tmp.c_str(), 0);
    return cannotWrite(errnoText(written.value()));
  }
  const std::string name = key.symbolStem() + kSuffix;
  if (::renameat(dirFd(), tmp.c_str(), dirFd(), name.c_str()) != 0) {
    const int error = errno;
    ::unlinkat(dirFd(), tmp.c_str(), 0);
    return refused("cannot publish cache entry " + pathOf(key) + ": " + errnoText(error));
  }
  evict();
  return llvm::Error::success();
}

std::vector<DiskListing> DiskCache::list() const { return scan(true); }

std::vector<DiskListing> DiskCache::scan(bool keys) const {
  std::vector<DiskListing> out;
  if (!directory_)
    return out;
  for (const std::string &name : namesIn(dirFd())) {
    if (!endsWith(name, kSuffix) || name[0] == '.')
      continue;
    struct stat st;
    if (::fstatat(dirFd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    DiskListing l;
    l.file = dir_ + "/" + name;
    l.name = name;
    l.bytes = static_cast<uint64_t>(st.st_size);
    l.lastUse = st.st_mtime;
    if (keys) {
      l.key = "(unverified)";
      auto file = readEntry(dirFd(), name);
      if (!file)
        llvm::consumeError(file.takeError());
      else if (*file) {
        auto sections = decode((*file)->bytes);
        if (sections)
          l.key = (*sections)["str"];
        else
          llvm::consumeError(sections.takeError());
      }
    }
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(),
            [](const DiskListing &a, const DiskListing &b) { return a.lastUse > b.lastUse; });
  return out;
}

size_t DiskCache::clear() const {
  size_t n = 0;
  for (const DiskListing &l : list())
    n += ::unlinkat(dirFd(), l.name.c_str(), 0) == 0;
  return n;
}

size_t DiskCache::prune() const {
  size_t n = 0;
  for (const DiskListing &l : list())
    if (l.key == "(unverified)")
      n += ::unlinkat(dirFd(), l.name.c_str(), 0) == 0;
  // Temporary files of writers that died (an hour is far beyond any write).
  const int64_t stale = static_cast<int64_t>(std::time(nullptr)) - 3600;
  for (const std::string &name : namesIn(dirFd())) {
    struct stat st;
    if (name.rfind(".tmp-", 0) == 0 &&
        ::fstatat(dirFd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && st.st_mtime < stale)
      n += ::unlinkat(dirFd(), name.c_str(), 0) == 0;
  }
  size_t before = scan(false).size();
  evict();
  return n + (before - scan(false).size());
}

void DiskCache::evict() const {
  std::vector<DiskListing> all = scan(false); // most recently used first
  // A file over the entry bound can never be loaded: it goes first.
  std::stable_partition(all.begin(), all.end(),
                        [](const DiskListing &l) { return l.bytes <= kMaxEntryBytes; });
  uint64_t total = 0;
  for (const DiskListing &l : all)
    total += l.bytes;
  while (total > maxBytes_ && !all.empty()) {
    const DiskListing &oldest = all.back();
    if (::unlinkat(dirFd(), oldest.name.c_str(), 0) == 0)
      total -= oldest.bytes;
    all.pop_back();
  }
}

} // namespace tilejit::jit
