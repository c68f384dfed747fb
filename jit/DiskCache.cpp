//===- DiskCache.cpp - The disk tier of the kernel cache ------------------===//
#include "jit/DiskCache.h"

#include "jit/Options.h"
#include "jit/TilingKey.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

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

/// Reads a trusted regular file completely; "" on success, else why not.
std::string readEntry(const std::string &path, std::vector<char> &out, bool &absent) {
  absent = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    absent = errno == ENOENT;
    return absent ? "absent" : std::string("cannot open: ") + std::strerror(errno);
  }
  struct stat st;
  std::string why;
  if (::fstat(fd, &st) != 0)
    why = std::string("cannot stat: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = "not a regular file";
  else
    why = unsafe(st);
  if (why.empty()) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    if (done != out.size())
      why = "short read";
  }
  ::close(fd);
  return why;
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

DiskCache::DiskCache(std::string dir, Mode mode, uint64_t maxBytes)
    : dir_(std::move(dir)), mode_(mode), maxBytes_(maxBytes) {}

DiskCache DiskCache::fromEnvironment(std::string &warning) {
  return fromOptions(Options::process(), warning);
}

DiskCache DiskCache::fromOptions(const Options &options, std::string &warning) {
  DiskCache c;
  // A bad TILEJIT_CACHE was reported by the options and reads as off.
  const Mode mode = options.cacheMode();
  if (mode == Mode::Off)
    return c;
  const std::string &dir = options.cacheDir();
  if (dir.empty()) {
    warning = "no TILEJIT_CACHE_DIR, XDG_CACHE_HOME or HOME; the disk cache is off";
    return c;
  }
  if (mode == Mode::ReadWrite && !makeDirs(dir)) {
    warning = "cannot create the cache directory " + dir + " (" + std::strerror(errno) +
              "); the disk cache is off";
    return c;
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (mode == Mode::Read)
      return c; // nothing to read
    warning = "cannot stat the cache directory " + dir + "; the disk cache is off";
    return c;
  }
  if (!S_ISDIR(st.st_mode)) {
    warning = "the cache directory " + dir + " is not a directory; the disk cache is off";
    return c;
  }
  if (std::string why = unsafe(st); !why.empty()) {
    warning = "refusing the cache directory " + dir + ": " + why +
              "; the disk cache is off (chmod 700 it, or set TILEJIT_CACHE_DIR)";
    return c;
  }
  c.dir_ = dir;
  c.mode_ = mode;
  c.maxBytes_ = options.cacheMaxBytes();
  return c;
}

std::string DiskCache::pathOf(const TilingKey &key) const {
  return dir_ + "/" + key.symbolStem() + kSuffix;
}

std::optional<DiskEntry> DiskCache::load(const TilingKey &key, std::string &warning) const {
  if (mode_ == Mode::Off)
    return std::nullopt;
  const std::string path = pathOf(key);
  std::vector<char> bytes;
  bool absent = false;
  std::string why = readEntry(path, bytes, absent);
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
    warning = "cache entry " + path + " ignored: " + why + "; rebuilding it";
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
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // last use, for the LRU bound
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
  std::string tmp = dir_ + "/.tmp-" + key.symbolStem() + "-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    warning = "cannot write to the cache directory " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  ::fchmod(fd, 0600);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  bool ok = done == bytes.size() && ::close(fd) == 0;
  if (!ok || ::rename(tmp.c_str(), pathOf(key).c_str()) != 0) {
    warning = "cannot publish cache entry " + pathOf(key) + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  evict();
  return true;
}

std::vector<DiskListing> DiskCache::list() const { return scan(true); }

std::vector<DiskListing> DiskCache::scan(bool keys) const {
  std::vector<DiskListing> out;
  if (dir_.empty())
    return out;
  DIR *d = ::opendir(dir_.c_str());
  if (!d)
    return out;
  while (struct dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!endsWith(name, kSuffix) || name[0] == '.')
      continue;
    std::string path = dir_ + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    DiskListing l;
    l.file = path;
    l.bytes = static_cast<uint64_t>(st.st_size);
    l.lastUse = st.st_mtime;
    if (keys) {
      std::vector<char> bytes;
      bool absent;
      Sections s;
      if (readEntry(path, bytes, absent).empty() && decode(bytes, s).empty())
        l.key = s["str"];
      else
        l.key = "(unverified)";
    }
    out.push_back(std::move(l));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const DiskListing &a, const DiskListing &b) { return a.lastUse > b.lastUse; });
  return out;
}

size_t DiskCache::clear() const {
  size_t n = 0;
  for (const DiskListing &l : list())
    n += ::unlink(l.file.c_str()) == 0;
  return n;
}

size_t DiskCache::prune() const {
  size_t n = 0;
  for (const DiskListing &l : list())
    if (l.key == "(unverified)")
      n += ::unlink(l.file.c_str()) == 0;
  size_t before = scan(false).size();
  evict();
  return n + (before - scan(false).size());
}

void DiskCache::evict() const {
  std::vector<DiskListing> all = scan(false); // most recently used first
  uint64_t total = 0;
  for (const DiskListing &l : all)
    total += l.bytes;
  while (total > maxBytes_ && !all.empty()) {
    const DiskListing &oldest = all.back();
    if (::unlink(oldest.file.c_str()) == 0)
      total -= oldest.bytes;
    all.pop_back();
  }
}

} // namespace tilejit::jit
