#include "data/idx.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "test_files.h"

namespace {

using data::read_idx;
using data_test::Bytes;
using data_test::error_of;
using data_test::expect_mentions;
using data_test::idx_bytes;
using data_test::iota_bytes;
using data_test::TempDir;

TEST(Idx, ReadsRawFile) {
  TempDir dir;
  const std::string path = dir.file("raw-idx3-ubyte");
  data_test::write_file(path, idx_bytes({2, 3, 4}, iota_bytes(24)));
  const data::IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(a.values, iota_bytes(24));
}

TEST(Idx, ReadsGzipFile) {
  TempDir dir;
  const std::string path = dir.file("packed-idx3-ubyte.gz");
  data_test::write_gz(path, idx_bytes({5, 7, 11}, iota_bytes(385)));
  const data::IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, (std::vector<int>{5, 7, 11}));
  EXPECT_EQ(a.values, iota_bytes(385));
}

TEST(Idx, DetectsGzipByContentNotName) {
  TempDir dir;
  const std::string path = dir.file("no-suffix");
  data_test::write_gz(path, idx_bytes({3}, {7, 8, 9}));
  EXPECT_EQ(read_idx(path).values, (Bytes{7, 8, 9}));
}

TEST(Idx, AcceptsRanksOneToFour) {
  TempDir dir;
  const std::string path = dir.file("rank");
  data_test::write_file(path, idx_bytes({4}, iota_bytes(4)));
  EXPECT_EQ(read_idx(path).dims, (std::vector<int>{4}));
  data_test::write_file(path, idx_bytes({1, 2, 3, 2}, iota_bytes(12)));
  EXPECT_EQ(read_idx(path).dims, (std::vector<int>{1, 2, 3, 2}));
}

TEST(Idx, RejectsWrongMagic) {
  TempDir dir;
  const std::string path = dir.file("magic-idx1-ubyte");
  Bytes b = idx_bytes({3}, iota_bytes(3));
  b[1] = 0x01;
  data_test::write_file(path, b);
  expect_mentions(error_of([&] { read_idx(path); }), {path, "not an IDX file", "bad magic"});
}

TEST(Idx, RejectsOtherElementTypes) {
  TempDir dir;
  const std::string path = dir.file("float-idx1");
  data_test::write_file(path, idx_bytes({1}, {0, 0, 0, 0}, 0x0D));
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "unsupported IDX element type 0x0D", "float32", "unsigned byte"});
}

TEST(Idx, RejectsBadRank) {
  TempDir dir;
  const std::string path = dir.file("rank-idx");
  data_test::write_file(path, idx_bytes({}, {}));
  expect_mentions(error_of([&] { read_idx(path); }), {path, "rank 0", "1 to 4"});
  data_test::write_file(path, idx_bytes({1, 1, 1, 1, 1}, {0}));
  expect_mentions(error_of([&] { read_idx(path); }), {path, "rank 5", "1 to 4"});
}

TEST(Idx, RejectsZeroDimension) {
  TempDir dir;
  const std::string path = dir.file("zero-idx3-ubyte");
  data_test::write_file(path, idx_bytes({2, 0, 3}, {}));
  expect_mentions(error_of([&] { read_idx(path); }), {path, "dimension 1 is 0"});
}

TEST(Idx, RejectsOversizedDimensionsBeforeAllocating) {
  TempDir dir;
  const std::string path = dir.file("huge-idx");
  data_test::write_file(path, idx_bytes({0x80000000u}, {1, 2, 3}));
  expect_mentions(error_of([&] { read_idx(path); }), {path, "dimension 0 is 2147483648"});
  data_test::write_file(path, idx_bytes({0x7FFFFFFFu, 0x7FFFFFFFu, 0x7FFFFFFFu}, {1, 2, 3}));
  expect_mentions(error_of([&] { read_idx(path); }), {path, "element count overflows"});
}

