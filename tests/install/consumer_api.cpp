// An outside C++ program using the public API from the installed package
// alone: a kernel from text, specialised, launched on host memory and
// checked against a plain loop; a stage read back; wrong calls answered with
// errors, not crashes.
#include <tilejit/tilejit.h>

#include <cstdio>
#include <vector>

static const char *kSource = R"(
kernel scale<T: f32|f16, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], a: f32) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  store(y, [i], cast<T>(cast<f32>(load(x, [i], [BN])) * a));
}
)";

int main() {
  tilejit::Source src = tilejit::Source::fromText("scale.tile", kSource);
  auto k = tilejit::compile(src, "scale", {{"T", "f32"}});
  if (!k) {
    std::fprintf(stderr, "%s\n", k.error().c_str());
    return 1;
  }
  const int64_t n = 1000;
  std::vector<float> x(n), y(n, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i) * 0.5f;
  tilejit::Args args;
  args.tensor(x.data(), {n}).named("x").tensor(y.data(), {n}).named("y").f32(3.0f);
  if (tilejit::Status s = k->launch(args); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != x[i] * 3.0f)
      return 3;
  auto ir = tilejit::emit(src, "scale", {{"T", "f32"}}, tilejit::Stage::TileOpt);
  if (!ir || ir->find("store") == std::string::npos)
    return 4;
  // Errors are values: an unknown parameter, a wrong argument list, a
  // directory for a source.
  auto bad = tilejit::compile(src, "scale", {{"T", "f32"}, {"B", "8"}});
  if (bad || bad.error().find("did you mean 'BN'") == std::string::npos)
    return 5;
  tilejit::Args wrong;
  wrong.tensor(x.data(), {n}).f32(3.0f);
  if (k->launch(wrong))
    return 6;
  if (tilejit::Source::fromFile("."))
    return 7;
  std::printf("api consumer ok: %s, %s, %zu parameters\n", tilejit::version().c_str(),
              k->key().c_str(), k->signature().size());
  return 0;
}
