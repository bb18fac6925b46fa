// The safetensors reader and writer (safetensors.h): a file's header parsed and checked, its
// tensors read (their checksums verified) and encoded; the dtypes are safetensors_dtypes.cpp's.
#include "engine/checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/memory_limit.h"
#include "engine/checkpoint/atomic_file.h"
#include "engine/checkpoint/safetensors_dtypes.h"
#include "engine/runtime/tensor.h"  // gemm_mlp::Error

namespace engine::safetensors {

namespace {

using nlohmann::json;

// A header larger than this is not one of ours, nor any sane model's (safetensors' own reader
// stops at 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

// The metadata key of a tensor's checksum.
const std::string kCrcPrefix = "crc32:";

using detail::crc_of;
using detail::dtype_bytes;
using detail::hex32;
using detail::parse_dtype;
using detail::to_fp32;

// A checkpoint file open for reading: a regular file (not a directory, FIFO or device), read at
// offsets so that nothing is read that is not asked for.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw Error("checkpoint " + path + ": cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int e = errno;
      ::close(fd_);
      throw Error("checkpoint " + path + ": cannot stat it: " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw Error(
          "checkpoint " + path +
          (S_ISDIR(st.st_mode) ? ": is a directory, not a file" : ": is not a regular file"));
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  // Exactly n bytes at `offset`.
  void read_at(uint64_t offset, void* dst, uint64_t n) const {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, static_cast<size_t>(std::min<uint64_t>(n, 1u << 30)),
                                  static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw Error("checkpoint " + path_ + ": read failed: " + std::strerror(errno));
      if (got == 0)
        throw Error("checkpoint " + path_ + ": ended early (file changed while reading?)");
      p += got, offset += static_cast<uint64_t>(got), n -= static_cast<uint64_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The header of an open file; `data_offset` receives where the data part starts.
Header parse_header(const ReadOnlyFile& file, uint64_t& data_offset) {
  const std::string& path = file.path();
  if (file.size() < 8)
    throw Error("checkpoint " + path + ": shorter than the 8-byte header length");
  unsigned char length[8];
  file.read_at(0, length, 8);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(length[i]) << (8 * i);
  if (n > file.size() - 8)
    throw Error("checkpoint " + path + ": header length " + std::to_string(n) +
                " does not fit the file's " + std::to_string(file.size()) +
                " bytes (not safetensors?)");
  if (n > kMaxHeaderBytes)
    throw Error("checkpoint " + path + ": header length " + std::to_string(n) +
                " bytes is more than the limit of " + std::to_string(kMaxHeaderBytes) +
                " (not safetensors?)");
  std::string text(static_cast<size_t>(n), '\0');
  file.read_at(8, text.data(), n);
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("checkpoint " + path + ": the header is not valid JSON (" + e.what() + ")");
  }
  if (!header.is_object()) throw Error("checkpoint " + path + ": the header is not a JSON object");
  data_offset = 8 + n;
  const uint64_t data_size = file.size() - 8 - n;

  Header out;
  out.data_bytes = data_size;
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
    TensorInfo info{name, {}, 0, 0};
    if (!t["dtype"].is_string() || !parse_dtype(t["dtype"].get<std::string>(), info.dtype))
      throw Error(where + " has dtype " + t["dtype"].dump() +
                  "; F32, F16, BF16 and F64 are read (convert it to one of them)");
    const json& shape = t["shape"];
    const json& off = t["data_offsets"];
    uint64_t count = 1;
    if (!shape.is_array()) throw Error(where + ": shape is not a list");
    for (const json& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 31))
        throw Error(where + ": shape " + shape.dump() + " is not a list of sizes");
      count *= d.get<uint64_t>();
      if (count > (1ull << 40)) throw Error(where + ": shape " + shape.dump() + " is too large");
      info.shape.push_back(d.get<int64_t>());
    }
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw Error(where + ": data_offsets is not [begin, end]");
    info.begin = off[0].get<uint64_t>(), info.end = off[1].get<uint64_t>();
    if (info.begin > info.end || info.end > data_size)
      throw Error(where + ": data_offsets [" + std::to_string(info.begin) + ", " +
                  std::to_string(info.end) + ") lie outside the " + std::to_string(data_size) +
                  " data bytes");
    const uint64_t expected = count * dtype_bytes(info.dtype);
    if (info.end - info.begin != expected)
      throw Error(where + ": " + std::to_string(info.end - info.begin) + " bytes for shape " +
                  shape.dump() + " of " + dtype_name(info.dtype) + " (" + std::to_string(expected) +
                  " expected)");
    spans.emplace_back(info.begin, info.end);
    out.tensors.push_back(std::move(info));
  }
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0;
  for (const auto& [b, e] : spans) {
    if (b < covered) throw Error("checkpoint " + path + ": two tensors' data overlap");
    if (b > covered) throw Error("checkpoint " + path + ": data bytes that no tensor owns");
    covered = e;
  }
  if (covered != data_size)  // e.g. a huge (sparse) file behind a small header: never read
    throw Error("checkpoint " + path + ": " + std::to_string(data_size - covered) +
                " data bytes after the last tensor (the file is " + std::to_string(file.size()) +
                " bytes; its header accounts for " + std::to_string(data_offset + covered) + ")");
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  // The checksums: out of the metadata, onto their tensors.
  for (auto it = out.metadata.begin(); it != out.metadata.end();) {
    if (it->first.compare(0, kCrcPrefix.size(), kCrcPrefix) != 0) {
      ++it;
      continue;
    }
    const std::string tensor = it->first.substr(kCrcPrefix.size());
    const auto t = std::find_if(out.tensors.begin(), out.tensors.end(),
                                [&](const TensorInfo& i) { return i.name == tensor; });
    if (t == out.tensors.end())
      throw Error("checkpoint " + path + ": metadata '" + it->first + "' is the checksum of '" +
                  tensor + "', which is not in the file");
    const std::string& text = it->second;
    if (text.size() != 8 || text.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Error("checkpoint " + path + ": metadata '" + it->first + "' is '" + text +
                  "', not a CRC-32 (8 lowercase hexadecimal digits)");
    t->has_crc32 = true;
    t->crc32 = static_cast<uint32_t>(std::stoul(text, nullptr, 16));
    it = out.metadata.erase(it);
  }
  return out;
}

}  // namespace

