// Resource figures read from a cubin's ELF attributes. NVRTC honours the CUDA compute cache
// (CUDA_CACHE_DISABLE): a program it has compiled before comes back without ptxas' -v log,
// so the log alone would leave the registers unknown (seen on the H100: a second test run in
// the same machine got 0 registers for every kernel). The cubin always carries them.
#include <cstdint>
#include <cstring>
#include <string>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

// ELF64 little-endian fields at fixed offsets; every read is bounds-checked.
template <class T>
bool read_at(const std::vector<char>& b, std::uint64_t offset, T& out) {
  if (offset > b.size() || b.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, b.data() + offset, sizeof(T));
  return true;
}

// CUDA's .nv.info attributes: 4-byte headers {format, attribute, 16-bit size or value}.
constexpr std::uint8_t kFormatSizedValue = 0x04;
constexpr std::uint8_t kRegisterCount = 0x2f;  // {symbol, registers}
constexpr std::uint8_t kFrameSize = 0x11;      // {symbol, bytes of local stack frame}

}  // namespace

bool read_cubin_resources(const std::vector<char>& cubin, CompileResult& r) {
  if (cubin.size() < 64 || std::memcmp(cubin.data(),
                                       "\x7f"
                                       "ELF\x02\x01",
                                       6) != 0)
    return false;
  std::uint64_t section_offset = 0;
  std::uint16_t entry_size = 0, count = 0, names_index = 0;
  if (!read_at(cubin, 0x28, section_offset) || !read_at(cubin, 0x3a, entry_size) ||
      !read_at(cubin, 0x3c, count) || !read_at(cubin, 0x3e, names_index) || entry_size < 64 ||
      names_index >= count)
    return false;
  auto section = [&](int i, std::uint32_t& name, std::uint64_t& offset, std::uint64_t& size) {
    const std::uint64_t h = section_offset + std::uint64_t(i) * entry_size;
    return read_at(cubin, h, name) && read_at(cubin, h + 0x18, offset) &&
           read_at(cubin, h + 0x20, size);
  };
  std::uint32_t unused = 0;
  std::uint64_t names_offset = 0, names_size = 0;
  if (!section(names_index, unused, names_offset, names_size)) return false;
  bool found = false;
  for (int i = 0; i < count; ++i) {
    std::uint32_t name = 0;
    std::uint64_t offset = 0, size = 0;
    if (!section(i, name, offset, size) || name >= names_size) continue;
    const char* text = cubin.data() + names_offset + name;
    if (names_offset + name + 9 > cubin.size() || std::strncmp(text, ".nv.info", 9) != 0)
      continue;  // only the module-wide ".nv.info" (exact name, with its terminator)
    for (std::uint64_t p = offset; p + 4 <= offset + size && p + 4 <= cubin.size();) {
      const auto format = std::uint8_t(cubin[p]), attribute = std::uint8_t(cubin[p + 1]);
      std::uint16_t value_size = 0;
      read_at(cubin, p + 2, value_size);
      if (format != kFormatSizedValue) {
        p += 4;
        continue;
      }
      std::uint32_t value = 0;
      if (value_size >= 8 && read_at(cubin, p + 8, value)) {
        if (attribute == kRegisterCount) {
          r.registers = int(value);
          found = true;
        } else if (attribute == kFrameSize) {
          r.stack_bytes = int(value);
        }
      }
      p += 4 + value_size;
    }
  }
  return found;
}

}  // namespace gemmtune
