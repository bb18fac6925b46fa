// train_mlp's flags, data and outputs checked before any work, each bad one a message and a
// non-zero exit; how a run reports (divergence, its log lines).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app_files.h"
#include "gpu_test.h"

namespace {

using namespace app_test;

TEST(TrainMlp, BadFlagsAreErrorsBeforeAnyWork) {
  EXPECT_FAILS_WITH(kTrain + " --save ''", "--save needs a file name");
  EXPECT_FAILS_WITH(kTrain + " --save /nonexistent-dir/m.safetensors",
                    "the folder /nonexistent-dir does not exist or is not writable");
  EXPECT_FAILS_WITH(kTrain + " --results /nonexistent-dir/r.csv", "/nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --schedule step", "--schedule must be cosine or constant");
  EXPECT_FAILS_WITH(kTrain + " --lr 0", "--lr must be a finite decimal number > 0, got '0'");
  EXPECT_FAILS_WITH(kTrain + " --lr nan", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr inf", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr -0.1", "--lr must be a finite decimal number > 0");
  EXPECT_FAILS_WITH(kTrain + " --history /nonexistent-dir/h.csv", "--history /nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --resume " + kTmp + "missing.safetensors", "cannot open");
  EXPECT_FAILS_WITH(kTrain + " --eval " + kTmp, "is a directory");
  const std::string model = save_model();  // metadata without train_mlp's run settings
  EXPECT_FAILS_WITH(kTrain + " --resume " + model, "its metadata has no '");
  EXPECT_FAILS_WITH(kTrain + " --seed -1",
                    "--seed must be an integer in 0 .. 18446744073709551615");
  EXPECT_FAILS_WITH(kTrain + " --seed 18446744073709551616", "--seed must be an integer");
  EXPECT_FAILS_WITH(kTrain + " --hidden 64,0", "--hidden must be layer sizes >= 1");
  EXPECT_FAILS_WITH(kTrain + " --train-limit -5", "--train-limit must be an integer >= 0");
}

TEST(TrainMlp, DatasetChecksAndNotices) {
  const std::string common = " --device cpu --epochs 1 --hidden 4 --data-dir ";
  std::string dir = write_tiny_dataset(4);
  const Result r = run(kTrain + common + dir + " --batch 10");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--batch 10 is larger than the 3 training examples; using 3"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(std::system(("gzip -kf " + dir + "/t10k-labels-idx1-ubyte").c_str()), 0);
  const Result both = run(kTrain + common + dir);
  EXPECT_EQ(both.status, 0) << both.output;
  EXPECT_NE(both.output.find("t10k-labels-idx1-ubyte.gz exist; reading " + dir +
                             "/t10k-labels-idx1-ubyte"),
            std::string::npos)
      << both.output;
  dir = write_tiny_dataset(5);
  EXPECT_FAILS_WITH(kTrain + common + dir, "the training images are 4x4, the test images 5x5");
}

// Numbers are decimal, whole and in range; an empty value, a repeated flag or an empty name is an
// error, never a silent 0, default or "all".
TEST(TrainMlp, FlagValuesAreStrict) {
  const std::string t = kTrain + " --device cpu";
  EXPECT_FAILS_WITH(t + " --momentum 1", "--momentum must be a decimal number in [0, 1), got '1'");
  EXPECT_FAILS_WITH(t + " --momentum -0.5", "--momentum must be a decimal number in [0, 1)");
  EXPECT_FAILS_WITH(t + " --momentum 0x10",
                    "--momentum must be a decimal number in [0, 1), got '0x10'");
  EXPECT_FAILS_WITH(t + " --momentum ''", "--momentum must be a decimal number in [0, 1), got ''");
  EXPECT_FAILS_WITH(t + " --weight-decay ''",
                    "--weight-decay must be a finite decimal number >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --log-interval ''", "--log-interval must be an integer >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --train-limit ''", "--train-limit must be an integer >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --epochs 0x10", "--epochs must be an integer >= 1, got '0x10'");
  EXPECT_FAILS_WITH(t + " --batch 99999999999",
                    "--batch must be an integer in 1 .. 2147483647, got '99999999999'");
  EXPECT_FAILS_WITH(t + " --lr 1e99", "--lr must be a finite decimal number > 0, got '1e99'");
  EXPECT_FAILS_WITH(t + " --hidden 16,,16",
                    "--hidden must be layer sizes >= 1, comma-separated (e.g. 1024,1024), got "
                    "'16,,16'");
  EXPECT_FAILS_WITH(t + " --hidden 16 --hidden 32", "--hidden: At Most 1 required but received 2");
  EXPECT_FAILS_WITH(t + " --gemm ''", "--gemm needs a value, got ''");
  EXPECT_FAILS_WITH(t + " --data-dir ''", "--data-dir needs a value, got ''");
  EXPECT_FAILS_WITH(t + " --eval ''", "--eval needs a value, got ''");
}

// Layer sizes from the flags that no machine holds are refused before allocating, naming the
// sizes and the limit (not a bare std::bad_alloc).
TEST(TrainMlp, HugeLayersAreRefusedBeforeAllocating) {
  const std::string dir = write_tiny_dataset(4);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --hidden 1000000000,1000000000 --data-dir " + dir,
                    "--hidden 1000000000,1000000000: the model 16-1000000000-1000000000-10 has "
                    "1e+18 parameters; with their gradients, optimiser state and a batch's "
                    "activations, it needs ");
}

