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

/// Parses and checks framing and checksum; "" on success, else why not.
std::string decode(const std::vector<char> &in, Sections &out) {
  if (in.size() < 8 + 8 + 32)
    return "truncated";
  if (std::memcmp(in.data(), kMagic, 8) != 0)
    return "not a tilejit cache entry";
  auto digest = sha256(in.data(), in.size() - 32);
  if (std::memcmp(digest.data(), in.data() + in.size() - 32, 32) != 0)
    return "checksum mismatch (corrupted or truncated)";
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
    return "truncated";
  if (format != kFormat)
    return "entry format " + std::to_string(format) + ", this tilejit reads " +
           std::to_string(kFormat);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t nameLen, len;
    if (!get(4, nameLen) || end - pos < nameLen)
      return "truncated";
    std::string name(in.data() + pos, nameLen);
    pos += nameLen;
    if (!get(8, len) || end - pos < len)
      return "truncated";
    out[name] = std::string(in.data() + pos, len);
    pos += len;
  }
  if (pos != end)
    return "trailing bytes";
  return "";
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

/// One attempt of readEntry; `renamedOver` when a regular file replaced the
/// entry between the check and the open.
std::string readEntryOnce(int dirFd, const std::string &name, std::vector<char> &out,
                          bool &absent, Fd &fd, bool &renamedOver) {
  absent = false;
  renamedOver = false;
  struct stat before;
  if (::fstatat(dirFd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    absent = errno == ENOENT;
    return absent ? "absent" : "cannot stat: " + errnoText(errno);
  }
  if (std::string why = notAnEntry(before); !why.empty())
    return why;
  fd = Fd(::openat(dirFd, name.c_str(),
                   O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    int error = errno;
    absent = error == ENOENT; // removed since: a plain miss
    if (absent)
      return "absent";
    return error == ELOOP ? "replaced by a symbolic link while it was opened"
                          : "cannot open: " + errnoText(error);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return "cannot stat: " + errnoText(errno);
  if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
    renamedOver = S_ISREG(st.st_mode);
    return "replaced while it was opened";
  }
  if (std::string why = notAnEntry(st); !why.empty())
    return why;
  const size_t size = static_cast<size_t>(st.st_size);
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd.get(), out.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return "cannot read: " + errnoText(errno);
    if (n == 0)
      return "truncated while it was read (" + std::to_string(done) + " of " +
             std::to_string(size) + " bytes)";
    done += static_cast<size_t>(n);
  }
  char extra;
  ssize_t n;
  do
    n = ::read(fd.get(), &extra, 1);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return "cannot read: " + errnoText(errno);
  if (n > 0)
    return "grew while it was read (beyond " + std::to_string(size) + " bytes)";
  return "";
}

/// Reads the entry `name` of the directory `dirFd` into `out`: checked
/// before it is opened (so a FIFO or a device is never opened), opened
/// without following a link or blocking, checked again on the descriptor,
/// and read up to the size it had then (never more: a file that grows is
/// refused). "" on success, else why not; `absent` when there is no entry.
/// `fd` keeps the entry open, to mark its use once it is verified. An entry
/// that another publisher renamed over between the check and the open is
/// read again (a few times): the file renamed in is whole.
std::string readEntry(int dirFd, const std::string &name, std::vector<char> &out,
                      bool &absent, Fd &fd) {
  std::string why;
  bool renamedOver = false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    why = readEntryOnce(dirFd, name, out, absent, fd, renamedOver);
    if (!renamedOver)
      break;
  }
  return why;
}

/// Writes `bytes` to `fd`; "" on success, else the error. A `faultError`
/// (tests) fails the write once `faultAfterBytes` are written.
std::string writeAll(int fd, const std::vector<char> &bytes, uint64_t faultAfterBytes,
                     int faultError) {
  size_t done = 0;
  while (done < bytes.size()) {
    size_t want = bytes.size() - done;
    if (faultError) {
      if (done >= faultAfterBytes)
        return errnoText(faultError);
      want = static_cast<size_t>(std::min<uint64_t>(want, faultAfterBytes - done));
    }
    ssize_t n = ::write(fd, bytes.data() + done, want);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errnoText(errno);
    if (n == 0)
      return errnoText(ENOSPC);
    done += static_cast<size_t>(n);
  }
  return "";
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

DiskCache DiskCache::fromEnvironment(std::string &warning) {
  return fromOptions(Options::process(), warning);
}

DiskCache DiskCache::fromOptions(const Options &options, std::string &warning) {
  DiskCache c;
  // A bad TILEJIT_CACHE was reported by the options and reads as off.
  Mode mode = options.cacheMode();
  if (mode == Mode::Off)
    return c;
  std::string dir = options.cacheDir();
  if (dir.empty()) {
    warning = "no TILEJIT_CACHE_DIR, XDG_CACHE_HOME or HOME; the disk cache is off";
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
    warning = "cannot create the cache directory " + dir + " (" + std::strerror(errno) +
              "); the disk cache is off";
    return c;
  }
  // Every check is on the descriptor every later access goes through.
  struct stat st;
  std::shared_ptr<Directory> directory = openDirectory(dir, st);
  if (!directory) {
    if (errno == ENOENT && mode == Mode::Read)
      return c; // nothing to read
    if (errno == ELOOP || errno == ENOTDIR)
      warning = "the cache directory " + dir + " is not a directory; the disk cache is off";
    else
      warning = "cannot open the cache directory " + dir + " (" + std::strerror(errno) +
                "); the disk cache is off";
    return c;
  }
  if (std::string why = unsafe(st); !why.empty()) {
    warning = "refusing the cache directory " + dir + ": " + why +
              "; the disk cache is off (chmod 700 it, or set TILEJIT_CACHE_DIR)";
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
      warning = "the cache directory " + dir + " is read-only (" + why +
                "); kernels are loaded from it but not stored";
      mode = Mode::Read;
    }
  }
  return DiskCache(std::move(directory), dir, mode, options.cacheMaxBytes());
}

