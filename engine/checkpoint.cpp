#include "engine/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace engine {

namespace {

using nlohmann::json;

// A header larger than this is not one of ours, nor any sane model's (safetensors' own reader
// stops at 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct Entry {
  std::string name;
  const Tensor* tensor;  // save: the values; load: the shape expected
  bool one_dimensional;  // stored with shape [n] (a 1×n bias)
};

bool is_bias(const std::string& name) {
  return name == "bias" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0);
}

std::vector<Entry> entries(const std::vector<Parameter*>& params) {
  std::vector<Entry> out;
  for (const Parameter* p : params)
    out.push_back({p->name, &p->value, p->value.rows() == 1 && is_bias(p->name)});
  return out;
}

json shape_of(const Entry& e) {
  if (e.one_dimensional) return json::array({e.tensor->cols()});
  return json::array({e.tensor->rows(), e.tensor->cols()});
}

// Writes all of `bytes` to `path.tmp`, flushes it to disk and renames it over `path`.
void write_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  std::remove(tmp.c_str());  // what a killed save may have left
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("checkpoint " + path + ": cannot create " + tmp + ": " + strerror(errno));
  size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int saved_errno = errno;
  ok = ok && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error("checkpoint " + path + ": writing " + tmp + " failed: " + strerror(saved_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error("checkpoint " + path + ": cannot rename " + tmp + " to it: " + strerror(e));
  }
}

void save(Context& ctx, const std::string& path, const std::vector<Entry>& tensors,
          const Metadata& metadata) {
  json header = json::object();
  header["__metadata__"] = metadata;
  std::string data;
  for (const Entry& e : tensors) {
    if (header.contains(e.name))
      throw Error("checkpoint " + path + ": two tensors named " + e.name);
    const std::vector<float> values = e.tensor->download(ctx.stream());
    for (size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        throw Error("checkpoint " + path + ": tensor '" + e.name +
                    "' holds a non-finite value at "
                    "index " +
                    std::to_string(i) + "; nothing was written");
    const size_t begin = data.size();
    for (float f : values) {  // little-endian, whatever the host's byte order
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      for (int i = 0; i < 4; ++i) data.push_back(static_cast<char>(bits >> (8 * i)));
    }
    header[e.name] = {
        {"dtype", "F32"}, {"shape", shape_of(e)}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8,
              ' ');  // keeps the data 8-byte aligned, as safetensors does
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(uint64_t(text.size()) >> (8 * i)));
  write_atomically(path, bytes + text + data);
}

// A whole safetensors file, its header parsed and checked.
struct File {
  std::string path;
  json header;
  Metadata metadata;
  std::string data;  // the bytes after the header
};

File read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("checkpoint " + path + ": cannot open it: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error("checkpoint " + path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw Error("checkpoint " + path + ": is not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("checkpoint " + path + ": cannot open it for reading");
  unsigned char len[8];
  if (!f.read(reinterpret_cast<char*>(len), 8))
    throw Error("checkpoint " + path + ": shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (n > kMaxHeaderBytes || n > size - 8)
    throw Error("checkpoint " + path + ": header length " + std::to_string(n) +
                " does not fit the file's " + std::to_string(size) + " bytes (not safetensors?)");
  File file;
  file.path = path;
  std::string text(n, '\0');
  file.data.resize(size - 8 - n);
  if (!f.read(text.data(), static_cast<std::streamsize>(n)) ||
      !f.read(file.data.data(), static_cast<std::streamsize>(file.data.size())))
    throw Error("checkpoint " + path + ": read failed (file changed while reading?)");
  try {
    file.header = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("checkpoint " + path + ": the header is not valid JSON (" + e.what() + ")");
  }
  if (!file.header.is_object())
    throw Error("checkpoint " + path + ": the header is not a JSON object");
  if (file.header.contains("__metadata__")) {
    const json& m = file.header["__metadata__"];
    if (!m.is_object()) throw Error("checkpoint " + path + ": __metadata__ is not an object");
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string())
        throw Error("checkpoint " + path + ": metadata '" + k + "' is not a string");
      file.metadata[k] = v.get<std::string>();
    }
    file.header.erase("__metadata__");
  }
  // Every tensor's offsets inside the data, not overlapping, covering it whole.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& [name, t] : file.header.items()) {
    const std::string where = "checkpoint " + path + ": tensor '" + name + "'";
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") ||
        !t.contains("data_offsets"))
      throw Error(where + " lacks dtype, shape or data_offsets");
    if (t["dtype"] != "F32")
      throw Error(where + " has dtype " + t["dtype"].dump() + "; only F32 is read");
    const json& shape = t["shape"];
    const json& off = t["data_offsets"];
    uint64_t count = 1;
    if (!shape.is_array()) throw Error(where + ": shape is not a list");
    for (const json& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 31))
        throw Error(where + ": shape " + shape.dump() + " is not a list of sizes");
      count *= d.get<uint64_t>();
      if (count > (1ull << 40)) throw Error(where + ": shape " + shape.dump() + " is too large");
    }
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw Error(where + ": data_offsets is not [begin, end]");
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e || e > file.data.size())
      throw Error(where + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                  ") lie outside the " + std::to_string(file.data.size()) + " data bytes");
    if (e - b != count * 4)
      throw Error(where + ": " + std::to_string(e - b) + " bytes for shape " + shape.dump() + " (" +
                  std::to_string(count * 4) + " expected)");
    spans.emplace_back(b, e);
  }
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0;
  for (const auto& [b, e] : spans) {
    if (b < covered) throw Error("checkpoint " + path + ": two tensors' data overlap");
    if (b > covered) throw Error("checkpoint " + path + ": data bytes that no tensor owns");
    covered = e;
  }
  if (covered != file.data.size())
    throw Error("checkpoint " + path + ": " + std::to_string(file.data.size() - covered) +
                " data bytes after the last tensor");
  return file;
}