// Under an address-space limit (ulimit -v), a model that the machine's memory would hold but the
// limit does not is refused before any work, naming the limit (not a std::bad_alloc after the
// first gigabytes). 16-20000000-10 has 540M parameters: about 11 GB with their copies.
TEST(TrainMlp, LayersBeyondTheAddressSpaceLimitAreRefusedBeforeAllocating) {
  const std::string dir = write_tiny_dataset(4);
  const Result r = run("sh -c 'ulimit -v 4194304 && exec " + kTrain +
                       " --device cpu --epochs 1 --hidden 20000000 --data-dir " + dir + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--hidden 20000000: the model 16-20000000-10 has 5.4e+08 parameters"),
            std::string::npos)
      << r.output;
  // The address-space limit, unless the machine has less memory available than it.
  EXPECT_TRUE(r.output.find("address space left under this process's limit (ulimit -v, "
                            "RLIMIT_AS: 4.0 GiB") != std::string::npos ||
              r.output.find("host memory available") != std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << r.output;
}

// Under an address-space limit OpenBLAS runs on one thread (base/openblas_threads.h): each of its
// workers maps a buffer as it loads, and one that finds no room would hang the run. The run says
// so. OPENBLAS_NUM_THREADS, when set, is the user's choice and is kept; no limit, no note.
TEST(TrainMlp, UnderAnAddressSpaceLimitOpenBlasRunsOnOneThread) {
  const std::string dir = write_tiny_dataset(4);
  const std::string train = kTrain + " --device cpu --epochs 1 --hidden 4 --data-dir " + dir;
  const std::string note = "note: OpenBLAS runs on one thread under this address-space limit";
  const Result capped =
      run("sh -c 'ulimit -v 8388608 && exec env -u OPENBLAS_NUM_THREADS " + train + "'");
  EXPECT_EQ(capped.status, 0) << capped.output;
  EXPECT_NE(capped.output.find(note), std::string::npos) << capped.output;
  const Result chosen =
      run("sh -c 'ulimit -v 8388608 && exec env OPENBLAS_NUM_THREADS=2 " + train + "'");
  EXPECT_EQ(chosen.status, 0) << chosen.output;
  EXPECT_EQ(chosen.output.find(note), std::string::npos) << chosen.output;
  const Result unlimited = run("env -u OPENBLAS_NUM_THREADS " + train);
  EXPECT_EQ(unlimited.status, 0) << unlimited.output;
  EXPECT_EQ(unlimited.output.find(note), std::string::npos) << unlimited.output;
}

// A loss that explodes but stays finite ends with a warning (exit 0: the run finished); a
// working run gets none.
TEST(TrainMlp, ExplodingButFiniteLossWarns) {
  const std::string dir = write_tiny_dataset(4);
  const std::string t = kTrain + " --device cpu --epochs 3 --hidden 4 --data-dir " + dir;
  const Result r = run(t + " --optimizer adam --lr 1e3");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: [cpu] the last epoch's training loss"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("training blew up (try a smaller --lr)"), std::string::npos) << r.output;
  const Result calm = run(t);
  EXPECT_EQ(calm.status, 0) << calm.output;
  EXPECT_EQ(calm.output.find("warning"), std::string::npos) << calm.output;
}

// A directory or a FIFO where a data file should be is named as such.
TEST(TrainMlp, DataFilesThatAreNotFilesAreNamed) {
  const std::string dir = test_file("_data");
  ASSERT_EQ(
      std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/train-images-idx3-ubyte").c_str()),
      0);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir,
                    "train-images-idx3-ubyte: is a directory, not an IDX file");
  ASSERT_EQ(std::system(("rmdir " + dir + "/train-images-idx3-ubyte && mkfifo " + dir +
                         "/train-images-idx3-ubyte")
                            .c_str()),
            0);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir, "is a FIFO (named pipe)");
}