std::string DiskCache::pathOf(const TilingKey &key) const {
  return dir_ + "/" + key.symbolStem() + kSuffix;
}

std::string DiskCache::replaced() const {
  if (!directory_)
    return "";
  struct stat st;
  const char *now = nullptr;
  if (::lstat(dir_.c_str(), &st) != 0)
    now = "it is gone";
  else if (S_ISLNK(st.st_mode))
    now = "it is now a symbolic link";
  else if (st.st_dev != directory_->dev || st.st_ino != directory_->ino)
    now = "it is now another file";
  if (!now)
    return "";
  return "the cache directory " + dir_ + " was replaced after this process opened it (" +
         now + "); entries are read and written only in the directory opened";
}

std::optional<DiskEntry> DiskCache::load(const TilingKey &key, std::string &warning) const {
  if (mode_ == Mode::Off)
    return std::nullopt;
  const std::string name = key.symbolStem() + kSuffix;
  const std::string path = pathOf(key);
  warning = replaced();
  auto addWarning = [&](const std::string &message) {
    warning += (warning.empty() ? "" : "; ") + message;
  };
  std::vector<char> bytes;
  bool absent = false;
  Fd fd;
  std::string why = readEntry(dirFd(), name, bytes, absent, fd);
  if (absent)
    return std::nullopt;
  Sections s;
  if (why.empty())
    why = decode(bytes, s);
  if (why.empty() && s["key"] != key.canonical())
    why = "it holds another key (" + s["str"] + "): another target, version or kernel";
  if (why.empty() && (s["stem"].empty() || s["object"].empty()))
    why = "incomplete";
  if (!why.empty()) {
    addWarning("cache entry " + path + " ignored: " + why + "; rebuilding it");
    return std::nullopt;
  }
  DiskEntry e;
  e.stem = s["stem"];
  e.object.assign(s["object"].begin(), s["object"].end());
  e.constraints = split(s["constraints"], '\0');
  e.times = s["times"];
  e.signature = s["signature"];
  e.tileIR = s["tile"];
  e.llvmIR = s["llvm"];
  ::futimens(fd.get(), nullptr); // last use, for the LRU bound
  return e;
}

bool DiskCache::store(const TilingKey &key, const DiskEntry &entry,
                      std::string &warning) const {
  if (mode_ != Mode::ReadWrite)
    return false;
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
  if (bytes.size() > kMaxEntryBytes) {
    warning = "cache entry " + pathOf(key) + " not stored: " + std::to_string(bytes.size()) +
              " bytes, over the bound of " + std::to_string(kMaxEntryBytes);
    return false;
  }
  // A full disk or a read-only directory reads the same for every key: one
  // message, printed once.
  auto cannotWrite = [&](const std::string &why) {
    warning = "cannot write to the cache directory " + dir_ + ": " + why +
              "; kernels are compiled but not cached";
    return false;
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
  std::string why = writeAll(fd.get(), bytes, faultAfterBytes_, faultError_);
  if (!fd.close() && why.empty())
    why = errnoText(errno);
  if (!why.empty()) {
    ::unlinkat(dirFd(), tmp.c_str(), 0);
    return cannotWrite(why);
  }
  const std::string name = key.symbolStem() + kSuffix;
  if (::renameat(dirFd(), tmp.c_str(), dirFd(), name.c_str()) != 0) {
    warning = "cannot publish cache entry " + pathOf(key) + ": " + errnoText(errno);
    ::unlinkat(dirFd(), tmp.c_str(), 0);
    return false;
  }
  evict();
  return true;
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
      std::vector<char> bytes;
      bool absent;
      Fd fd;
      Sections s;
      if (readEntry(dirFd(), name, bytes, absent, fd).empty() && decode(bytes, s).empty())
        l.key = s["str"];
      else
        l.key = "(unverified)";
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