TEST(Idx, HugeClaimOnShortFileIsTruncated) {
  TempDir dir;
  const std::string path = dir.file("liar-idx1-ubyte");
  // Claims 2 GB; the reader must report truncation, not try to hold the claimed size.
  data_test::write_file(path, idx_bytes({0x7FFFFFFFu}, iota_bytes(10)));
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "truncated: expected 2147483655 bytes", "got 18"});
}

TEST(Idx, ClaimBeyondTheMachinesMemoryIsAnErrorSayingHowMuch) {
  TempDir dir;
  const std::string path = dir.file("greedy-idx3-ubyte");
  // 2^31 × 2^15 bytes = 64 TiB, more than any machine this runs on.
  data_test::write_file(path, idx_bytes({0x7FFFFFFFu, 0x8000u}, iota_bytes(10)));
  expect_mentions(
      error_of([&] { read_idx(path); }),
      {path, "IDX shape 2147483647x32768 needs 64.0 TiB (70368744144896 bytes)", "more than the"});
}

TEST(Idx, ClaimBeyondTheMemoryLimitIsRefusedBeforeReading) {
  TempDir dir;
  const std::string path = dir.file("big-idx2-ubyte.gz");
  data_test::write_gz(path, idx_bytes({2048, 1024}, iota_bytes(10)));  // claims 2 MiB
  ::setenv("GEMM_MLP_MEMORY_LIMIT", "1M", 1);
  const std::string error = error_of([&] { read_idx(path); });
  ::unsetenv("GEMM_MLP_MEMORY_LIMIT");
  expect_mentions(error, {path, "IDX shape 2048x1024 needs 2.0 MiB (2097152 bytes)",
                          "more than the 1.0 MiB (1048576 bytes) of memory allowed by "
                          "GEMM_MLP_MEMORY_LIMIT"});
}

// Under an address-space limit (ulimit -v), a gzip file claiming 4 GiB is refused before reading,
// naming the limit, however much memory the machine has (not a std::bad_alloc after gigabytes).
TEST(Idx, ClaimBeyondTheAddressSpaceLimitIsRefusedBeforeReading) {
  TempDir dir;
  const std::string path = dir.file("bomb-idx3-ubyte.gz");
  data_test::write_gz(path, idx_bytes({4, 1024, 1024, 1024}, iota_bytes(10)));
  std::string error;
  {
    const data_test::ScopedAddressSpaceLimit limit(uint64_t{256} << 20);
    ASSERT_TRUE(limit.ok());
    error = error_of([&] { read_idx(path); });
  }
  expect_mentions(error, {path, "IDX shape 4x1024x1024x1024 needs 4.0 GiB (4294967296 bytes)",
                          "address space left under this process's limit (ulimit -v, RLIMIT_AS"});
}

TEST(Idx, ShapeIsReadFromTheHeaderAlone) {
  TempDir dir;
  const std::string path = dir.file("short-idx3-ubyte.gz");
  // The data is short; the header alone is read and checked.
  data_test::write_gz(path, idx_bytes({60000, 28, 28}, iota_bytes(10)));
  EXPECT_EQ(data::read_idx_shape(path), (std::vector<int>{60000, 28, 28}));
  data_test::write_file(path, idx_bytes({3, 0}, {}));
  expect_mentions(error_of([&] { data::read_idx_shape(path); }), {path, "dimension 1 is 0"});
}

TEST(Idx, RejectsTruncatedPayload) {
  TempDir dir;
  const std::string path = dir.file("train-images-idx3-ubyte");
  Bytes b = idx_bytes({2, 3, 4}, iota_bytes(24));  // 16 + 24 = 40 bytes
  b.resize(30);
  data_test::write_file(path, b);
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "truncated: expected 40 bytes", "got 30"});
}

TEST(Idx, RejectsTruncatedHeader) {
  TempDir dir;
  const std::string path = dir.file("short-idx");
  Bytes b = idx_bytes({2, 3, 4}, {});
  b.resize(9);
  data_test::write_file(path, b);
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "truncated: expected a header of 16 bytes", "got 9"});
  data_test::write_file(path, {});
  expect_mentions(error_of([&] { read_idx(path); }), {path, "truncated", "got 0"});
}