// A rate far too high: training stops with status 3, naming the epoch, and any checkpoint left
// is from an earlier, finite epoch (it loads: loading checks every value).
TEST(TrainMlp, DivergenceStopsWithStatus3AndNoBadCheckpoint) {
  MNIST_OR_SKIP();
  const std::string ckpt = test_file(".safetensors");
  std::remove(ckpt.c_str());
  const Result r = run(kTrain + " --device cpu --data-dir " + mnist_dir() +
                       " --train-limit 1024 --hidden 32 --epochs 3 --lr 1e6 --save " + ckpt);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("training diverged: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("non-finite in epoch"), std::string::npos) << r.output;
  if (std::ifstream(ckpt).good()) {
    const Result eval = run(kTrain + " --device cpu --data-dir " + mnist_dir() + " --eval " + ckpt);
    EXPECT_EQ(eval.status, 0) << eval.output;
  }
}

// --branched-no-graph changes --no-graph and needs the branches: alone or with --serial-step it
// is an error before any work; --no-dependent-launch is taken on the CPU (which has none).
TEST(TrainMlp, StepModeFlagsAreChecked) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  EXPECT_FAILS_WITH(train + " --branched-no-graph",
                    "--branched-no-graph changes how --no-graph runs; give both");
  EXPECT_FAILS_WITH(train + " --no-graph --branched-no-graph --serial-step",
                    "--branched-no-graph runs the step's branches, which --serial-step turns off");
  const Result ok = run(train + " --no-dependent-launch --no-graph --branched-no-graph");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// --step-graph needs a captured step: without the graph, on the CPU, with several variants or
// with --eval it is an error before any work, as is a file it cannot write.
TEST(TrainMlp, StepGraphNeedsTheGraphAndOneVariant) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1", graph = test_file("_step.json");
  EXPECT_FAILS_WITH(train + " --step-graph " + graph,
                    "--step-graph writes the step's CUDA graph; this run is on the CPU");
  EXPECT_FAILS_WITH(train + " --no-graph --step-graph " + graph,
                    "--step-graph writes the step's CUDA graph, which --no-graph turns off");
  EXPECT_FAILS_WITH(kTrain + " --compare --step-graph " + graph,
                    "--step-graph writes one variant's step; it cannot be combined with --compare");
  EXPECT_FAILS_WITH(kTrain + " --eval " + save_model() + " --step-graph " + graph,
                    "--step-graph needs a training run, not --eval");
  EXPECT_FAILS_WITH(train + " --step-graph ''", "--step-graph needs a file name, got ''");
  EXPECT_FAILS_WITH(train + " --step-graph /nonexistent-dir/g.json",
                    "--step-graph /nonexistent-dir/g.json: the folder /nonexistent-dir does not "
                    "exist or is not writable");
  EXPECT_FAILS_WITH(train + " --results " + graph + " --step-graph " + graph,
                    "--results " + graph + " and --step-graph " + graph + " are the same file");
  EXPECT_EQ(::access(graph.c_str(), F_OK), -1);
}

// On the GPU: the step's kernels in launch order, each waiting for an earlier one, with the run
// it came from; a run too short to capture the step says so and writes nothing.
TEST(TrainMlp, StepGraphWritesTheCapturedStep) {
  GPU_TEST_OR_SKIP();
  const std::string graph = test_file("_step.json");
  std::remove(graph.c_str());
  const std::string train = kTrain + " --device cuda --gemm vec --hidden 8 --batch 4 --epochs 1 " +
                            "--step-graph " + graph + " --data-dir ";
  const Result r = run(train + write_tiny_dataset(4, 8));  // two full batches: one captured
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("step graph written to " + graph), std::string::npos) << r.output;
  std::ifstream file(graph);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  for (const char* field : {"\"format\": \"gemm-mlp graph topology 1\"", "\"variant\": \"vec\"",
                            "\"model\": \"16-8-10\"", "\"batch\": \"4\"", "\"kernels\": [",
                            "\"index\": 0", "\"mangled\": \"_Z", "\"edges\": ["})
    EXPECT_NE(json.find(field), std::string::npos) << field << "\n" << json;
  std::remove(graph.c_str());
  EXPECT_FAILS_WITH(train + write_tiny_dataset(4, 7),  // one full batch: never captured
                    "--step-graph " + graph +
                        ": the training step was not captured as a CUDA graph (the trainer "
                        "captures the run's second full-size batch");
  EXPECT_EQ(::access(graph.c_str(), F_OK), -1);
}

