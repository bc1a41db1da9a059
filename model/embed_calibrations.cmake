# Writes a C++ source holding every ${DIR}/*.json as (file name without .json, text): the
# shipped calibrations, each named by its built-in spec (cmake -P, with DIR and OUT).
file(GLOB files "${DIR}/*.json")
list(SORT files)
set(entries "")
foreach(path IN LISTS files)
  get_filename_component(name "${path}" NAME_WLE)
  file(READ "${path}" content)
  string(APPEND entries "      {\"${name}\", R\"gtembed(${content})gtembed\"},\n")
endforeach()
file(WRITE "${OUT}" "// generated from ${DIR}/*.json; do not edit
#include <string_view>
#include <utility>
#include <vector>
namespace gemmtune {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_calibrations();
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_calibrations() {
  static const std::vector<std::pair<std::string_view, std::string_view>> files = {
${entries}  };
  return files;
}
}  // namespace gemmtune
")