TEST(Idx, RejectsTrailingBytes) {
  TempDir dir;
  const std::string path = dir.file("labels-idx1-ubyte");
  Bytes b = idx_bytes({3}, iota_bytes(3));  // 8 + 3 = 11 bytes
  b.insert(b.end(), {1, 2});
  data_test::write_file(path, b);
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "trailing data: expected 11 bytes", "got 13"});
}

TEST(Idx, RejectsTruncatedAndTrailingGzipPayload) {
  TempDir dir;
  const std::string path = dir.file("payload-idx1-ubyte.gz");
  Bytes b = idx_bytes({6}, iota_bytes(6));  // 14 bytes
  b.resize(12);
  data_test::write_gz(path, b);
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "truncated: expected 14 bytes (after decompression)", "got 12"});
  b = idx_bytes({6}, iota_bytes(9));
  data_test::write_gz(path, b);
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "trailing data: expected 14 bytes (after decompression)", "got 17"});
}

// Bytes after the gzip data (gunzip's "trailing garbage") are no data: read as gunzip reads them,
// with a note naming how many. Concatenated gzip members are one stream, as for gunzip.
TEST(Idx, NotesBytesAfterTheGzipData) {
  TempDir dir;
  const std::string path = dir.file("labels-idx1-ubyte.gz");
  data_test::write_gz(path, idx_bytes({3}, {7, 8, 9}));
  Bytes b = data_test::read_file(path);
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_idx(path).values, (Bytes{7, 8, 9}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  b.insert(b.end(), {'j', 'u', 'n', 'k', '\n'});
  data_test::write_file(path, b);
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_idx(path).values, (Bytes{7, 8, 9}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "note: " + path + ": 5 bytes after the end of its gzip data, ignored\n");
  // Two members: the header and the first value, then the other two.
  const std::string first = dir.file("first.gz"), second = dir.file("second.gz");
  data_test::write_gz(first, idx_bytes({3}, {7}));
  data_test::write_gz(second, {8, 9});
  Bytes both = data_test::read_file(first);
  const Bytes rest = data_test::read_file(second);
  both.insert(both.end(), rest.begin(), rest.end());
  data_test::write_file(path, both);
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_idx(path).values, (Bytes{7, 8, 9}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Idx, RejectsCorruptGzip) {
  TempDir dir;
  const std::string path = dir.file("corrupt-idx3-ubyte.gz");
  data_test::write_gz(path, idx_bytes({10, 10, 10}, iota_bytes(1000)));
  const Bytes good = data_test::read_file(path);
  ASSERT_GT(good.size(), 8u);

  // The CRC-32 in the gzip trailer no longer matches the data.
  Bytes bad_crc = good;
  bad_crc[bad_crc.size() - 8] ^= 0xFF;
  data_test::write_file(path, bad_crc);
  expect_mentions(error_of([&] { read_idx(path); }), {path, "corrupt gzip data"});

  // The compressed stream stops in the middle.
  Bytes cut(good.begin(), good.begin() + good.size() / 2);
  data_test::write_file(path, cut);
  expect_mentions(error_of([&] { read_idx(path); }), {path, "corrupt gzip data", "truncated"});

  // Garbage after a valid gzip header: an invalid deflate block.
  Bytes garbage(good.begin(), good.begin() + 10);
  garbage.insert(garbage.end(), 64, 0xFF);
  data_test::write_file(path, garbage);
  expect_mentions(error_of([&] { read_idx(path); }), {path, "corrupt gzip data"});
}

TEST(Idx, ReportsMissingFile) {
  TempDir dir;
  const std::string path = dir.file("missing-idx3-ubyte");
  expect_mentions(error_of([&] { read_idx(path); }),
                  {path, "cannot open", "No such file or directory"});
}

}  // namespace
