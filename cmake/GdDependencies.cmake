# Every dependency is a Debian package (scripts/setup installs them) found
# through pkg-config or CMake's own modules.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECP256K1 REQUIRED IMPORTED_TARGET libsecp256k1)
pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
pkg_check_modules(ZSTD      REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(JANSSON   REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(CURL      REQUIRED IMPORTED_TARGET libcurl)
pkg_check_modules(CYAML     REQUIRED IMPORTED_TARGET libcyaml)
pkg_check_modules(YAML      REQUIRED IMPORTED_TARGET yaml-0.1)
pkg_check_modules(SQLITE3   REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(MHD       REQUIRED IMPORTED_TARGET libmicrohttpd)
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto)
find_package(Threads REQUIRED)
find_program(PROTOC_C protoc-c REQUIRED)

# libcurl must be the OpenSSL flavour (libcurl4-openssl-dev): the GnuTLS one
# conflicts with other packages and reports TLS errors differently.
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs libcurl
                OUTPUT_VARIABLE _gd_curl_libs OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _gd_curl_libs MATCHES "-lssl")
  message(FATAL_ERROR "libcurl is not the OpenSSL flavour: install libcurl4-openssl-dev (scripts/setup)")
endif()

# The BIP39 English wordlist ships in Debian's python3-mnemonic package. Its
# SHA-256 is the one published with BIP39 (bitcoin/bips, bip-0039/english.txt),
# so a changed file is caught at configure time, not by a wrong address later.
set(GD_BIP39_WORDLIST "/usr/lib/python3/dist-packages/mnemonic/wordlist/english.txt"
    CACHE FILEPATH "BIP39 English wordlist (from python3-mnemonic)")
set(GD_BIP39_WORDLIST_SHA256 "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda")
if(NOT EXISTS "${GD_BIP39_WORDLIST}")
  message(FATAL_ERROR "BIP39 wordlist not found at ${GD_BIP39_WORDLIST}: run scripts/setup (installs python3-mnemonic)")
endif()
file(SHA256 "${GD_BIP39_WORDLIST}" _gd_wordlist_sha)
if(NOT _gd_wordlist_sha STREQUAL GD_BIP39_WORDLIST_SHA256)
  message(FATAL_ERROR "BIP39 wordlist ${GD_BIP39_WORDLIST} has SHA-256 ${_gd_wordlist_sha}, expected ${GD_BIP39_WORDLIST_SHA256}")
endif()

# CUDA is optional (GD_CUDA: AUTO, ON, OFF or EMU; see CMakeLists.txt).
set(GD_CUDA_ENABLED OFF)
set(GD_CUDA_EMU OFF)
string(TOUPPER "${GD_CUDA}" _gd_cuda)
if(NOT _gd_cuda MATCHES "^(AUTO|ON|OFF|EMU|TRUE|FALSE|YES|NO|1|0)$")
  message(FATAL_ERROR "GD_CUDA must be AUTO, ON, OFF or EMU (got '${GD_CUDA}')")
endif()
if(_gd_cuda STREQUAL "EMU")
  # The CUDA backend's sources against tests/cuda_emu: host C++ and C, no
  # nvcc. Its fibers and memory protection are not for the sanitizers.
  if(GD_SANITIZE OR GD_FUZZ)
    message(FATAL_ERROR "GD_CUDA=EMU is not built with GD_SANITIZE or GD_FUZZ")
  endif()
  enable_language(CXX)
  set(GD_CUDA_ENABLED ON)
  set(GD_CUDA_EMU ON)
  set(_gd_cuda OFF) # nothing more to find
endif()
if(_gd_cuda MATCHES "^(ON|TRUE|YES|1)$")
  set(_gd_cuda ON)
elseif(_gd_cuda MATCHES "^(OFF|FALSE|NO|0)$")
  set(_gd_cuda OFF)
endif()
if(NOT _gd_cuda STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper (H100, H200) and Blackwell (B200) unless told otherwise.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 100)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(GD_CUDA_ENABLED ON)
      find_library(GD_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    endif()
  endif()
  if(_gd_cuda STREQUAL "ON" AND NOT GD_CUDA_ENABLED)
    message(FATAL_ERROR "GD_CUDA=ON but no CUDA toolkit (nvcc) was found; install it or "
                        "use -DGD_CUDA=AUTO")
  endif()
endif()

# OpenBLAS (Debian's libopenblas-dev) provides CBLAS for the CPU kernels.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
