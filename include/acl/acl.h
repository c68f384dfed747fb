/*===- acl.h - Entry header of the acl-compatible C API -----------*- C -*-===//
 *
 * \file
 * What `#include "acl/acl.h"` gives a program written for AscendCL: the base
 * types, the aclrt* runtime and aclInit/aclFinalize. The upstream examples
 * call printf with only this header and <iostream>/<vector> included, so
 * <stdio.h> comes along as it does with CANN's headers.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACL_ACL_H
#define TILEJIT_ACL_ACL_H

#include <stdio.h>

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Initialises the runtime. `configPath` may be NULL; a non-NULL path must
 *  name a readable file (its contents are ignored). Initialising twice
 *  without aclFinalize gives ACL_ERROR_REPEAT_INITIALIZE. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);

/** Finalises the runtime: waits for every stream's pending work. Finalising
 *  without aclInit gives ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/** The version of this acl-compatible runtime (tilejit's own). */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion,
                                             int32_t *minorVersion,
                                             int32_t *patchVersion);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACL_ACL_H */
