#include "engine/checkpoint.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace engine {

namespace {

constexpr char kMagic[8] = {'G', 'M', 'L', 'P', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;

uint64_t fnv1a(const std::vector<unsigned char>& bytes, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

// Byte-by-byte little-endian, so the file is the same whatever the host's byte order.
void put_u32(std::vector<unsigned char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_u64(std::vector<unsigned char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

class Reader {
 public:
  Reader(const std::vector<unsigned char>& bytes, size_t end, const std::string& path)
      : bytes_(bytes), end_(end), path_(path) {}

  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes_[pos_++]) << (8 * i);
    return v;
  }
  std::string str(size_t n, const char* what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(&bytes_[pos_]), n);
    pos_ += n;
    return s;
  }
  void floats(float* dst, size_t n, const char* what) {
    need(n * 4, what);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t bits = u32(what);
      std::memcpy(&dst[i], &bits, 4);
    }
  }
  size_t pos() const { return pos_; }

 private:
  void need(size_t n, const char* what) {
    if (end_ - pos_ < n)
      throw Error("checkpoint " + path_ + ": ends inside " + what + " (file truncated?)");
  }
  const std::vector<unsigned char>& bytes_;
  size_t end_;
  size_t pos_ = 0;
  const std::string& path_;
};

}  // namespace

void save_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params) {
  std::vector<unsigned char> out(std::begin(kMagic), std::end(kMagic));
  put_u32(out, kVersion);
  put_u32(out, static_cast<uint32_t>(params.size()));
  for (const Parameter* p : params) {
    put_u32(out, static_cast<uint32_t>(p->name.size()));
    out.insert(out.end(), p->name.begin(), p->name.end());
    put_u32(out, static_cast<uint32_t>(p->value.rows()));
    put_u32(out, static_cast<uint32_t>(p->value.cols()));
    for (float f : p->value.download(ctx.stream())) {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put_u32(out, bits);
    }
  }
  put_u64(out, fnv1a(out, out.size()));

  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("checkpoint " + path + ": cannot open " + tmp + " for writing");
    f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      throw Error("checkpoint " + path + ": writing " + tmp + " failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("checkpoint " + path + ": cannot rename " + tmp + " to it");
  }
}

void load_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("checkpoint " + path + ": cannot open it for reading");
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)),
                                         std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error("checkpoint " + path + ": not a gemm-mlp checkpoint (bad magic)");
  if (bytes.size() < sizeof kMagic + 4 + 4 + 8)
    throw Error("checkpoint " + path + ": too short for a header (file truncated?)");

  const size_t body = bytes.size() - 8;
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= static_cast<uint64_t>(bytes[body + i]) << (8 * i);

  Reader in(bytes, body, path);
  in.str(sizeof kMagic, "the magic");
  const uint32_t version = in.u32("the version");
  if (version != kVersion)
    throw Error("checkpoint " + path + ": version " + std::to_string(version) +
                ", this build reads version " + std::to_string(kVersion));
  if (stored != fnv1a(bytes, body))
    throw Error("checkpoint " + path + ": checksum mismatch (file corrupted or truncated)");
  const uint32_t count = in.u32("the parameter count");
  if (count != params.size())
    throw Error("checkpoint " + path + ": holds " + std::to_string(count) +
                " parameters, the model has " + std::to_string(params.size()));

  // Read everything into host buffers first, so a bad file never leaves a half-loaded model.
  std::vector<std::vector<float>> values(count);
  for (uint32_t i = 0; i < count; ++i) {
    const Parameter& p = *params[i];
    const uint32_t len = in.u32("a parameter name length");
    const std::string name = in.str(len, "a parameter name");
    const auto rows = static_cast<int32_t>(in.u32("a shape"));
    const auto cols = static_cast<int32_t>(in.u32("a shape"));
    if (name != p.name)
      throw Error("checkpoint " + path + ": parameter " + std::to_string(i) + " is '" + name +
                  "', the model expects '" + p.name + "'");
    if (rows != p.value.rows() || cols != p.value.cols())
      throw Error("checkpoint " + path + ": '" + name + "' is " + std::to_string(rows) + "x" +
                  std::to_string(cols) + ", the model expects " + p.value.shape());
    values[i].resize(static_cast<size_t>(p.value.size()));
    in.floats(values[i].data(), values[i].size(), "parameter data");
  }
  if (in.pos() != body)
    throw Error("checkpoint " + path + ": " + std::to_string(body - in.pos()) +
                " unexpected bytes after the last parameter");
  for (uint32_t i = 0; i < count; ++i) params[i]->value.upload(values[i], ctx.stream());
}

}  // namespace engine
