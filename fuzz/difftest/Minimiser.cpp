//===- Minimiser.cpp - Shrinking a failing program while it still fails ------===//
#include "Minimiser.h"

#include "Generator.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <numeric>

namespace tilejit::difftest {
namespace {

using Edit = std::function<bool(Program &)>;

void collectLists(std::vector<Stmt> &body, std::vector<std::vector<Stmt> *> &out) {
  out.push_back(&body);
  for (Stmt &s : body) {
    collectLists(s.body, out);
    collectLists(s.elseBody, out);
  }
}

/// Every statement as (list, index), in pre-order.
std::vector<std::pair<std::vector<Stmt> *, size_t>> statements(Program &p) {
  std::vector<std::vector<Stmt> *> lists;
  collectLists(p.body, lists);
  std::vector<std::pair<std::vector<Stmt> *, size_t>> out;
  for (auto *l : lists)
    for (size_t i = 0; i < l->size(); ++i)
      out.push_back({l, i});
  return out;
}

void collectExprs(Expr &e, std::vector<Expr *> &out) {
  out.push_back(&e);
  for (Expr &a : e.args)
    collectExprs(a, out);
}

void collectExprs(std::vector<Stmt> &body, std::vector<Expr *> &out) {
  for (Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::Let:
    case Stmt::Kind::Var:
    case Stmt::Kind::Expr:
      collectExprs(s.value, out);
      break;
    case Stmt::Kind::Assign:
      collectExprs(s.target, out);
      collectExprs(s.value, out);
      break;
    case Stmt::Kind::For:
      collectExprs(s.lower, out);
      collectExprs(s.upper, out);
      if (s.hasStep)
        collectExprs(s.step, out);
      collectExprs(s.body, out);
      break;
    case Stmt::Kind::If:
      collectExprs(s.cond, out);
      collectExprs(s.body, out);
      collectExprs(s.elseBody, out);
      break;
    }
  }
}

std::vector<Expr *> expressions(Program &p) {
  std::vector<Expr *> out;
  collectExprs(p.body, out);
  return out;
}

Expr shapeList(const std::vector<int> &shape) {
  Expr l;
  l.kind = Expr::Kind::List;
  for (int d : shape) {
    Expr s;
    s.kind = Expr::Kind::Size;
    s.size = d;
    l.args.push_back(s);
  }
  return l;
}

Expr litExpr(const std::string &t) {
  Expr e;
  e.kind = Expr::Kind::Lit;
  e.text = t;
  return e;
}

Expr callExpr(const std::string &n, std::vector<Expr> args, const std::string &typeArg, const Ty &ty) {
  Expr e;
  e.kind = Expr::Kind::Call;
  e.text = n;
  e.args = std::move(args);
  e.typeArg = typeArg;
  e.ty = ty;
  return e;
}

/// A constant of type `t` (zero).
Expr zeroOf(const Ty &t) {
  const char *k = kindName(t.elem);
  if (t.isScalar()) {
    if (t.elem == ElemType::I1)
      return callExpr("cast", {litExpr("false")}, "i1", t);
    if (isFloatKind(t.elem))
      return callExpr("cast", {litExpr("0.0")}, k, t);
    return callExpr("cast", {litExpr("0")}, k, t);
  }
  Ty f32{ElemType::F32, t.shape};
  if (t.elem == ElemType::F16 || t.elem == ElemType::BF16)
    return callExpr("cast", {callExpr("zeros", {shapeList(t.shape)}, "f32", f32)}, k, t);
  if (t.elem == ElemType::I1) {
    Expr cmp;
    cmp.kind = Expr::Kind::Binary;
    cmp.text = "!=";
    cmp.args = {callExpr("zeros", {shapeList(t.shape)}, "i32", Ty{ElemType::I32, t.shape}), litExpr("0")};
    cmp.ty = t;
    return cmp;
  }
  return callExpr("zeros", {shapeList(t.shape)}, k, t);
}

bool isZeroConstant(const Expr &e) {
  return e.kind == Expr::Kind::Call && (e.text == "zeros" || (e.text == "cast" && !e.args.empty() &&
                                                             e.args[0].kind == Expr::Kind::Lit));
}

} // namespace

