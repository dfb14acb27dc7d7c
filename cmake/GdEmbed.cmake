# Turns a file into a C array and its length, so that the binary carries it.
# Usage: cmake -DIN=page.html -DOUT=page.c -DNAME=gd_page -P GdEmbed.cmake
# gives `const unsigned char NAME[]` (with a trailing NUL, not counted) and
# `const size_t NAME_len`.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR len "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
       bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN}; do not edit. */\n#include <stddef.h>\n\n"
     "extern const unsigned char ${NAME}[];\nextern const size_t ${NAME}_len;\n"
     "const unsigned char ${NAME}[] = {\n    ${bytes}0x00};\n"
     "const size_t ${NAME}_len = ${len};\n")
