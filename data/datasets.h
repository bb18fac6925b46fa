// The datasets train_mlp knows by name (--dataset, a checkpoint's 'dataset'): where their files
// go, and their class names, which predict prints. Both are read by data::load_mnist and
// normalised alike (input_normalisation()).
#pragma once

#include <array>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "data/mnist.h"

namespace data {

struct DatasetInfo {
  const char* name;         // as --dataset and the checkpoint's metadata spell it
  const char* title;        // as people write it: "MNIST", "Fashion-MNIST"
  const char* default_dir;  // where scripts/setup/fetch_mnist.sh puts it
  std::array<const char*, 10> class_names;
  // The first labels of its published files (train-labels-idx1-ubyte, t10k-labels-idx1-ubyte),
  // which tell its files from the other dataset's (load_mnist).
  std::array<int, 20> train_start, test_start;
};

inline const std::array<DatasetInfo, 2>& datasets() {
  static const std::array<DatasetInfo, 2> all = {{
      {"mnist",
       "MNIST",
       "data/mnist",
       {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
       {5, 0, 4, 1, 9, 2, 1, 3, 1, 4, 3, 5, 3, 6, 1, 7, 2, 8, 6, 9},
       {7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6, 9, 0, 1, 5, 9, 7, 3, 4}},
      {"fashion",
       "Fashion-MNIST",
       "data/fashion-mnist",
       {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
        "Ankle boot"},
       {9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9, 5, 5, 7, 9, 1, 0, 6, 4},
       {9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0}},
  }};
  return all;
}

// The dataset of that name, or nullptr.
inline const DatasetInfo* find_dataset(const std::string& name) {
  for (const DatasetInfo& d : datasets())
    if (name == d.name) return &d;
  return nullptr;
}

// "mnist or fashion", for messages.
inline std::string dataset_names() {
  return std::string(datasets()[0].name) + " or " + datasets()[1].name;
}

// How a pixel v in 0..255 becomes an input, in words (written into checkpoints' metadata, so that
// a PyTorch user feeds the model what it was trained on): "(v/255 - 0.1307) / 0.3081".
inline std::string input_normalisation() {
  std::ostringstream s;
  s << "(v/255 - " << kMnistMean << ") / " << kMnistStd;
  return s.str();
}

// The dataset that a checkpoint's metadata names ('dataset'), or nullptr where it names none (a
// PyTorch state_dict). Throws std::runtime_error naming the checkpoint and the key for a name that
// is not one of datasets().
inline const DatasetInfo* checkpoint_dataset(const std::string& path,
                                             const std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find("dataset");
  if (it == metadata.end()) return nullptr;
  if (const DatasetInfo* d = find_dataset(it->second)) return d;
  throw std::runtime_error("checkpoint " + path + ": metadata 'dataset' is '" + it->second +
                           "', not " + dataset_names());
}

// A checkpoint whose metadata says how its inputs were normalised ('normalisation') must say
// input_normalisation(): train_mlp and predict feed nothing else.
inline void require_input_normalisation(const std::string& path,
                                        const std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find("normalisation");
  if (it != metadata.end() && it->second != input_normalisation())
    throw std::runtime_error("checkpoint " + path + ": metadata 'normalisation' is '" + it->second +
                             "', but inputs here are " + input_normalisation());
}

}  // namespace data
