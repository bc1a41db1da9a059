# Writes a C++ source holding a text file as a string constant (cmake -P, with IN, OUT, NAME).
file(READ "${IN}" content)
file(WRITE "${OUT}" "// generated from ${IN}; do not edit\nnamespace gemmtune {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"gtembed(${content})gtembed\";\n}\n")
