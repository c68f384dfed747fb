//===- Printer.cpp - Tile IR to text --------------------------------------===//
#include "dsl/ir/Printer.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace tilejit::ir {

namespace {

std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

class Printer {
public:
  explicit Printer(const PrintOptions &o) : opts_(o) {}

  std::string kernel(const Kernel &k) {
    names_.clear();
    next_ = 0;
    os_ << "kernel @" << k.name() << "(";
    for (unsigned i = 0; i < k.params.size(); ++i) {
      // Parameters are named after their source names.
      names_[k.paramValue(i)] = "%" + k.params[i].name;
      names_[k.gridParamValue(i)] = "%" + k.params[i].name;
      os_ << (i ? ", " : "") << "%" << k.params[i].name << ": "
          << k.params[i].type.str();
    }
    os_ << ") {\n";
    if (!k.specialization.empty()) {
      os_ << "  spec ";
      for (size_t i = 0; i < k.specialization.size(); ++i) {
        const SpecParam &s = k.specialization[i];
        os_ << (i ? ", " : "") << s.name << " = ";
        if (s.isType)
          os_ << scalarName(s.typeValue);
        else if (s.isBool)
          os_ << (s.intValue ? "true" : "false");
        else
          os_ << s.intValue;
      }
      os_ << "\n";
    }
    if (k.localBudgetBytes)
      os_ << "  budget " << k.localBudgetBytes << "\n";
    if (k.buffersPlanned)
      os_ << "  scratch " << k.scratchBytes << "\n";
    for (const ShapeConstraint &c : k.constraints) {
      os_ << "  constraint %" << k.params[c.param].name << "." << c.axis
          << " == ";
      if (c.kind == ShapeConstraint::Kind::EqualsConstant)
        os_ << c.constant;
      else
        os_ << "%" << k.params[c.otherParam].name << "." << c.otherAxis;
      os_ << " \"";
      for (char ch : c.message) {
        if (ch == '"' || ch == '\\')
          os_ << '\\';
        os_ << ch;
      }
      os_ << "\"\n";
    }
    os_ << "  grid {\n";
    block(k.grid(), 2);
    os_ << "  }\n  body {\n";
    block(k.body(), 2);
    os_ << "  }\n}\n";
    return os_.str();
  }

private:
  const std::string &name(const Value *v) {
    auto it = names_.find(v);
    if (it != names_.end())
      return it->second;
    std::string fresh = std::to_string(next_++);
    fresh.insert(fresh.begin(), '%');
    return names_[v] = std::move(fresh);
  }
  std::string ref(const Value *v) {
    auto it = names_.find(v);
    return it != names_.end() ? it->second : "%<undefined>";
  }

  void indent(int depth) { os_ << std::string(2 * depth, ' '); }

  void block(const Block &b, int depth) {
    for (const auto &op : b.ops())
      print(*op, depth);
  }