std::vector<std::string> unusedParameters(const Program &p) {
  // A name declared once in the kernel's text and never named again: its
  // declaration is its only occurrence (a tensor's dimension names are
  // tokens of their own, `t4_0` is not `t4`).
  std::string text = printKernel(p);
  std::map<std::string, int> count;
  for (size_t i = 0; i < text.size();) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      ++count[text.substr(i, j - i)];
      i = j;
    } else {
      ++i;
    }
  }
  std::vector<std::string> out;
  for (const CompileParam &c : p.cparams)
    if (count[c.name] <= 1)
      out.push_back(c.name);
  for (const ArgSpec &a : p.args)
    if (count[a.name] <= 1)
      out.push_back(a.name);
  return out;
}

bool dropParameters(Program &p, const std::vector<std::string> &names) {
  size_t before = p.cparams.size() + p.args.size();
  auto named = [&](const std::string &n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  std::erase_if(p.cparams, [&](const CompileParam &c) { return named(c.name); });
  std::erase_if(p.args, [&](const ArgSpec &a) { return named(a.name); });
  return p.cparams.size() + p.args.size() != before;
}

namespace {

std::vector<Edit> edits(const Program &p0) {
  Program p = p0; // for counting only
  std::vector<Edit> out;
  // Parameters no statement names, all at once (each argument's data has
  // its own seed, so the others keep theirs).
  out.push_back([](Program &q) { return dropParameters(q, unusedParameters(q)); });
  // Statements: delete; replace a for/if by its body (or its else).
  size_t ns = statements(p).size();
  for (size_t i = ns; i-- > 0;) // later statements first: earlier ones define names
    out.push_back([i](Program &q) {
      auto st = statements(q);
      st[i].first->erase(st[i].first->begin() + static_cast<long>(st[i].second));
      return true;
    });
  for (size_t i = 0; i < ns; ++i)
    for (int which = 0; which < 3; ++which)
      out.push_back([i, which](Program &q) {
        auto st = statements(q);
        auto [list, k] = st[i];
        Stmt s = (*list)[k];
        if (s.kind != Stmt::Kind::For && s.kind != Stmt::Kind::If)
          return false;
        if (which == 2) { // drop the else
          if (!s.hasElse)
            return false;
          (*list)[k].hasElse = false;
          (*list)[k].elseBody.clear();
          return true;
        }
        if (which == 1 && (s.kind != Stmt::Kind::If || !s.hasElse))
          return false;
        std::vector<Stmt> inner = which == 0 ? s.body : s.elseBody;
        list->erase(list->begin() + static_cast<long>(k));
        list->insert(list->begin() + static_cast<long>(k), inner.begin(), inner.end());
        if (s.kind == Stmt::Kind::For) { // the loop variable becomes a let
          Stmt let;
          let.kind = Stmt::Kind::Let;
          let.name = s.name;
          let.value = s.lower;
          list->insert(list->begin() + static_cast<long>(k), let);
        }
        return true;
      });
  // Arguments, compile-time parameters and the grid.
  for (size_t i = 0; i < p.args.size(); ++i)
    out.push_back([i](Program &q) {
      if (i >= q.args.size())
        return false;
      q.args.erase(q.args.begin() + static_cast<long>(i));
      return true;
    });
  for (size_t i = 0; i < p.cparams.size(); ++i)
    out.push_back([i](Program &q) {
      if (i >= q.cparams.size())
        return false;
      q.cparams.erase(q.cparams.begin() + static_cast<long>(i));
      return true;
    });
  out.push_back([](Program &q) {
    if (q.grid.size() == 1 && q.grid[0].kind == Expr::Kind::Lit && q.grid[0].text == "1")
      return false;
    q.grid.clear();
    q.grid.push_back(litExpr("1"));
    return true;
  });
  // Sizes: to 1, halved, minus one.
  for (size_t i = 1; i < p.sizes.size(); ++i)
    for (int opt = 0; opt < 3; ++opt)
      out.push_back([i, opt](Program &q) {
        Size &s = q.sizes[i];
        int64_t v = opt == 0 ? 1 : opt == 1 ? s.value / 2 : s.value - 1;
        if (v < 1 || v >= s.value)
          return false;
        s.value = v;
        for (CompileParam &c : q.cparams)
          if (c.name == s.param)
            c.value = std::to_string(v);
        return true;
      });
  // Tensor axes.
  for (size_t i = 0; i < p.args.size(); ++i)
    for (size_t ax = 0; ax < p.args[i].shape.size(); ++ax)
      for (int opt = 0; opt < 3; ++opt)
        out.push_back([i, ax, opt](Program &q) {
          if (i >= q.args.size() || !q.args[i].isTensor || ax >= q.args[i].shape.size())
            return false;
          int64_t &d = q.args[i].shape[ax];
          int64_t v = opt == 0 ? 1 : opt == 1 ? d / 2 : d - 1;
          if (v < 1 || v >= d)
            return false;
          std::vector<int64_t> oldShape = q.args[i].shape;
          d = v;
          relayout(q.args[i], oldShape);
          return true;
        });
  // Expressions: by an operand of the same type, by a zero, named
  // arguments dropped.
  std::vector<Expr *> es = expressions(p);
  for (size_t i = 0; i < es.size(); ++i) {
    const Expr &e = *es[i];
    for (size_t j = 0; j < e.args.size(); ++j)
      if (e.ty && e.args[j].ty && *e.args[j].ty == *e.ty)
        out.push_back([i, j](Program &q) {
          Expr *x = expressions(q)[i];
          Expr a = x->args[j];
          *x = a;
          return true;
        });
    if (e.ty && !isZeroConstant(e) && e.kind != Expr::Kind::Lit)
      out.push_back([i](Program &q) {
        Expr *x = expressions(q)[i];
        *x = zeroOf(*x->ty);
        return true;
      });
    for (size_t j = 0; j < e.argNames.size(); ++j)
      if (!e.argNames[j].empty())
        out.push_back([i, j](Program &q) {
          Expr *x = expressions(q)[i];
          x->args.erase(x->args.begin() + static_cast<long>(j));
          x->argNames.erase(x->argNames.begin() + static_cast<long>(j));
          return true;
        });
  }
  return out;
}

} // namespace

void relayout(ArgSpec &a, const std::vector<int64_t> &oldShape) {
  size_t rank = a.shape.size();
  // Axes from innermost (smallest stride) outwards; keep the inner stride
  // and the padding after each axis.
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return a.strides[x] < a.strides[y]; });
  std::vector<int64_t> old = a.strides;
  int64_t stride = rank ? std::max<int64_t>(1, old[order[0]]) : 1;
  for (size_t i = 0; i < rank; ++i) {
    size_t ax = order[i];
    int64_t pad = i + 1 < rank ? std::max<int64_t>(0, old[order[i + 1]] - old[ax] * oldShape[ax]) : 0;
    a.strides[ax] = stride;
    stride = stride * a.shape[ax] + pad;
  }
  int64_t last = a.offset;
  for (size_t i = 0; i < rank; ++i)
    last += (a.shape[i] - 1) * a.strides[i];
  a.storage = last + 1 + 2;
}

Program minimise(const Program &start, const std::string &failureClass,
                 const std::function<std::string(const Program &)> &classify,
                 const MinimiseBudget &budget, int &tries) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Program p = start;
  tries = 0;
  bool progress = true;
  auto spent = [&] {
    return tries >= budget.maxTries || elapsed() >= budget.maxSeconds ||
           (budget.deadline && std::chrono::steady_clock::now() >= *budget.deadline);
  };
  while (progress) {
    progress = false;
    std::vector<Edit> es = edits(p);
    for (size_t i = 0; i < es.size(); ++i) {
      if (spent())
        return p;
      Program q = p;
      if (!es[i](q))
        continue;
      markExactness(q);
      ++tries;
      if (classify(q) != failureClass)
        continue;
      p = std::move(q);
      progress = true;
      // The edits of the smaller program, from about the same place on.
      size_t at = i;
      es = edits(p);
      if (at >= es.size())
        break;
      i = at - 1; // the loop's ++i tries edit `at` of the new list next (wraps from 0)
    }
  }
  return p;
}

} // namespace tilejit::difftest
