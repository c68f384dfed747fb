/*===- aclnn_base.h - Common include of the aclnn op headers -*- C -*-===//
 *
 * \file
 * Included by every aclnnop/ header: the aclnn argument objects and status
 * codes, the runtime types (aclrtStream) phase 2 takes, and the marker of
 * optional parameters (ACLNN_OPTIONAL).
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNN_ACLNN_BASE_H
#define TILEJIT_ACLNN_ACLNN_BASE_H

#include "acl/acl_base.h"
#include "acl/acl_rt.h"
#include "aclnn/acl_meta.h"

/** Marks a pointer parameter of an aclnnop/ entry point that may be NULL
 *  (an optional tensor, array or string): every parameter except those whose
 *  NULL the operator refuses as a missing required pointer
 *  (ACLNN_ERR_PARAM_NULLPTR, the spec's required list). A NULL that only a
 *  rule of the operator refuses in some modes (e.g. "must not be null when
 *  rope is given") still marks the parameter optional. Expands to nothing for
 *  C and C++ compilers; the generator of the Python binding
 *  (python/aclnn/gen_aclnn_bindings.py) parses the headers with
 *  TILEJIT_BINDGEN defined and reads it as a clang annotation. */
#ifndef ACLNN_OPTIONAL
#ifdef TILEJIT_BINDGEN
#define ACLNN_OPTIONAL __attribute__((annotate("tilejit_optional")))
#else
#define ACLNN_OPTIONAL
#endif
#endif

#endif /* TILEJIT_ACLNN_ACLNN_BASE_H */
