//===- Peer.cpp - PyTorch as a peer, timed alternately with tilejit -------===//
#include "Peer.h"

#include "Suite.h"

#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace tilejit::bench {

namespace {
llvm::Error failure(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}
} // namespace

Peer::~Peer() {
  if (to_) {
    std::fputs("{\"op\":\"quit\"}\n", to_);
    std::fclose(to_);
  }
  if (from_)
    std::fclose(from_);
  if (pid_ > 0)
    ::waitpid(pid_, nullptr, 0);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string optimisedBlasDir() {
  namespace fs = std::filesystem;
  // This machine's triplet directories (x86_64-linux-gnu, ...), not
  // another architecture's installed beside it.
  struct utsname u {};
  ::uname(&u);
  const std::string triplet = std::string(u.machine) + "-linux-";
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const char *root : {"/usr/lib", "/lib"})
    for (const auto &e : fs::directory_iterator(root, ec))
      if (e.path().filename().string().rfind(triplet, 0) == 0)
        dirs.push_back(e.path());
  dirs.emplace_back("/usr/lib");
  for (const char *flavour : {"openblas-openmp", "openblas-pthread"})
    for (const fs::path &d : dirs)
      if (fs::exists(d / flavour / "libblas.so.3", ec))
        return (d / flavour).string();
  return "";
}

llvm::Error
Peer::start(const std::string &python, const std::string &script, int threads,
            const std::vector<std::pair<std::string, std::string>> &env,
            const std::string &libraryDir) {
  // The child's LD_LIBRARY_PATH, made here: the child only sets it.
  std::string libraryPath;
  if (!libraryDir.empty()) {
    libraryPath = libraryDir;
    if (const char *given = std::getenv("LD_LIBRARY_PATH"); given && *given)
      libraryPath += std::string(":") + given;
  }
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0)
    return failure("pipe: " + std::string(std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0)
    return failure("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    // The peer at its best: glibc keeps freed blocks up to its largest
    // mmap threshold and never trims the heap, so a buffer freed by one call
    // is reused by the next instead of coming back as fresh pages (a page
    // fault each). Its threads are the benchmark's.
    ::setenv("MALLOC_MMAP_THRESHOLD_", "33554432", 1);
    ::setenv("MALLOC_TRIM_THRESHOLD_", "4294967296", 1);
    ::setenv("MALLOC_TOP_PAD_", "268435456", 1);
    const std::string t = std::to_string(threads);
    ::setenv("OMP_NUM_THREADS", t.c_str(), 1);
    ::setenv("OPENBLAS_NUM_THREADS", t.c_str(), 1);
    for (const auto &[name, value] : env)
      ::setenv(name.c_str(), value.c_str(), 1);
    if (!libraryPath.empty())
      ::setenv("LD_LIBRARY_PATH", libraryPath.c_str(), 1);
    ::execlp(python.c_str(), python.c_str(), script.c_str(),
             static_cast<char *>(nullptr));
    std::fprintf(stderr, "cannot run %s: %s\n", python.c_str(),
                 std::strerror(errno));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  pid_ = pid;
  to_ = ::fdopen(in[1], "w");
  from_ = ::fdopen(out[0], "r");
  ::signal(SIGPIPE, SIG_IGN);
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "tilejit-peer-XXXXXX").string();
  if (char *d = ::mkdtemp(tmpl.data()))
    dir_ = d;
  if (!to_ || !from_)
    return failure("the peer did not answer");
  if (llvm::Error e = request({{"op", "hello"}, {"threads", threads}}))
    return e;
  info_ = answer_;
  return llvm::Error::success();
}

llvm::Error Peer::request(const nlohmann::json &msg) {
  if (!to_ || !from_)
    return failure("the peer is not running");
  const std::string line = msg.dump() + "\n";
  if (std::fputs(line.c_str(), to_) < 0 || std::fflush(to_) != 0)
    return failure("the peer's pipe closed");
  std::string in;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, from_)) {
    in += buf;
    if (!in.empty() && in.back() == '\n')
      break;
  }
  if (in.empty()) {
    std::fclose(to_);
    std::fclose(from_);
    to_ = from_ = nullptr;
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return failure("the peer exited");
  }
  answer_ = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (answer_.is_discarded())
    return failure("unreadable answer: " + in);
  if (!answer_.value("ok", false))
    return failure(answer_.value("error", std::string("failed")));
  return llvm::Error::success();
}

std::string Peer::writeInput(const std::string &name, const void *data,
                             size_t bytes) {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path, std::ios::binary)
      .write(static_cast<const char *>(data),
             static_cast<std::streamsize>(bytes));
  return path;
}

llvm::Error Peer::setup(const nlohmann::json &spec) {
  nlohmann::json msg = spec;
  msg["op"] = "setup";
  llvm::Error e = request(msg);
  ready_ = !e;
  return e;
}

void Peer::setupInto(const nlohmann::json &spec, Result &r) {
  if (llvm::Error e = setup(spec)) {
    r.peerNote = "peer: " + llvm::toString(std::move(e));
    return;
  }
  r.peerNote = answer_.value("note", "");
  r.peerMaxAbsDiff = answer_.value("max_abs_diff", -1.0);
}

llvm::Expected<double> Peer::run(size_t flushBytes) {
  if (!ready_)
    return failure("no case is set up in the peer");
  nlohmann::json msg = {{"op", "run"}};
  if (flushBytes)
    msg["flush"] = flushBytes;
  if (llvm::Error e = request(msg))
    return e;
  const double seconds = answer_.value("s", -1.0);
  if (!(seconds >= 0))
    return failure("the peer's answer has no time");
  return seconds;
}

void Peer::reset() {
  // The case is dropped either way; a peer that cannot drop its side has
  // exited or fails the next case's setup, which reports it.
  if (ready_)
    llvm::consumeError(request({{"op", "reset"}}));
  ready_ = false;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir_, ec))
    std::filesystem::remove(e.path(), ec);
}

} // namespace tilejit::bench
