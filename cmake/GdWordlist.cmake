# Turns the BIP39 English wordlist (2048 lines) into a C array.
# Usage: cmake -DIN=english.txt -DOUT=bip39_wordlist.c -P GdWordlist.cmake
file(STRINGS "${IN}" words)
list(LENGTH words count)
if(NOT count EQUAL 2048)
  message(FATAL_ERROR "${IN}: expected 2048 words, found ${count}")
endif()
set(body "/* Generated from ${IN}; do not edit. */\n#include \"chain/keys/bip39.h\"\n\nconst char *const gd_bip39_english[2048] = {\n")
foreach(w ${words})
  string(APPEND body "    \"${w}\",\n")
endforeach()
string(APPEND body "};\n")
file(WRITE "${OUT}" "${body}")
