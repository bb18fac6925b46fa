// gemm_bench's GEMM shapes (shapes.h): --shapes parsed, and the default lists.
#include "apps/bench_common/shapes.h"

#include <cctype>
#include <sstream>

namespace bench {

Shape parse_shape(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("bad --shapes entry '" + text + "': " + why +
                      " (expected N, MxNxK or MxNxK:LAYOUT with LAYOUT one of NN, NT, TN, TT)");
  };
  std::string dims = text, layout = "NN";
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    dims = text.substr(0, colon);
    layout = text.substr(colon + 1);
    for (char& ch : layout) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  }
  const auto is_op = [](char ch) { return ch == 'N' || ch == 'T'; };
  if (layout.size() != 2 || !is_op(layout[0]) || !is_op(layout[1]))
    throw bad("unknown layout '" + layout + "'");
  std::vector<long> v;
  std::stringstream parts(dims);
  for (std::string part; std::getline(parts, part, 'x');) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + part + "' is not a positive integer");
    if (part.size() > 6) throw bad("dimensions must be in 1..65536");
    v.push_back(std::stol(part));
  }
  if (v.size() == 1) v = {v[0], v[0], v[0]};
  if (v.size() != 3) throw bad("need 1 or 3 dimensions");
  for (long x : v)
    if (x < 1 || x > 65536) throw bad("dimensions must be in 1..65536");
  return {int(v[0]), int(v[1]), int(v[2]), gemm::Op(layout[0]), gemm::Op(layout[1])};
}

std::vector<Shape> parse_shapes(const std::vector<std::string>& texts,
                                std::vector<Shape> fallback) {
  if (texts.empty()) return fallback;
  std::vector<Shape> out;
  for (const std::string& t : texts) out.push_back(parse_shape(t));
  return out;
}

std::vector<Shape> default_shapes() {
  using gemm::Op;
  std::vector<Shape> out;
  for (int s : {256, 512, 1024, 2048, 4096, 8192}) out.push_back({s, s, s});
  // The MLP's (784-1024-1024-10 at batch 256): forward NT, input gradient NN, weight gradient TN,
  // and the output layer's forward.
  out.push_back({256, 1024, 784, Op::N, Op::T});
  out.push_back({256, 784, 1024, Op::N, Op::N});
  out.push_back({1024, 784, 256, Op::T, Op::N});
  out.push_back({256, 10, 1024, Op::N, Op::T});
  return out;
}

std::vector<Shape> default_host_shapes() {
  return {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
}

}  // namespace bench
