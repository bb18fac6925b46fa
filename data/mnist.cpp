#include "data/mnist.h"

#include <sys/stat.h>

#include <climits>
#include <cstdio>

#include "data/idx.h"
#include "base/memory_limit.h"

namespace data {
namespace {

// What is at `path`: nothing, a regular file, or something else named for the error.
enum class Kind { Missing, File, Directory, Fifo, Other };

Kind kind_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Kind::Missing;
  if (S_ISREG(st.st_mode)) return Kind::File;
  if (S_ISDIR(st.st_mode)) return Kind::Directory;
  if (S_ISFIFO(st.st_mode)) return Kind::Fifo;
  return Kind::Other;
}

void require_file_or_missing(const std::string& path) {
  switch (kind_of(path)) {
    case Kind::Directory:
      throw Error(path + ": is a directory, not an IDX file");
    case Kind::Fifo:
      throw Error(path + ": is a FIFO (named pipe), not an IDX file");
    case Kind::Other:
      throw Error(path + ": is not a regular file");
    default:
      break;
  }
}

// `dir/name`, else `dir/name.gz`. When both exist, the raw file is read, and a notice says so.
std::string find_file(const std::string& dir, const std::string& name) {
  const std::string base = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + name;
  require_file_or_missing(base);
  require_file_or_missing(base + ".gz");
  const bool raw = kind_of(base) == Kind::File, gz = kind_of(base + ".gz") == Kind::File;
  if (raw && gz)
    std::fprintf(stderr, "note: both %s and %s.gz exist; reading %s\n", base.c_str(), base.c_str(),
                 base.c_str());
  if (raw) return base;
  if (gz) return base + ".gz";
  throw Error(base + ": not found (nor " + base + ".gz); run scripts/setup/fetch_mnist.sh " + dir +
              " to download MNIST there");
}

std::string shape_of(const std::vector<int>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

Dataset load_mnist(const std::string& dir, Split split) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const std::string image_path = find_file(dir, prefix + "-images-idx3-ubyte");
  const std::string label_path = find_file(dir, prefix + "-labels-idx1-ubyte");

  // Both headers first: shapes that disagree, or a size the machine cannot hold, fail before
  // any data is read.
  const std::vector<int> image_dims = read_idx_shape(image_path);
  if (image_dims.size() != 3)
    throw Error(image_path + ": expected 3 dimensions (count x rows x cols), got shape " +
                shape_of(image_dims));
  const std::vector<int> label_dims = read_idx_shape(label_path);
  if (label_dims.size() != 1)
    throw Error(label_path + ": expected 1 dimension (count), got shape " + shape_of(label_dims));
  if (image_dims[0] != label_dims[0])
    throw Error(image_path + " has " + std::to_string(image_dims[0]) + " images but " + label_path +
                " has " + std::to_string(label_dims[0]) + " labels");
  if (static_cast<long long>(image_dims[1]) * image_dims[2] > INT_MAX)
    throw Error(image_path + ": images of " + shape_of(image_dims) + " have too many pixels");
  // At the peak, the bytes read and their floats (labels: bytes and int32s) are both held.
  using gemm_mlp::byte_product;
  const uint64_t pixels =
      byte_product({uint64_t(image_dims[0]), uint64_t(image_dims[1]), uint64_t(image_dims[2])});
  const uint64_t needed =
      gemm_mlp::byte_sum({byte_product({pixels, 1 + sizeof(float)}),
                          byte_product({uint64_t(label_dims[0]), 1 + sizeof(int32_t)})});
  gemm_mlp::check_host_allocation(needed, image_path + ": shape " + shape_of(image_dims) +
                                              " (the bytes and their floats, with the labels)");

  // The small labels file first: a bad label fails before the images are read.
  const IdxArray labels = read_idx(label_path);
  Dataset ds;
  ds.count = image_dims[0];
  ds.rows = image_dims[1];
  ds.cols = image_dims[2];
  ds.labels.resize(labels.values.size());
  for (size_t i = 0; i < labels.values.size(); ++i) {
    const int v = labels.values[i];
    if (v >= ds.classes)
      throw Error(label_path + ": label " + std::to_string(v) + " at index " + std::to_string(i) +
                  " is outside 0.." + std::to_string(ds.classes - 1));
    ds.labels[i] = v;
  }

  const IdxArray images = read_idx(image_path);
  // A table of the 256 possible values keeps the conversion exact and identical to
  // normalise_pixel.
  float table[256];
  for (int v = 0; v < 256; ++v) table[v] = normalise_pixel(static_cast<float>(v));
  ds.images.resize(images.values.size());
  for (size_t i = 0; i < images.values.size(); ++i) ds.images[i] = table[images.values[i]];
  return ds;
}

}  // namespace data
