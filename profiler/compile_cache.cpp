// On-disk cubin cache: <key>.cubin beside <key>.json with the resource figures.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace fs = std::filesystem;

namespace {
std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}
}  // namespace

std::string compile_key(const std::string& source, const std::string& arch) {
  // Two independent 64-bit hashes make accidental collisions negligible for a cache.
  const std::string salt = arch + "|nvrtc " + nvrtc_version() + "|v2|";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(salt + source)),
                static_cast<unsigned long long>(fnv1a(source + salt, 0x9e3779b97f4a7c15ull)));
  return buf;
}

CompileCache::CompileCache(std::string directory) : dir_(std::move(directory)) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw InputError("cannot create the compile cache directory '" + dir_ + "': " + ec.message());
}

std::string CompileCache::default_directory() {
  if (const char* env = std::getenv("GEMMTUNE_CACHE")) return env;
  if (const char* home = std::getenv("HOME")) return std::string(home) + "/.cache/gemmtune/cubin";
  return ".gemmtune-cache";
}

bool CompileCache::lookup(const std::string& key, CompileResult& out) const {
  if (dir_.empty()) return false;
  std::ifstream info(dir_ + "/" + key + ".json");
  std::ifstream bin(dir_ + "/" + key + ".cubin", std::ios::binary);
  if (!info || !bin) return false;
  try {
    const auto j = nlohmann::json::parse(info);
    out = CompileResult{};
    out.ok = true;
    out.log = j.at("log").get<std::string>();
    out.registers = j.at("registers").get<int>();
    out.spill_store_bytes = j.at("spill_store_bytes").get<int>();
    out.spill_load_bytes = j.at("spill_load_bytes").get<int>();
    out.stack_bytes = j.at("stack_bytes").get<int>();
    out.static_smem_bytes = j.at("static_smem_bytes").get<int>();
    out.cubin.assign(std::istreambuf_iterator<char>(bin), std::istreambuf_iterator<char>());
    out.cache_hit = true;
    return !out.cubin.empty();
  } catch (const std::exception&) {
    return false;  // a damaged entry is a miss; the next store replaces it
  }
}

void CompileCache::store(const std::string& key, const CompileResult& r) const {
  if (dir_.empty()) return;
  nlohmann::json j = {{"log", r.log},
                      {"registers", r.registers},
                      {"spill_store_bytes", r.spill_store_bytes},
                      {"spill_load_bytes", r.spill_load_bytes},
                      {"stack_bytes", r.stack_bytes},
                      {"static_smem_bytes", r.static_smem_bytes}};
  // Unique per thread and process, so concurrent writers never share a temporary file.
  std::string tmp(".tmp");
  tmp += std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  auto write = [&](const std::string& name, const char* data, size_t size) {
    const std::string path = dir_ + "/" + name;
    {
      std::ofstream out(path + tmp, std::ios::binary | std::ios::trunc);
      out.write(data, std::streamsize(size));
      if (!out) return false;
    }
    std::error_code ec;
    fs::rename(path + tmp, path, ec);
    return !ec;
  };
  const std::string text = j.dump();
  // The cubin lands first: lookup needs both files, so a reader never sees info without code.
  if (write(key + ".cubin", r.cubin.data(), r.cubin.size()))
    write(key + ".json", text.data(), text.size());
}

}  // namespace gemmtune
