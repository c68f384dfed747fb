/*===- aclnn_base.h - Common include of the aclnn op headers -*- C -*-===//
 *
 * \file
 * Included by every aclnnop/ header: the aclnn argument objects and status
 * codes, and the runtime types (aclrtStream) phase 2 takes.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNN_ACLNN_BASE_H
#define TILEJIT_ACLNN_ACLNN_BASE_H

#include "acl/acl_base.h"
#include "acl/acl_rt.h"
#include "aclnn/acl_meta.h"

#endif /* TILEJIT_ACLNN_ACLNN_BASE_H */
