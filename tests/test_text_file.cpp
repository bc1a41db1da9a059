// Whole files read as text, plain or gzip-compressed.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/core.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  REQUIRE(out);
  REQUIRE(gzwrite(out, text.data(), unsigned(text.size())) == int(text.size()));
  REQUIRE(gzclose(out) == Z_OK);
}

}  // namespace

TEST_CASE("text files: gzip-compressed ones read as their text, plain ones as they are", "[core]") {
  std::string text = "device,precision\n";
  for (int i = 0; i < 20000; ++i) text += "NVIDIA H100 80GB HBM3,S," + std::to_string(i) + "\n";
  const std::string plain = temp_path("gemmtune_text_plain.csv");
  const std::string packed = temp_path("gemmtune_text_packed.csv.gz");
  std::ofstream(plain, std::ios::binary) << text;
  write_gzip(packed, text);
  REQUIRE(std::filesystem::file_size(packed) < text.size() / 4);  // compressed, over many chunks
  CHECK(read_text_file(plain) == text);
  CHECK(read_text_file(packed) == text);
  CHECK(read_text_file(plain, "recording") == read_text_file(packed, "recording"));

  // A cut-off gzip file, and a missing file, say which file and what it was for.
  const std::string cut = temp_path("gemmtune_text_cut.csv.gz");
  {
    std::ifstream in(packed, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_WITH(read_text_file(cut, "recording"), Catch::Contains("recording") &&
                                                          Catch::Contains(cut) &&
                                                          Catch::Contains("not a whole gzip file"));
  CHECK_THROWS_WITH(read_text_file(temp_path("gemmtune_no_such_file.csv"), "recording"),
                    Catch::Contains("cannot read the recording"));
  // An empty file is empty text.
  const std::string empty = temp_path("gemmtune_text_empty.csv");
  std::ofstream(empty, std::ios::binary).flush();
  CHECK(read_text_file(empty).empty());
  for (const auto& p : {plain, packed, cut, empty}) std::filesystem::remove(p);
}