// Output that cannot be written (standard output on a full disk) is an error, not silence.
TEST(TrainMlp, UnwritableOutputIsAnError) {
  const std::string dir = write_tiny_dataset(4, 8);
  EXPECT_FAILS_WITH("sh -c '" + tiny_train(dir) + " --epochs 1 >/dev/full'",
                    "train_mlp: error: writing the standard output failed");
}

// --save, --history and --results that are a folder, exist as something other than a regular
// file, or name one file twice are refused before any work, and left as they were.
TEST(TrainMlp, WriteTargetsAreCheckedBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string folder = test_file("_folder"), fifo = test_file("_fifo");
  std::system(("rm -rf " + folder + " " + fifo + " && mkdir -p " + folder + "/m.optim.safetensors")
                  .c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --save " + folder + "/", "--save " + folder + "/: names a folder"},
      {" --save " + folder, "exists and is a directory, not a regular file"},
      {" --save " + folder + "/m.safetensors", "m.optim.safetensors: exists and is a directory"},
      {" --history " + folder, "--history " + folder + ": exists and is a directory"},
      {" --results " + folder, "--results " + folder + ": exists and is a directory"},
      {" --save " + fifo, "exists and is a FIFO (named pipe)"},
      {" --history /dev/null", "--history /dev/null: exists and is a character device"},
      {" --results /dev/full", "--results /dev/full: exists and is a character device"},
      {" --save /dev/full", "--save /dev/full: exists and is a character device"},
      {" --history " + folder + "/r.csv --results " + folder + "/../" +
           folder.substr(folder.rfind('/') + 1) + "/r.csv",
       "--history " + folder + "/r.csv and --results " + folder + "/../"},
      {" --save " + folder + "/x.safetensors --history " + folder + "/x.optim.safetensors",
       "--save's optimiser file " + folder + "/x.optim.safetensors and --history " + folder +
           "/x.optim.safetensors are the same file"},
  };
  for (const auto& [flags, message] : cases) {
    const Result r = run(train + flags);
    EXPECT_EQ(r.status, 1) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flags << "\n" << r.output;
  }
  struct stat st {};
  EXPECT_TRUE(::lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  EXPECT_EQ(run("ls -a " + folder + " | grep -c tmp").output, "0\n");
  // A device node of the test's own (root only), as the probe made them.
  const std::string node = test_file("_null");
  std::remove(node.c_str());
  if (::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) {
    for (const char* flag : {" --save ", " --history ", " --results "})
      EXPECT_FAILS_WITH(train + flag + node, "exists and is a character device");
    EXPECT_TRUE(::lstat(node.c_str(), &st) == 0 && S_ISCHR(st.st_mode));
  }
}

// A rate far too high on the tiny data: status 3, the epoch and the steps named (the Trainer's
// NonFiniteLoss, the one check).
TEST(TrainMlp, DivergenceOnTinyDataStopsWithStatus3) {
  const std::string dir = write_tiny_dataset(4, 8);
  const Result r = run(tiny_train(dir) + " --epochs 3 --lr 1e30");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("train_mlp: training diverged: the loss became non-finite in epoch "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" (steps "), std::string::npos) << r.output;
}

// Issue 37: values that were taken silently are errors before any work, each naming the flag.
TEST(TrainMlp, SilentValuesAreErrors) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string model = save_model();
  for (const char* flag :
       {" --save x.safetensors", " --history h.csv", " --epochs 3", " --train-limit 5",
        " --log-interval 2", " --log-seconds 5", " --compare", " --no-graph", " --serial-step",
        " --lr 0.5", " --optimizer adam", " --momentum 0.5", " --weight-decay 0",
        " --schedule constant", " --seed 3"})
    EXPECT_FAILS_WITH(kTrain + " --device cpu --eval " + model + flag,
                      "--eval scores a checkpoint and trains nothing: " +
                          std::string(flag).substr(1, std::string(flag).find(' ', 1) - 1) +
                          " does not apply");
  EXPECT_FAILS_WITH(train + " --optimizer adam --momentum 0.5",
                    "--momentum is SGD's: --optimizer adam does not use it");
  EXPECT_FAILS_WITH(train + " --save ' '", "--save ' ': the file name is blank");
  EXPECT_FAILS_WITH(train + " --history ' h.csv'",
                    "--history ' h.csv': the file name begins or ends with a space");
  EXPECT_FAILS_WITH(train + " --serial-step=2",
                    "--serial-step is a switch and takes no value, got '--serial-step=2'");
  EXPECT_FAILS_WITH(train + " --no-graph=false", "--no-graph is a switch and takes no value");
  // A missing Fashion-MNIST: the hint is the command that fetches Fashion-MNIST, there.
  const std::string nowhere = test_file("_no_fashion");
  EXPECT_FAILS_WITH(kTrain + " --device cpu --dataset fashion --data-dir " + nowhere,
                    "to download Fashion-MNIST there, run: ");
  EXPECT_FAILS_WITH(kTrain + " --device cpu --dataset fashion --data-dir " + nowhere,
                    "fetch_mnist.sh fashion " + nowhere);
}

