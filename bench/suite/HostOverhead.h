//===- HostOverhead.h - A whole call through the C API, back to back -*- C++
//-*-===//
///
/// \file
/// The host-overhead cases of the operators: aclTensors made once over a
/// problem's views; each call runs phase 1 (validation, kernel lookup,
/// argument packing) and phase 2 on the default stream (the launch, run
/// inline), back to back, as a decode loop calls it.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_HOSTOVERHEAD_H
#define TILEJIT_BENCH_SUITE_HOSTOVERHEAD_H

#include "Suite.h"

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "ops/host/TensorView.h"

#include <functional>
#include <vector>

namespace tilejit::bench {

/// An aclTensor over `v` (its shape, strides, offset, format and storage
/// shape), made through aclCreateTensor as a C caller makes it.
aclTensor *createAclTensor(const host::TensorView &v);

/// aclTensors over views (null for a null view), destroyed with this.
class AclTensors {
public:
  explicit AclTensors(const std::vector<const host::TensorView *> &views);
  ~AclTensors();
  AclTensors(const AclTensors &) = delete;
  AclTensors &operator=(const AclTensors &) = delete;
  aclTensor *operator[](size_t i) const { return t_[i]; }
  aclTensor *const *data() const { return t_.data(); }

private:
  std::vector<aclTensor *> t_;
};

/// Times `call` (given the aclTensors of `views`, in order; 0: success) as a
/// latency case moving `bytes`.
Result hostOverheadCase(Context &ctx,
                        const std::vector<const host::TensorView *> &views,
                        double bytes,
                        const std::function<int(aclTensor *const *)> &call);

} // namespace tilejit::bench

#endif
