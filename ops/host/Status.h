//===- Status.h - aclnn status codes with a message -------------*- C++ -*-===//
///
/// \file
/// What every host-side operator call returns: an aclnn status code (the
/// numbers of the upstream documents) and, on failure, a message that names
/// the argument and the rule ("key: rank must be 3 or 4, got 2"). Also the
/// calling thread's "recent error message", the text aclGetRecentErrMsg
/// returns: every failing C API call records its message there.
///
/// Error conventions in ops/, one per layer:
///  - The C edge (ops/aclnn/, the operators' <Operator>Aclnn.cpp): the aclnn
///    and acl status codes (aclnnStatus, aclError), or NULL from a
///    constructor, with the message recorded by recordError for
///    aclGetRecentErrMsg. Nothing else crosses the C API.
///  - The host side (ops/host/, ops/common/, the operators' validation,
///    tiling and launch): host::Status, an aclnn code and a message naming
///    the argument and the rule; a result goes through an out-parameter, as
///    the C API's own do (hostCompiler, getKernel, lastLevelCacheBytes).
///  - Inside (the JIT, the samples): llvm::Expected / llvm::Error. An
///    llvm::Error becomes a Status where the host side calls in:
///    ops/host/Kernels.cpp (a kernel: 561003, 561000) and
///    ops/common/HostCache.cpp (an option: 361001).
///  - Invariants the code itself guarantees: assert.
/// No exceptions, and no bool-plus-string out-parameters.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_STATUS_H
#define TILEJIT_OPS_HOST_STATUS_H

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

namespace tilejit::host {

/// The aclnn status codes (equal to the ACLNN_* macros of aclnn/acl_meta.h).
namespace status {
constexpr int32_t Success = 0;
constexpr int32_t ParamNullptr = 161001; ///< ACLNN_ERR_PARAM_NULLPTR
constexpr int32_t ParamInvalid = 161002; ///< ACLNN_ERR_PARAM_INVALID
constexpr int32_t RuntimeError = 361001; ///< ACLNN_ERR_RUNTIME_ERROR
constexpr int32_t Inner = 561000;        ///< ACLNN_ERR_INNER
constexpr int32_t InnerInferShape =
    561001; ///< ACLNN_ERR_INNER_INFERSHAPE_ERROR
constexpr int32_t InnerTilingError = 561002; ///< ACLNN_ERR_INNER_TILING_ERROR
constexpr int32_t InnerFindKernel =
    561003;                              ///< ACLNN_ERR_INNER_FIND_KERNEL_ERROR
constexpr int32_t InnerNullptr = 561103; ///< ACLNN_ERR_INNER_NULLPTR
} // namespace status

/// A status code and, when it is not Success, a message.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  /// A status with `code` and `message`.
  Status(int32_t code, std::string message)
      : code_(code), message_(std::move(message)) {}

  /// Success.
  static Status ok() { return Status(); }
  /// A failure whose message is the concatenation of `parts` (streamed).
  template <typename... Parts>
  static Status error(int32_t code, const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    return Status(code, os.str());
  }

  /// True on success.
  bool isOk() const { return code_ == status::Success; }
  /// True on success.
  explicit operator bool() const { return isOk(); }
  /// The aclnn status code.
  int32_t code() const { return code_; }
  /// The message (empty on success).
  const std::string &message() const { return message_; }

private:
  int32_t code_ = status::Success;
  std::string message_;
};

/// One required pointer argument: its name and value.
struct RequiredArg {
  const char *name;  ///< the parameter's name, e.g. "keyCache"
  const void *value; ///< the pointer passed
};

/// ParamNullptr naming the first null entry of `required` ("keyCache must
/// not be null"), or success when none is null. Checks run in list order.
inline Status requireNonNull(std::initializer_list<RequiredArg> required) {
  for (const RequiredArg &arg : required)
    if (!arg.value)
      return Status::error(status::ParamNullptr, arg.name, " must not be null");
  return Status::ok();
}

/// Records `message` as the calling thread's recent error message, and
/// prints it on stderr where the options ask for it (printsAclErrors).
void setRecentErrorMessage(std::string message);
/// Records a failed status as "<context>: <message>" (nothing for success)
/// and returns its code.
int32_t recordError(const Status &status, const char *context = nullptr);
/// Takes the calling thread's recent error message: returns a pointer to it
/// (valid until the next take on this thread) and clears it, or nullptr if
/// none was recorded since the last take.
const char *takeRecentErrorMessage();

} // namespace tilejit::host

#endif
