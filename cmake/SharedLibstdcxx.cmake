# libtinytorch_core, tinytorch._C, the Cython modules and tinytorch._cuda pass C++ objects (std::string,
# std::vector, exceptions, shared_ptr) between each other, so they must share ONE libstdc++: the shared
# libstdc++.so.6. Some toolchains link libstdc++ statically by default (the GPU machine's /opt/gcc ships
# only libstdc++.a, so every shared object gets its own copy and they crash passing std types around).
#
# At configure time this links a tiny shared library with the chosen C++ compiler and flags and reads its
# dynamic section. If libstdc++ came in statically, it retries with the compiler's shared libstdc++.so.6
# (`-print-file-name`) on the link line ahead of the compiler's own -lstdc++ (which then pulls nothing
# from libstdc++.a), and applies that to every C++ link if the probe then passes; otherwise configure
# stops with the fix. (No gcc flag undoes a static default: -static-libstdc++ has no negative form, and
# gcc's --with-static-standard-libraries configure option only concerns gcc's own executables.)
# TINYTORCH_CHECK_LIBSTDCXX=OFF skips all of this.
option(TINYTORCH_CHECK_LIBSTDCXX "Check that C++ shared objects link libstdc++ dynamically" ON)

function(_tinytorch_probe_libstdcxx result tag std_libs)
  set(_dir "${CMAKE_BINARY_DIR}/CMakeFiles/tinytorch_libstdcxx_probe")
  file(WRITE "${_dir}/src/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.20)\nproject(probe CXX)\nadd_library(probe SHARED probe.cpp)\n")
  file(WRITE "${_dir}/src/probe.cpp"
       "#include <stdexcept>\n#include <string>\n"
       "std::string probe(const std::string& s) {\n"
       "  if (s.empty()) throw std::runtime_error(\"empty\");\n  return s + \"!\";\n}\n")
  file(REMOVE_RECURSE "${_dir}/${tag}")
  try_compile(_built "${_dir}/${tag}" "${_dir}/src" probe probe
    CMAKE_FLAGS "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CMAKE_CXX_FLAGS}"
                "-DCMAKE_SHARED_LINKER_FLAGS=${CMAKE_SHARED_LINKER_FLAGS}"
                "-DCMAKE_CXX_STANDARD_LIBRARIES=${std_libs}" "-DCMAKE_BUILD_TYPE=Release"
    OUTPUT_VARIABLE _log)
  set(_so "${_dir}/${tag}/libprobe.so")
  if(NOT _built OR NOT EXISTS "${_so}")
    set(${result} "the probe library did not link:\n${_log}" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${_readelf}" -dW --dyn-syms "${_so}" OUTPUT_VARIABLE _elf ERROR_QUIET)
  # shared: NEEDED libstdc++.so (or libc++.so), and std::runtime_error's constructor left undefined (UND);
  # static: no such NEEDED entry, and a copy of the constructor defined in the probe itself
  if(NOT _elf MATCHES "NEEDED[^\n]*\\[lib(stdc|c)\\+\\+\\.so")
    set(${result} "no NEEDED libstdc++.so entry" PARENT_SCOPE)
  elseif(_elf MATCHES "[ ][0-9]+ _ZNSt13runtime_errorC[12]E")
    set(${result} "std::runtime_error is defined inside the shared object" PARENT_SCOPE)
  else()
    set(${result} "" PARENT_SCOPE)
  endif()
endfunction()

function(tinytorch_check_shared_libstdcxx)
  if(NOT TINYTORCH_CHECK_LIBSTDCXX OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    return()
  endif()
  set(_readelf "${CMAKE_READELF}")
  if(NOT _readelf)
    find_program(TINYTORCH_READELF readelf)
    set(_readelf "${TINYTORCH_READELF}")
  endif()
  if(NOT _readelf)
    message(WARNING "tinytorch: no readelf found: cannot check that libstdc++ is linked dynamically")
    return()
  endif()

  _tinytorch_probe_libstdcxx(_why plain "${CMAKE_CXX_STANDARD_LIBRARIES}")
  if(NOT _why)
    message(STATUS "tinytorch: libstdc++ is linked dynamically (${CMAKE_CXX_COMPILER})")
    return()
  endif()
  set(_first "${_why}")

  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libstdc++.so.6
                  OUTPUT_VARIABLE _libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(IS_ABSOLUTE "${_libstdcxx}" AND EXISTS "${_libstdcxx}")
    get_filename_component(_libstdcxx "${_libstdcxx}" ABSOLUTE)
    set(_libs "${CMAKE_CXX_STANDARD_LIBRARIES} ${_libstdcxx}")
    _tinytorch_probe_libstdcxx(_why shared "${_libs}")
    if(NOT _why)
      message(STATUS "tinytorch: ${CMAKE_CXX_COMPILER} links libstdc++ statically by default (${_first}); "
                     "linking ${_libstdcxx} explicitly into every C++ target instead")
      set(CMAKE_CXX_STANDARD_LIBRARIES "${_libs}" PARENT_SCOPE)
      return()
    endif()
    set(_why "linking ${_libstdcxx} explicitly did not help: ${_why}")
  else()
    set(_why "it finds no shared libstdc++.so.6 to link instead")
  endif()
  message(FATAL_ERROR
    "tinytorch: ${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries (${_first}), and "
    "${_why}. tinytorch's shared objects "
    "(libtinytorch_core, _C, _cuda) would each get their own copy of libstdc++ and crash passing C++ "
    "objects between them. Build with a compiler that links libstdc++ dynamically, such as the "
    "system's g++ (/usr/bin/g++ on Debian/Ubuntu):\n"
    "  CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ pip install .\n"
    "(for a fresh cmake build directory: -DCMAKE_CXX_COMPILER=/usr/bin/g++ "
    "-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++).")
endfunction()
