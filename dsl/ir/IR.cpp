//===- IR.cpp - Tile IR core data structures ------------------------------===//
#include "dsl/ir/IR.h"

#include <cstring>

namespace tilejit::ir {

//===----------------------------------------------------------------------===//
// Scalar kinds
//===----------------------------------------------------------------------===//

unsigned bitWidth(ScalarKind k) {
  switch (k) {
  case ScalarKind::I1: return 1;
  case ScalarKind::I8: case ScalarKind::U8: return 8;
  case ScalarKind::I16: case ScalarKind::U16: case ScalarKind::F16:
  case ScalarKind::BF16: return 16;
  case ScalarKind::I32: case ScalarKind::U32: case ScalarKind::F32: return 32;
  case ScalarKind::I64: return 64;
  }
  return 0;
}

unsigned byteWidth(ScalarKind k) {
  return k == ScalarKind::I1 ? 1 : bitWidth(k) / 8;
}

bool isFloat(ScalarKind k) {
  return k == ScalarKind::F16 || k == ScalarKind::BF16 || k == ScalarKind::F32;
}

bool isInteger(ScalarKind k) { return !isFloat(k) && k != ScalarKind::I1; }

bool isSigned(ScalarKind k) {
  return k == ScalarKind::I8 || k == ScalarKind::I16 || k == ScalarKind::I32 ||
         k == ScalarKind::I64;
}

static const char *const kScalarNames[] = {"i1",  "i8",  "u8",  "i16",
                                           "u16", "i32", "u32", "i64",
                                           "f16", "bf16", "f32"};

const char *scalarName(ScalarKind k) {
  return kScalarNames[static_cast<unsigned>(k)];
}

bool parseScalarKind(const std::string &name, ScalarKind &out) {
  for (unsigned i = 0; i < sizeof(kScalarNames) / sizeof(*kScalarNames); ++i)
    if (name == kScalarNames[i]) {
      out = static_cast<ScalarKind>(i);
      return true;
    }
  return false;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

Type Type::withElem(ScalarKind e) const {
  Type t = *this;
  t.elem_ = e;
  return t;
}

std::string Type::str() const {
  switch (kind_) {
  case Kind::None:
    return "none";
  case Kind::Scalar:
    return scalarName(elem_);
  case Kind::Tile: {
    std::string s = "tile<";
    s += scalarName(elem_);
    for (int64_t d : shape_)
      s += ", " + std::to_string(d);
    return s + ">";
  }
  case Kind::Tensor:
    return std::string("tensor<") + scalarName(elem_) + ", " +
           std::to_string(tensorRank_) + ">";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Op kinds
//===----------------------------------------------------------------------===//

namespace {
struct OpInfo {
  const char *mnemonic;
  OpFamily family;
};
const OpInfo kOpInfo[] = {
#define TILE_OP(Name, Mnemonic, Family) {Mnemonic, OpFamily::Family},
#include "dsl/ir/Nodes.def"
};
} // namespace

const char *mnemonic(OpKind k) {
  return kOpInfo[static_cast<unsigned>(k)].mnemonic;
}

OpFamily family(OpKind k) { return kOpInfo[static_cast<unsigned>(k)].family; }

bool isRecomputableScalar(const Value &v) {
  const Op *d = v.definingOp();
  if (!d || d->numBlocks() || d->numResults() != 1 || !v.type().isScalar())
    return false;
  switch (d->kind()) {
  case OpKind::Constant:
  case OpKind::ConstParam:
  case OpKind::ProgramId:
  case OpKind::NumPrograms:
  case OpKind::Dim:
  case OpKind::Stride:
    return true;
  default:
    return isElementwise(d->kind()); // not memory (load_scalar) or control
  }
}

bool parseMnemonic(const std::string &name, OpKind &out) {
  for (unsigned i = 0; i < sizeof(kOpInfo) / sizeof(*kOpInfo); ++i)
    if (name == kOpInfo[i].mnemonic) {
      out = static_cast<OpKind>(i);
      return true;
    }
  return false;
}

const char *predicateName(CmpPredicate p) {
  static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return names[static_cast<unsigned>(p)];
}

const char *reduceKindName(ReduceKind k) {
  static const char *const names[] = {"sum", "max", "min"};
  return names[static_cast<unsigned>(k)];
}

const char *overlapName(Overlap o) {
  static const char *const names[] = {"none", "disjoint", "in_place", "buffered", "checked"};
  return names[static_cast<unsigned>(o)];
}

bool parseOverlap(const std::string &name, Overlap &out) {
  for (Overlap o : {Overlap::None, Overlap::Disjoint, Overlap::InPlace, Overlap::Buffered,
                    Overlap::Checked})
    if (name == overlapName(o)) {
      out = o;
      return true;
    }
  return false;
}

std::vector<int64_t> regionExtents(unsigned rank, const Type &tile) {
  std::vector<int64_t> e(rank, 1);
  for (unsigned d = 0; d < tile.rank(); ++d)
    e[rank - tile.rank() + d] = tile.shape()[d];
  return e;
}

const char *rowMaskName(RowMask m) {
  static const char *const names[] = {"none", "lanes", "rows"};
  return names[static_cast<unsigned>(m)];
}

bool parseRowMask(const std::string &name, RowMask &out) {
  for (RowMask m : {RowMask::None, RowMask::Lanes, RowMask::Rows})
    if (name == rowMaskName(m)) {
      out = m;
      return true;
    }
  return false;
}

const char *mmaFormName(MmaForm f) {
  static const char *const names[] = {"none", "dot", "broadcast", "bf16pairs", "amx"};
  return names[static_cast<unsigned>(f)];
}

bool parseMmaForm(const std::string &name, MmaForm &out) {
  for (MmaForm f : {MmaForm::Dot, MmaForm::Broadcast, MmaForm::Bf16Pairs, MmaForm::Amx})
    if (name == mmaFormName(f)) {
      out = f;
      return true;
    }
  return false;
}

//===----------------------------------------------------------------------===//
// Ops and blocks
//===----------------------------------------------------------------------===//

Value *Op::addResult(Type t) {
  results_.push_back(
      std::make_unique<Value>(std::move(t), this, nullptr, results_.size()));
  return results_.back().get();
}

Block *Op::addBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return blocks_.back().get();
}

Value *Block::addArgument(Type t) {
  args_.push_back(
      std::make_unique<Value>(std::move(t), nullptr, this, args_.size()));
  return args_.back().get();
}

Op *Block::append(std::unique_ptr<Op> op) {
  op->setParentBlock(this);
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Op *Block::insert(size_t pos, std::unique_ptr<Op> op) {
  op->setParentBlock(this);
  auto it = ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(pos),
                        std::move(op));
  return it->get();
}

Op *Block::terminator() const {
  if (ops_.empty() || ops_.back()->kind() != OpKind::Yield)
    return nullptr;
  return ops_.back().get();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

Kernel::Kernel(std::string name)
    : name_(std::move(name)), grid_(std::make_unique<Block>(nullptr)),
      body_(std::make_unique<Block>(nullptr)) {}

void Kernel::addParam(Param p) {
  Value *g = grid_->addArgument(p.type);
  Value *b = body_->addArgument(p.type);
  g->setNameHint(p.name);
  b->setNameHint(p.name);
  params.push_back(std::move(p));
}

Kernel *Module::lookup(const std::string &name) const {
  for (const auto &k : kernels)
    if (k->name() == name)
      return k.get();
  return nullptr;
}

} // namespace tilejit::ir
