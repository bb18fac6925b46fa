// predict as a user runs it: the top classes of each image with a saved model (train_mlp's or a
// PyTorch state_dict), and its errors; train_spiral's flag errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

// The one definition of stb_image_write's functions (app_files.h includes it for save_image).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "app_files.h"

namespace {

using namespace app_test;

TEST(Predict, PrintsTheTopClassesOfEachImage) {
  const std::string model = save_model(), image = save_image();
  const Result r =
      run(kPredict + " --device cpu --top 3 --model " + model + " " + image + " " + image);
  ASSERT_EQ(r.status, 0) << r.output;
  // Two lines, "<image>: c (p%), c (p%), c (p%)".
  size_t lines = 0, at = 0;
  while ((at = r.output.find(image + ":", at)) != std::string::npos) ++lines, ++at;
  EXPECT_EQ(lines, 2u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '%'), 6) << r.output;
}

TEST(Predict, BadInputIsAnErrorNamingIt) {
  const std::string model = save_model(), image = save_image();
  EXPECT_FAILS_WITH(kPredict + " --model " + kTmp + "missing.safetensors " + image,
                    "missing.safetensors: cannot open");
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + model + " " + kTmp + "missing.png",
                    "missing.png: cannot open");
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + model + " " + model,
                    "cannot decode image");
  EXPECT_FAILS_WITH(kPredict + " --device tpu --model " + model + " " + image,
                    "--device must be auto, cpu or cuda");
  EXPECT_FAILS_WITH(kPredict + " --model " + kTmp + " " + image, "is a directory");
  EXPECT_FAILS_WITH(kPredict + " " + image, "--model is required");
}

// A PyTorch state_dict without metadata: the layer sizes from its tensors, MNIST's class names
// (with a note); a checkpoint naming Fashion-MNIST prints its class names, unless --dataset says
// otherwise.
TEST(Predict, TakesAPyTorchStateDictAndNamesTheDatasetsClasses) {
  const std::string image = save_image();
  const std::string predict = kPredict + " --device cpu --top 2 --model ";
  const Result plain = run(predict + save_plain_model() + " " + image);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_NE(plain.output.find("names no dataset; printing mnist's classes (--dataset to choose)"),
            std::string::npos)
      << plain.output;
  const std::vector<std::string> fashion_names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                  "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                  "Bag",         "Ankle boot"};
  const auto fashion_names_in = [&](const std::string& out) {
    int found = 0;
    for (const std::string& name : fashion_names)
      found += out.find(" " + name + " (") != std::string::npos;
    return found;
  };
  const std::string fashion = save_plain_model(784, {{"dataset", "fashion"}});
  const Result named = run(predict + fashion + " " + image);
  ASSERT_EQ(named.status, 0) << named.output;
  EXPECT_EQ(fashion_names_in(named.output), 2) << named.output;
  const Result told = run(predict + fashion + " --dataset mnist " + image);
  ASSERT_EQ(told.status, 0) << told.output;
  EXPECT_EQ(fashion_names_in(told.output), 0) << told.output;
  EXPECT_FAILS_WITH(predict + fashion + " --dataset cifar " + image,
                    "--dataset must be mnist or fashion, got 'cifar'");
  EXPECT_FAILS_WITH(predict + fashion + " --dataset '' " + image,
                    "--dataset must be mnist or fashion, got ''");
  // Metadata claiming layers that the 51 KB file does not hold: refused from the header.
  EXPECT_FAILS_WITH(predict + save_plain_model(784, {{"hidden", "100000,100000"}}) + " " + image,
                    "metadata 'hidden' is '100000,100000', but the tensors give hidden '4' "
                    "(784-4-10)");
  EXPECT_FAILS_WITH(predict + save_plain_model(784, {{"dataset", "cifar"}}) + " " + image,
                    "metadata 'dataset' is 'cifar', not mnist or fashion");
  EXPECT_FAILS_WITH(kPredict + " --top 0x10 --model " + save_plain_model(784) + " " + image,
                    "--top must be an integer >= 1, got '0x10'");
}

// A blank image is classified with a warning; an unreadable one is reported, the others still
// classified, and the exit status is 1.
TEST(Predict, WarnsOnABlankImageAndGoesOnPastAnUnreadableOne) {
  const std::string model = save_model(), image = save_image(), blank = test_file("_blank.png");
  const std::vector<unsigned char> gray(30 * 30, 128);
  stbi_write_png(blank.c_str(), 30, 30, 1, gray.data(), 30);
  const std::string missing = kTmp + "missing.png";
  const Result r =
      run(kPredict + " --device cpu --model " + model + " " + blank + " " + missing + " " + image);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("warning: " + blank + " is blank (its pixels span 0 of 255 gray levels)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("warning: " + image), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(missing + ": cannot open"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(blank + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(image + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 of 3 images could not be read"), std::string::npos) << r.output;
}

// Inputs that are not regular files are refused at once: reading a FIFO would wait for a writer.
TEST(Predict, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = test_file("_fifo"), model = save_model(), image = save_image();
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result m = run("timeout 20 " + kPredict + " --device cpu --model " + fifo + " " + image);
  EXPECT_EQ(m.status, 1) << m.output;
  EXPECT_NE(m.output.find("--model " + fifo + ": is a FIFO (named pipe), not a checkpoint file"),
            std::string::npos)
      << m.output;
  const Result i = run("timeout 20 " + kPredict + " --device cpu --model " + model + " " + fifo);
  EXPECT_EQ(i.status, 1) << i.output;
  EXPECT_NE(i.output.find(fifo + ": is a FIFO (named pipe), not an image file"), std::string::npos)
      << i.output;
  std::remove(fifo.c_str());
}

// train_spiral: an empty --gemm is no silent default, and --hidden is checked against the memory
// before anything is allocated, as train_mlp's layers are (not a std::bad_alloc).
TEST(TrainSpiral, EmptyGemmAndHugeHiddenAreErrors) {
  const std::string spiral = TRAIN_SPIRAL_BINARY;
  EXPECT_FAILS_WITH(spiral + " --device cpu --gemm ''", "--gemm needs a value, got ''");
  const Result r = run(spiral + " --device cpu --hidden 1000000");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("train_spiral: error: --hidden 1000000: the model's parameters, with "
                          "their gradients and Adam's state, needs "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
}

}  // namespace