// Output names are checked in full before any work: a name that fits the file system but whose
// temporary name does not, and a folder that is not a real one (/proc), fail before the epoch.
TEST(TrainMlp, OutputNamesAreCheckedInFullBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string long_name = kTmp + std::string(250, 'n');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --save " + long_name, "the name is too long for the file system"},
      {" --history " + long_name, "the name is too long for the file system"},
      {" --results " + long_name, "the name is too long for the file system"},
  };
  for (const auto& [flags, message] : cases) {
    const Result r = run(train + flags);
    EXPECT_EQ(r.status, 1) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flags << "\n" << r.output;
  }
  // /proc: not writable for a user; for root, a folder where no file can be created.
  for (const std::string flag : {"--save", "--history", "--results"}) {
    const std::string target = " /proc/gemm_mlp_test.out";
    const Result r = run(train + " " + flag + target);
    EXPECT_EQ(r.status, 1) << flag << "\n" << r.output;
    EXPECT_TRUE(r.output.find(flag + target + ": cannot be written") != std::string::npos ||
                r.output.find(flag + target +
                              ": the folder /proc does not exist or is not "
                              "writable") != std::string::npos)
        << flag << "\n"
        << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flag << "\n" << r.output;
  }
}

// Written to a file, the log keeps its order: stdout is line-buffered, so the header is in the
// file before the first epoch ends, and the stop notice (stderr) comes after it.
TEST(TrainMlp, LogInAFileKeepsItsOrder) {
  // 100000 steps an epoch: the first epoch lasts long enough to see the header before it ends.
  const std::string dir = write_tiny_dataset(4, 400000);
  const std::string log = test_file(".log");
  std::remove(log.c_str());
  const Child child = spawn("sh -c 'exec " + tiny_train(dir) + " --epochs 50 >" + log + " 2>&1'");
  ASSERT_GT(child.pid, 0);
  std::string text;
  for (int i = 0; i < 3000 && text.find("training examples") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    text = file_bytes(log);
  }
  EXPECT_NE(text.find("training examples"), std::string::npos)
      << "the header did not reach the file while the run trained:\n"
      << text;
  EXPECT_EQ(text.find("epoch  1/"), std::string::npos)
      << "the header reached the file only with the first epoch's line:\n"
      << text;
  ::kill(child.pid, SIGINT);
  const Result r = finish(child);
  EXPECT_EQ(r.status, 130) << r.output;
  text = file_bytes(log);
  const size_t header = text.find("training examples"), notice = text.find("stopping after"),
               stopped = text.find("stopped by SIGINT");
  ASSERT_NE(notice, std::string::npos) << text;
  ASSERT_NE(stopped, std::string::npos) << text;
  EXPECT_LT(header, notice) << text;
  EXPECT_LT(notice, stopped) << text;
}

// Output that is not a terminal (here a pipe) and no --log-interval: a line every --log-seconds
// within an epoch, so that a log shows progress (the run is stopped once it has come); none with
// --log-seconds 0.
TEST(TrainMlp, OutputThatIsNotATerminalGetsALineEverySoManySeconds) {
  const std::string dir = write_tiny_dataset(4, 400000);  // seconds an epoch with 256,256
  const std::string train =
      kTrain + " --device cpu --hidden 256,256 --batch 4 --epochs 1 --data-dir " + dir;
  const Child child = spawn(train + " --log-seconds 1");
  ASSERT_GT(child.pid, 0);
  std::string out;
  char buf[4096];
  for (ssize_t n;
       out.find(" step ") == std::string::npos && (n = ::read(child.out, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::kill(child.pid, SIGKILL);
  out += finish(child).output;
  const size_t line = out.find("[cpu] epoch 1 step ");
  EXPECT_NE(line, std::string::npos) << out;
  EXPECT_LT(line, out.find("epoch  1/1")) << out;
  const Result quiet = run(train + " --train-limit 4000 --log-seconds 0");
  ASSERT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find(" step "), std::string::npos) << quiet.output;
}

}  // namespace
