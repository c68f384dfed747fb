//===- Peer.h - PyTorch as a peer, timed alternately with tilejit -*- C++
//-*-===//
///
/// \file
/// The peer is a Python process (bench/peer/torch_peer.py) that speaks one
/// JSON object per line on its stdin and stdout. A case writes its inputs to
/// files in the peer's directory, sends `setup` (what to build from them),
/// then, sample by sample, `run`: the peer runs its operator once and
/// answers with the seconds it took, timed in the peer around the call
/// alone. The benchmark flushes the cache before sending `run`, as it does
/// before its own calls, so both sides see the same memory state.
///
/// The same protocol serves a second process, tilejit's own Python package
/// (bench/peer/python_peer.py, the python/ cases), started with the build's
/// package on its PYTHONPATH.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_PEER_H
#define TILEJIT_BENCH_SUITE_PEER_H

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace tilejit::bench {

struct Result;

/// The directory of an optimised BLAS that provides libblas.so.3, for the
/// PyTorch peer's LD_LIBRARY_PATH: Debian's python3-torch links
/// libblas.so.3, which the system's alternative may resolve to the
/// reference BLAS (libblas3). Found at run time in the multiarch library
/// directories (/usr/lib/<triplet>, /lib/<triplet>, then /usr/lib):
/// openblas-openmp/ (libopenblas0-openmp), else openblas-pthread/; empty
/// where neither is installed (the peer then reports the BLAS it loads).
std::string optimisedBlasDir();

class Peer {
public:
  Peer() = default;
  ~Peer();
  Peer(const Peer &) = delete;
  Peer &operator=(const Peer &) = delete;

  /// Starts `python script` with `threads` threads and the variables of
  /// `env` set in its environment; `libraryDir`, where not empty, first on
  /// its LD_LIBRARY_PATH (the child's only: this process's is unchanged).
  /// An error says why it cannot start or why its `hello` fails (the
  /// PyTorch peer: torch does not import).
  llvm::Error
  start(const std::string &python, const std::string &script, int threads,
        const std::vector<std::pair<std::string, std::string>> &env = {},
        const std::string &libraryDir = "");
  bool running() const { return pid_ > 0; }
  /// The peer's `hello` answer: torch version, BLAS, threads, settings.
  const nlohmann::json &info() const { return info_; }

  /// Writes `bytes` at `data` to a file of the peer's directory; its path.
  std::string writeInput(const std::string &name, const void *data,
                         size_t bytes);
  /// Builds the peer's side of a case from `spec`; an error (the peer's
  /// reason) if the peer cannot express it. The answer's fields, a refusal's
  /// too, are in lastAnswer().
  llvm::Error setup(const nlohmann::json &spec);
  /// setup(spec), then the case's peer note (and the peer's output against
  /// tilejit's, where the peer compared them) into `r`, or the error.
  void setupInto(const nlohmann::json &spec, Result &r);
  bool ready() const { return ready_; }
  /// One call of the peer's operator; its seconds, or an error (no case is
  /// set up, the peer failed or exited). With `flushBytes`, the peer first reads that many bytes of a buffer of
  /// its own (a parallel read, untimed), so that the call finds its data in
  /// memory, not in the cache.
  llvm::Expected<double> run(size_t flushBytes = 0);
  /// Drops the current case (its files).
  void reset();
  const nlohmann::json &lastAnswer() const { return answer_; }

private:
  /// Sends `msg` and reads the answer into answer_; an error where the
  /// pipe fails, the peer exits, or the answer is not `ok`.
  llvm::Error request(const nlohmann::json &msg);

  int pid_ = -1;
  FILE *to_ = nullptr, *from_ = nullptr;
  std::string dir_;
  nlohmann::json info_, answer_;
  bool ready_ = false;
};

} // namespace tilejit::bench

#endif
