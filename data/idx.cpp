#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>

#include "base/memory_limit.h"

namespace data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw Error(path + ": " + problem);
}

std::string hex_byte(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", v & 0xFFu);
  return buf;
}

const char* idx_type_name(unsigned type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "not an IDX type";
  }
}

// The bytes of a file, decompressed on the fly when it is gzip (zlib's inflate, one gzip member
// after another, as gunzip reads concatenated members). read() returns fewer bytes than asked only
// at the end of the data; every I/O or decompression error throws. Bytes after the last member
// that are not another member (gunzip's "trailing garbage") are not data: a note on stderr names
// how many.
class Source {
 public:
  explicit Source(const std::string& path) : path_(path) {
    raw_ = std::fopen(path.c_str(), "rb");
    if (raw_ == nullptr) fail(path_, std::string("cannot open: ") + std::strerror(errno));
    unsigned char magic[2] = {0, 0};
    const size_t n = std::fread(magic, 1, 2, raw_);
    check_raw_error();
    gzip_ = n == 2 && magic[0] == 0x1F && magic[1] == 0x8B;
    std::rewind(raw_);
    if (gzip_) {
      in_.resize(size_t{1} << 17);
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) fail(path_, "zlib: inflateInit2 failed");
      inflating_ = true;
    }
  }
  ~Source() {
    if (raw_ != nullptr) std::fclose(raw_);
    if (inflating_) inflateEnd(&zs_);
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  bool gzip() const { return gzip_; }

  size_t read(uint8_t* dst, size_t n) {
    if (!gzip_) {
      const size_t got = std::fread(dst, 1, n, raw_);
      check_raw_error();
      return got;
    }
    size_t total = 0;
    while (total < n && !ended_) {
      if (zs_.avail_in == 0 && refill() == 0)
        fail(path_, "corrupt gzip data: compressed stream ends early (truncated .gz file)");
      // inflate takes an unsigned count.
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, 1u << 30));
      zs_.next_out = dst + total;
      zs_.avail_out = chunk;
      const int ret = inflate(&zs_, Z_NO_FLUSH);
      total += chunk - zs_.avail_out;
      if (ret == Z_STREAM_END) {
        end_of_member();
      } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
        fail(path_, std::string("corrupt gzip data: ") +
                        (zs_.msg != nullptr ? zs_.msg : "zlib error " + std::to_string(ret)));
      }
    }
    return total;
  }

 private:
  void check_raw_error() {
    if (std::ferror(raw_)) fail(path_, std::string("read error: ") + std::strerror(errno));
  }
  // Moves what inflate has not taken to the buffer's start and reads more after it; returns the
  // bytes now waiting.
  size_t refill() {
    std::memmove(in_.data(), zs_.next_in, zs_.avail_in);
    const size_t got = std::fread(in_.data() + zs_.avail_in, 1, in_.size() - zs_.avail_in, raw_);
    check_raw_error();
    zs_.next_in = in_.data();
    zs_.avail_in += static_cast<unsigned>(got);
    return zs_.avail_in;
  }
  // A member ended: another one follows (its magic), or the data ends; anything else is noted.
  void end_of_member() {
    if (zs_.avail_in < 2) refill();
    if (zs_.avail_in >= 2 && zs_.next_in[0] == 0x1F && zs_.next_in[1] == 0x8B) {
      inflateReset(&zs_);
      return;
    }
    ended_ = true;
    uint64_t trailing = zs_.avail_in;
    for (size_t got; (got = std::fread(in_.data(), 1, in_.size(), raw_)) > 0;) trailing += got;
    check_raw_error();
    if (trailing > 0)
      std::fprintf(stderr, "note: %s: %llu bytes after the end of its gzip data, ignored\n",
                   path_.c_str(), static_cast<unsigned long long>(trailing));
  }

  std::string path_;
  std::FILE* raw_ = nullptr;
  bool gzip_ = false;
  z_stream zs_{};
  bool inflating_ = false;
  bool ended_ = false;  // the last member is done
  std::vector<unsigned char> in_;
};

// The header as read_idx checks it: the dims, and the strings its messages use.
struct Header {
  std::vector<int> dims;
  uint64_t elements = 1;
  size_t bytes = 0;   // of the header itself
  std::string shape;  // "60000x28x28"
  std::string unit;   // " bytes", or " bytes (after decompression)" for gzip
};

