#include "data/mnist.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/file_kind.h"
#include "base/memory_limit.h"
#include "base/shell_quoted.h"
#include "data/datasets.h"
#include "data/idx.h"

namespace data {

using gemm_mlp::shell_quoted;

namespace {

// Nothing or a regular file at `path`; anything else is named in the error, and so is a path
// that cannot be looked up (a loop of symbolic links, a folder without permission), which is no
// missing file.
void require_file_or_missing(const std::string& path) {
  if (const char* kind = gemm_mlp::non_regular_kind(path))
    throw Error(path + ": is " + kind + ", not an IDX file");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno != ENOENT && errno != ENOTDIR)
    throw Error(path + ": cannot be read: " + std::strerror(errno));
}

// A regular file is at `path` (links followed).
bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The running program's folder, or "".
std::string program_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string exe(buf, static_cast<size_t>(n));
  const size_t slash = exe.find_last_of('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

// fetch_mnist.sh: installed beside the program, else in the source tree (relative to the working
// directory when that is the tree), else named as the source tree has it.
std::string fetch_script() {
  const std::string dir = program_dir();
  if (!dir.empty() && is_file(dir + "/gemm_mlp_fetch_mnist")) return dir + "/gemm_mlp_fetch_mnist";
#ifdef GEMM_MLP_SOURCE_DIR
  const std::string root = GEMM_MLP_SOURCE_DIR;
  if (is_file(root + "/scripts/setup/fetch_mnist.sh")) {
    char* cwd = ::getcwd(nullptr, 0);
    const bool here = cwd != nullptr && root == cwd;
    std::free(cwd);
    return here ? "scripts/setup/fetch_mnist.sh" : root + "/scripts/setup/fetch_mnist.sh";
  }
#endif
  return "scripts/setup/fetch_mnist.sh";
}

// `dir/name`, else `dir/name.gz`. When both exist, the raw file is read, and a notice says so.
std::string find_file(const std::string& dir, const std::string& name, const std::string& dataset) {
  const std::string base = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + name;
  require_file_or_missing(base);
  require_file_or_missing(base + ".gz");
  const bool raw = is_file(base), gz = is_file(base + ".gz");
  if (raw && gz)
    std::fprintf(stderr, "note: both %s and %s.gz exist; reading %s\n", base.c_str(), base.c_str(),
                 base.c_str());
  if (raw) return base;
  if (gz) return base + ".gz";
  throw Error(base + ": not found (nor " + base + ".gz); to download " +
              (dataset == "fashion" ? "Fashion-MNIST" : "MNIST") +
              " there, run: " + fetch_command(dataset, dir));
}

std::string shape_of(const std::vector<int>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

std::string fetch_command(const std::string& dataset, const std::string& dir) {
  return shell_quoted(fetch_script()) + (dataset == "fashion" ? " fashion " : " ") +
         shell_quoted(dir);
}

Dataset load_mnist(const std::string& dir, Split split, const std::string& dataset) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const std::string image_path = find_file(dir, prefix + "-images-idx3-ubyte", dataset);
  const std::string label_path = find_file(dir, prefix + "-labels-idx1-ubyte", dataset);

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
  // The other dataset's files where this one was asked for (fetch_mnist.sh run without "fashion"
  // into Fashion-MNIST's folder, or Fashion-MNIST's files read as MNIST): told by their first
  // labels, before anything trains on them or scores them under the wrong class names.
  const DatasetInfo* asked = find_dataset(dataset);
  for (const DatasetInfo& other : datasets()) {
    const std::array<int, 20>& start = split == Split::Train ? other.train_start : other.test_start;
    if (asked == nullptr || &other == asked || ds.labels.size() < start.size() ||
        !std::equal(start.begin(), start.end(), ds.labels.begin()))
      continue;
    std::string first;
    for (int i = 0; i < 5; ++i) first += std::to_string(start[i]) + " ";
    throw Error(label_path + ": these are " + other.title + "'s files, not " + asked->title +
                " (the labels begin " + first + "..., as " + other.title + "'s do); read them as " +
                other.title + " (train_mlp and predict: --dataset " + other.name + "), or to put " +
                asked->title + " there, run: " + fetch_command(dataset, dir));
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
