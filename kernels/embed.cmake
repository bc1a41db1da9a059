# Writes a C++ source holding text files of one folder as a table of {name, text} string constants
# (cmake -P, with DIR, FILES: names separated by commas, OUT, NAME: the table, NAME_COUNT its size).
string(REPLACE "," ";" files "${FILES}")
set(rows "")
set(count 0)
foreach(file IN LISTS files)
  file(READ "${DIR}/${file}" content)
  string(APPEND rows "    {\"${file}\", R\"gtembed(${content})gtembed\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE "${OUT}" "// generated from ${DIR}; do not edit\nnamespace gemmtune {\nextern const char* const ${NAME}[][2];\nextern const int ${NAME}Count;\nconst char* const ${NAME}[][2] = {\n${rows}};\nconst int ${NAME}Count = ${count};\n}\n")