Header read_header(Source& src, const std::string& path) {
  Header h;
  // Byte counts in messages refer to the decompressed data when the file is gzip.
  h.unit = src.gzip() ? " bytes (after decompression)" : " bytes";

  uint8_t head[4];
  const size_t head_got = src.read(head, 4);
  if (head_got < 4)
    fail(path, "truncated: expected at least 4" + h.unit + " for the IDX header, got " +
                   std::to_string(head_got));
  if (head[0] != 0 || head[1] != 0)
    fail(path, "not an IDX file: bad magic " + hex_byte(head[0]) + " " + hex_byte(head[1]) +
                   " (the first two bytes must be zero)");
  if (head[2] != 0x08)
    fail(path, "unsupported IDX element type " + hex_byte(head[2]) + " (" + idx_type_name(head[2]) +
                   "): only 0x08 (unsigned byte) is supported");
  const int ndims = head[3];
  if (ndims < 1 || ndims > 4)
    fail(path, "unsupported IDX rank " + std::to_string(ndims) + ": expected 1 to 4 dimensions");

  h.bytes = 4 + 4 * static_cast<size_t>(ndims);
  uint8_t raw_dims[16];
  const size_t dims_got = src.read(raw_dims, 4 * static_cast<size_t>(ndims));
  if (dims_got < 4 * static_cast<size_t>(ndims))
    fail(path, "truncated: expected a header of " + std::to_string(h.bytes) + h.unit + ", got " +
                   std::to_string(4 + dims_got));

  // The element count must fit a vector and a ptrdiff_t index; checked before any allocation.
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* b = raw_dims + 4 * i;
    const uint64_t d =
        (uint64_t{b[0]} << 24) | (uint64_t{b[1]} << 16) | (uint64_t{b[2]} << 8) | b[3];
    h.shape += (i ? "x" : "") + std::to_string(d);
    if (d == 0)
      fail(path, "dimension " + std::to_string(i) + " is 0: every dimension must be positive");
    if (d > static_cast<uint64_t>(INT_MAX))
      fail(path, "dimension " + std::to_string(i) + " is " + std::to_string(d) +
                     ", larger than the supported maximum " + std::to_string(INT_MAX));
    if (h.elements > (limit - h.bytes) / d)
      fail(path, "element count overflows: dimensions so far " + h.shape);
    h.elements *= d;
    h.dims.push_back(static_cast<int>(d));
  }
  return h;
}

}  // namespace

std::vector<int> read_idx_shape(const std::string& path) {
  Source src(path);
  return read_header(src, path).dims;
}

IdxArray read_idx(const std::string& path) {
  Source src(path);
  const Header h = read_header(src, path);
  const std::string& unit = h.unit;
  const std::string& shape = h.shape;
  const uint64_t elements = h.elements, header_bytes = h.bytes;
  const uint64_t expected = header_bytes + elements;
  // A header may claim more than the machine can hold: say so before reading.
  gemm_mlp::check_host_allocation(elements, path + ": IDX shape " + shape);

  IdxArray out;
  out.dims = h.dims;
  // Grow the buffer as data arrives, so a header that claims a huge size on a short file fails
  // as "truncated" instead of allocating what it claims; doubling, but never past the claim, so
  // that the buffer stays within what the callers' checks count for it.
  const size_t chunk_max = size_t{1} << 24;
  size_t have = 0;
  while (have < elements) {
    const size_t chunk = std::min<size_t>(elements - have, chunk_max);
    if (out.values.capacity() < have + chunk)
      out.values.reserve(std::min<size_t>(elements, std::max(2 * have, have + chunk)));
    out.values.resize(have + chunk);
    const size_t got = src.read(out.values.data() + have, chunk);
    have += got;
    if (got < chunk) break;
  }
  if (have < elements)
    fail(path, "truncated: expected " + std::to_string(expected) + unit + " for shape " + shape +
                   ", got " + std::to_string(header_bytes + have));

  uint8_t scratch[1 << 12];
  uint64_t extra = 0;
  for (size_t got; (got = src.read(scratch, sizeof scratch)) > 0;) extra += got;
  if (extra > 0)
    fail(path, "trailing data: expected " + std::to_string(expected) + unit + " for shape " +
                   shape + ", got " + std::to_string(expected + extra));
  return out;
}

}  // namespace data
