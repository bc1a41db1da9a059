// Whole files read as text, gzip-compressed or not (recordings are kept compressed).
#include <zlib.h>

#include <fstream>
#include <iterator>

#include "core/core.hpp"

namespace gemmtune {
namespace {

// An inflate stream that ends itself.
struct Inflater {
  z_stream z{};
  bool open = false;
  Inflater() { open = inflateInit2(&z, 16 + MAX_WBITS) == Z_OK; }  // 16: gzip framing
  ~Inflater() {
    if (open) inflateEnd(&z);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

std::string gunzip(const std::string& bytes, const std::string& path, const std::string& what) {
  Inflater in;
  if (!in.open) throw InputError("cannot start reading the " + what + " '" + path + "' (zlib)");
  in.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  in.z.avail_in = uInt(bytes.size());
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    in.z.next_out = reinterpret_cast<Bytef*>(chunk);
    in.z.avail_out = sizeof chunk;
    const int status = inflate(&in.z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - in.z.avail_out);
    if (status == Z_STREAM_END) return out;
    if (status != Z_OK || (in.z.avail_in == 0 && in.z.avail_out != 0))
      throw InputError("the " + what + " '" + path + "' is not a whole gzip file" +
                       (in.z.msg ? std::string(" (") + in.z.msg + ")" : std::string()));
  }
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read the " + what + " '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool gzipped = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                       static_cast<unsigned char>(bytes[1]) == 0x8b;
  return gzipped ? gunzip(bytes, path, what) : bytes;
}

}  // namespace gemmtune