std::string encode(const std::string& path, const std::vector<Entry>& tensors,
                   const Metadata& metadata) {
  json header = json::object();
  Metadata m = metadata;
  for (const auto& [key, value] : metadata)
    if (key.compare(0, kCrcPrefix.size(), kCrcPrefix) == 0)
      throw Error("checkpoint " + path + ": metadata key '" + key + "' starts with '" + kCrcPrefix +
                  "', which is kept for the tensors' checksums; nothing was written");
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
    m[kCrcPrefix + e.name] = hex32(crc_of(data.data() + begin, data.size() - begin));
  }
  header["__metadata__"] = m;
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

Header read_header(const std::string& path) {
  uint64_t data_offset = 0;
  return parse_header(ReadOnlyFile(path), data_offset);
}

uint64_t TensorInfo::count() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);  // read_header bounds it by 2^40
  return n;
}

void require_fits_in_memory(const std::string& path, const Header& header) {
  // As fp32, held twice at most: once as read, once in the model; plus, for a dtype other than
  // F32, one tensor's raw bytes at a time (read, then converted).
  uint64_t values = 0, largest_raw = 0;
  for (const TensorInfo& t : header.tensors) {
    values += 4 * t.count();
    if (t.dtype != Dtype::F32) largest_raw = std::max(largest_raw, t.end - t.begin);
  }
  values = std::max(values, header.data_bytes);  // a header without tensors, as tests make them
  const uint64_t twice = gemm_mlp::byte_product({values, 2});
  gemm_mlp::check_host_allocation(
      twice > UINT64_MAX - largest_raw ? UINT64_MAX : twice + largest_raw,
      "checkpoint " + path + ": its tensors (twice " + gemm_mlp::byte_text(values) +
          (largest_raw ? " as fp32, and one converted from its dtype" : "") +
          ", as read and loaded)");
}

Contents read(const std::string& path) {
  const ReadOnlyFile file(path);
  uint64_t data_offset = 0;
  Header header = parse_header(file, data_offset);
  require_fits_in_memory(path, header);

  Contents out;
  out.metadata = std::move(header.metadata);
  std::vector<unsigned char> raw;
  for (TensorInfo& t : header.tensors) {
    const std::string where = "checkpoint " + path + ": tensor '" + t.name + "'";
    const uint64_t n = t.count(), bytes = t.end - t.begin;
    Entry e{std::move(t.name), std::move(t.shape), {}};
    e.values.resize(n);
    // F32 straight into the values; other dtypes through `raw`, then converted.
    unsigned char* dst = reinterpret_cast<unsigned char*>(e.values.data());
    if (t.dtype != Dtype::F32) {
      raw.resize(bytes);
      dst = raw.data();
    }
    file.read_at(data_offset + t.begin, dst, bytes);
    if (t.has_crc32) {
      const uint32_t crc = crc_of(dst, bytes);
      if (crc != t.crc32)
        throw Error(where + ": its data's CRC-32 is " + hex32(crc) + ", but the file's metadata " +
                    "records " + hex32(t.crc32) +
                    ": the data changed after it was written (a damaged disk or copy); restore "
                    "the file from a good copy, or train again");
    }
    to_fp32(t.dtype, dst, n, e.values.data(), where);
    out.tensors.push_back(std::move(e));
  }
  return out;
}

}  // namespace engine::safetensors