  void attrs(const Op &op) {
    const OpAttrs &a = op.attrs();
    std::vector<std::string> parts;
    switch (op.kind()) {
    case OpKind::Constant:
      parts.push_back("value = " + (isFloat(op.result()->type().elem())
                                         ? formatFloat(a.floatValue)
                                         : std::to_string(a.intValue)));
      break;
    case OpKind::ConstParam:
      parts.push_back("name = \"" + a.name + "\"");
      parts.push_back("value = " + std::to_string(a.intValue));
      break;
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
    case OpKind::Dim:
    case OpKind::Stride:
    case OpKind::Iota:
      parts.push_back("axis = " + std::to_string(a.axis));
      break;
    case OpKind::Reduce:
      parts.push_back(std::string("kind = ") + reduceKindName(a.reduceKind));
      parts.push_back("axis = " + std::to_string(a.axis));
      break;
    case OpKind::Cmp:
      parts.push_back(std::string("predicate = ") + predicateName(a.predicate));
      break;
    case OpKind::Mma:
      if (a.transA)
        parts.push_back("transA");
      if (a.transB)
        parts.push_back("transB");
      if (a.mmaForm != MmaForm::None)
        parts.push_back(std::string("form = ") + mmaFormName(a.mmaForm));
      if (a.dpbf16)
        parts.push_back("dpbf16");
      if (a.blockRows)
        parts.push_back("block = [" + std::to_string(a.blockRows) + ", " +
                        std::to_string(a.blockCols) + "]");
      if (a.packA >= 0)
        parts.push_back("pack_a = " + std::to_string(a.packA));
      if (a.packB >= 0)
        parts.push_back("pack_b = " + std::to_string(a.packB));
      if (a.accSplat)
        parts.push_back("acc_splat");
      break;
    case OpKind::Load:
    case OpKind::Gather:
      // An integer tensor's `other` is exact in intValue.
      if (!isFloat(op.result()->type().elem()) ? a.intValue != 0 : a.floatValue != 0)
        parts.push_back("other = " + (!isFloat(op.result()->type().elem())
                                          ? std::to_string(a.intValue)
                                          : formatFloat(a.floatValue)));
      [[fallthrough]];
    case OpKind::Store:
    case OpKind::Scatter:
      if (a.hasMask)
        parts.push_back("mask");
      if (a.stream)
        parts.push_back("stream");
      if (a.cached)
        parts.push_back("cached");
      if (a.forward)
        parts.push_back("forward");
      if (a.copy)
        parts.push_back("copy");
      if (a.forwarded)
        parts.push_back("forwarded");
      if (a.rowMask != RowMask::None)
        parts.push_back(std::string("row_mask = ") + rowMaskName(a.rowMask));
      if (a.overlap != Overlap::None)
        parts.push_back(std::string("overlap = ") + overlapName(a.overlap));
      break;
    case OpKind::Copy:
      if (!isFloat(op.result()->type().elem()) ? a.intValue != 0 : a.floatValue != 0)
        parts.push_back("other = " + (!isFloat(op.result()->type().elem())
                                          ? std::to_string(a.intValue)
                                          : formatFloat(a.floatValue)));
      if (a.stream)
        parts.push_back("stream");
      if (a.cached)
        parts.push_back("cached");
      if (a.overlap != Overlap::None)
        parts.push_back(std::string("overlap = ") + overlapName(a.overlap));
      break;
    case OpKind::LoadScalar:
      if (a.floatValue != 0)
        parts.push_back("other = " + formatFloat(a.floatValue));
      break;
    case OpKind::CheckBounds: {
      if (!a.extent.empty()) {
        std::string e = "extent = [";
        for (size_t i = 0; i < a.extent.size(); ++i)
          e += (i ? ", " : "") + std::to_string(a.extent[i]);
        parts.push_back(e + "]");
      }
      if (a.hasMask)
        parts.push_back("mask");
      parts.push_back("name = \"" + a.name + "\"");
      break;
    }
    case OpKind::Prefetch: {
      std::string e = "extent = [";
      for (size_t i = 0; i < a.extent.size(); ++i)
        e += (i ? ", " : "") + std::to_string(a.extent[i]);
      parts.push_back(e + "]");
      if (a.spread)
        parts.push_back("spread");
      if (a.spreadBy)
        parts.push_back("by = " + std::to_string(a.spreadBy));
      if (a.spreadPer)
        parts.push_back("per = " + std::to_string(a.spreadPer));
      break;
    }
    default:
      break;
    }
    if (a.canonicalNaN)
      parts.push_back("nan = canonical");
    if (parts.empty())
      return;
    os_ << " {";
    for (size_t i = 0; i < parts.size(); ++i)
      os_ << (i ? ", " : "") << parts[i];
    os_ << "}";
  }

  void print(const Op &op, int depth) {
    indent(depth);
    for (unsigned i = 0; i < op.numResults(); ++i)
      os_ << (i ? ", " : "") << name(op.result(i));
    if (op.numResults())
      os_ << " = ";
    os_ << mnemonic(op.kind());
    for (unsigned i = 0; i < op.numOperands(); ++i)
      os_ << (i ? ", " : " ") << ref(op.operand(i));
    attrs(op);
    if (op.numResults()) {
      os_ << " : ";
      for (unsigned i = 0; i < op.numResults(); ++i)
        os_ << (i ? ", " : "") << op.result(i)->type().str();
      for (unsigned i = 0; i < op.numResults(); ++i)
        if (op.result(i)->bufferOffset() >= 0)
          os_ << " buf(" << (op.numResults() > 1 ? std::to_string(i) + ":" : "")
              << op.result(i)->bufferOffset() << ")";
    }
    if (opts_.printLocations && op.loc().isKnown())
      os_ << " loc(" << op.loc().line << ":" << op.loc().column << ")";
    for (unsigned bi = 0; bi < op.numBlocks(); ++bi) {
      const Block &b = *op.block(bi);
      os_ << (bi ? " else {\n" : " {\n");
      if (b.numArguments()) {
        indent(depth);
        os_ << "^(";
        for (unsigned i = 0; i < b.numArguments(); ++i) {
          const Value *arg = b.argument(i);
          os_ << (i ? ", " : "") << name(arg) << ": " << arg->type().str();
          if (arg->bufferOffset() >= 0)
            os_ << " buf(" << arg->bufferOffset() << ")";
        }
        os_ << "):\n";
      }
      block(b, depth + 1);
      indent(depth);
      os_ << "}";
    }
    os_ << "\n";
  }

  PrintOptions opts_;
  std::ostringstream os_;
  std::map<const Value *, std::string> names_;
  unsigned next_ = 0;
};

} // namespace

std::string print(const Kernel &kernel, const PrintOptions &options) {
  return Printer(options).kernel(kernel);
}

std::string print(const Module &module, const PrintOptions &options) {
  std::string out;
  for (const auto &k : module.kernels)
    out += print(*k, options);
  return out;
}

} // namespace tilejit::ir
