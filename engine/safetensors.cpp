#include "engine/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "engine/atomic_file.h"
#include "engine/tensor.h"  // gemm_mlp::Error

namespace engine::safetensors {

namespace {

using nlohmann::json;

// A header larger than this is not one of ours, nor any sane model's (safetensors' own reader
// stops at 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

std::string read_whole(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("checkpoint " + path + ": cannot open it: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error("checkpoint " + path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw Error("checkpoint " + path + ": is not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("checkpoint " + path + ": cannot open it for reading");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  if (!f.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw Error("checkpoint " + path + ": read failed (file changed while reading?)");
  return bytes;
}

}  // namespace

std::string encode(const std::string& path, const std::vector<Entry>& tensors,
                   const Metadata& metadata) {
  json header = json::object();
  header["__metadata__"] = metadata;
  std::string data;
  for (const Entry& e : tensors) {
    const std::string where = "checkpoint " + path + ": tensor '" + e.name + "'";
    if (e.name == "__metadata__" || header.contains(e.name))
      throw Error(where + ": the name is taken; nothing was written");
    for (size_t i = 0; i < e.values.size(); ++i)
      if (!std::isfinite(e.values[i]))
        throw Error(where + " holds a non-finite value at index " + std::to_string(i) +
                    "; nothing was written");
    const size_t begin = data.size();
    for (float f : e.values) {  // little-endian, whatever the host's byte order
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      for (int i = 0; i < 4; ++i) data.push_back(static_cast<char>(bits >> (8 * i)));
    }
    header[e.name] = {{"dtype", "F32"}, {"shape", e.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data 8-byte aligned, as safetensors does
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(uint64_t(text.size()) >> (8 * i)));
  return bytes + text + data;
}

void write(const std::string& path, const std::vector<Entry>& tensors, const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  replace_file("checkpoint", path, encode(path, tensors, metadata));
}

Contents read(const std::string& path) {
  const std::string bytes = read_whole(path);
  if (bytes.size() < 8)
    throw Error("checkpoint " + path + ": shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8)
    throw Error("checkpoint " + path + ": header length " + std::to_string(n) +
                " does not fit the file's " + std::to_string(bytes.size()) +
                " bytes (not safetensors?)");
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const json::exception& e) {
    throw Error("checkpoint " + path + ": the header is not valid JSON (" + e.what() + ")");
  }
  if (!header.is_object()) throw Error("checkpoint " + path + ": the header is not a JSON object");
  const char* data = bytes.data() + 8 + n;
  const uint64_t data_size = bytes.size() - 8 - n;

  Contents out;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") {
      if (!t.is_object()) throw Error("checkpoint " + path + ": __metadata__ is not an object");
      for (const auto& [k, v] : t.items()) {
        if (!v.is_string())
          throw Error("checkpoint " + path + ": metadata '" + k + "' is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "checkpoint " + path + ": tensor '" + name + "'";
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") ||
        !t.contains("data_offsets"))
      throw Error(where + " lacks dtype, shape or data_offsets");
    if (t["dtype"] != "F32")
      throw Error(where + " has dtype " + t["dtype"].dump() + "; only F32 is read");
    const json& shape = t["shape"];
    const json& off = t["data_offsets"];
    Entry e{name, {}, {}};
    uint64_t count = 1;
    if (!shape.is_array()) throw Error(where + ": shape is not a list");
    for (const json& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 31))
        throw Error(where + ": shape " + shape.dump() + " is not a list of sizes");
      count *= d.get<uint64_t>();
      if (count > (1ull << 40)) throw Error(where + ": shape " + shape.dump() + " is too large");
      e.shape.push_back(d.get<int64_t>());
    }
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw Error(where + ": data_offsets is not [begin, end]");
    const uint64_t b = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (b > end || end > data_size)
      throw Error(where + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(end) +
                  ") lie outside the " + std::to_string(data_size) + " data bytes");
    if (end - b != count * 4)
      throw Error(where + ": " + std::to_string(end - b) + " bytes for shape " + shape.dump() +
                  " (" + std::to_string(count * 4) + " expected)");
    e.values.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      uint32_t bits = 0;
      for (int k = 0; k < 4; ++k)
        bits |= static_cast<uint32_t>(static_cast<unsigned char>(data[b + 4 * i + k])) << (8 * k);
      std::memcpy(&e.values[i], &bits, 4);
      if (!std::isfinite(e.values[i]))
        throw Error(where + " holds a non-finite value at index " + std::to_string(i));
    }
    spans.emplace_back(b, end);
    out.tensors.push_back(std::move(e));
  }
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0;
  for (const auto& [b, e] : spans) {
    if (b < covered) throw Error("checkpoint " + path + ": two tensors' data overlap");
    if (b > covered) throw Error("checkpoint " + path + ": data bytes that no tensor owns");
    covered = e;
  }
  if (covered != data_size)
    throw Error("checkpoint " + path + ": " + std::to_string(data_size - covered) +
                " data bytes after the last tensor");
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

}  // namespace engine::safetensors
