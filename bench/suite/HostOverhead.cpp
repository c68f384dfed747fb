//===- HostOverhead.cpp - A whole call through the C API, back to back ----===//
#include "HostOverhead.h"

namespace tilejit::bench {

aclTensor *createAclTensor(const host::TensorView &v) {
  return aclCreateTensor(v.shape.data(), v.shape.size(),
                         static_cast<aclDataType>(v.dtype), v.strides.data(),
                         v.offset, static_cast<aclFormat>(v.format),
                         v.storageShape.data(), v.storageShape.size(), v.data);
}

AclTensors::AclTensors(const std::vector<const host::TensorView *> &views) {
  for (const host::TensorView *v : views)
    t_.push_back(v ? createAclTensor(*v) : nullptr);
}

AclTensors::~AclTensors() {
  for (aclTensor *x : t_)
    aclDestroyTensor(x);
}

Result hostOverheadCase(Context &ctx,
                        const std::vector<const host::TensorView *> &views,
                        double bytes,
                        const std::function<int(aclTensor *const *)> &call) {
  std::vector<aclTensor *> t;
  for (const host::TensorView *v : views) {
    std::vector<int64_t> storage{v->storageShape[0]};
    t.push_back(aclCreateTensor(
        v->shape.data(), v->shape.size(), static_cast<aclDataType>(v->dtype),
        v->strides.data(), 0, static_cast<aclFormat>(v->format), storage.data(),
        1, v->data));
  }
  Result r;
  r.bound = Bound::Latency;
  r.inCache = true;
  r.bytes = bytes;
  r.workingSetBytes = bytes;
  if (call(t.data()) != 0)
    r.error = aclGetRecentErrMsg();
  else
    ctx.measure(
        r, [&] { (void)call(t.data()); }, {}, false,
        ctx.options().quick ? 21 : 201);
  r.note = "whole call through the C API (phase 1 + 2), back to back";
  for (aclTensor *x : t)
    aclDestroyTensor(x);
  return r;
}

} // namespace tilejit::bench