// Fills every entry's tensor from the file, which must hold exactly those tensors.
void load(Context& ctx, const File& file, const std::vector<Entry>& tensors,
          const std::vector<Tensor*>& targets) {
  std::set<std::string> expected;
  for (const Entry& e : tensors) expected.insert(e.name);
  for (const auto& [name, t] : file.header.items())
    if (!expected.count(name))
      throw Error("checkpoint " + file.path + ": tensor '" + name + "' is not in the model");
  std::vector<std::vector<float>> values;
  for (const Entry& e : tensors) {
    const std::string where = "checkpoint " + file.path + ": tensor '" + e.name + "'";
    if (!file.header.contains(e.name)) throw Error(where + " is missing");
    const json& t = file.header[e.name];
    const json want = shape_of(e);
    const json want_2d = json::array({e.tensor->rows(), e.tensor->cols()});
    if (t["shape"] != want && t["shape"] != want_2d)
      throw Error(where + " has shape " + t["shape"].dump() + ", the model expects " + want.dump());
    const uint64_t b = t["data_offsets"][0].get<uint64_t>();
    std::vector<float> v(static_cast<size_t>(e.tensor->size()));
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits = 0;
      for (int k = 0; k < 4; ++k)
        bits |= static_cast<uint32_t>(static_cast<unsigned char>(file.data[b + 4 * i + k]))
                << (8 * k);
      std::memcpy(&v[i], &bits, 4);
      if (!std::isfinite(v[i]))
        throw Error(where + " holds a non-finite value at index " + std::to_string(i));
    }
    values.push_back(std::move(v));
  }
  for (size_t i = 0; i < targets.size(); ++i) targets[i]->upload(values[i], ctx.stream());
}

}  // namespace

void save_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params,
                     const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  save(ctx, path, entries(params), metadata);
}

Metadata load_checkpoint(Context& ctx, const std::string& path,
                         const std::vector<Parameter*>& params) {
  const File file = read_file(path);
  std::vector<Tensor*> targets;
  for (Parameter* p : params) targets.push_back(&p->value);
  load(ctx, file, entries(params), targets);
  return file.metadata;
}

Metadata read_checkpoint_metadata(const std::string& path) { return read_file(path).metadata; }

std::string optimizer_state_path(const std::string& path) {
  const std::string ext = ".safetensors";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return path.substr(0, path.size() - ext.size()) + ".optim" + ext;
  return path + ".optim" + ext;
}

namespace {

std::vector<Entry> state_entries(Optimizer& opt) {
  std::vector<Entry> out;
  for (const auto& [name, tensor] : opt.state()) out.push_back({name, tensor, false});
  return out;
}

}  // namespace

void save_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt,
                          const Metadata& metadata) {
  Metadata m = metadata;
  m["step"] = std::to_string(opt.steps());
  save(ctx, path, state_entries(opt), m);
}

Metadata load_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt) {
  const File file = read_file(path);
  const auto it = file.metadata.find("step");
  if (it == file.metadata.end()) throw Error("checkpoint " + path + ": no 'step' in its metadata");
  int64_t step = -1;
  try {
    size_t used = 0;
    step = std::stoll(it->second, &used);
    if (used != it->second.size()) step = -1;
  } catch (const std::exception&) {
  }
  if (step < 0) throw Error("checkpoint " + path + ": step '" + it->second + "' is not a count");
  std::vector<Tensor*> targets;
  for (const auto& [name, tensor] : opt.state()) targets.push_back(tensor);
  load(ctx, file, state_entries(opt), targets);
  opt.set_steps(ctx, step);
  return file.metadata;
}

}  // namespace engine
