# Checks that a shared library exports exactly its interface, and nothing else:
#  - libpeak: every function peak.h declares with PEAK_API
#      cmake -DLIBRARY=<libpeak.so> -DHEADER=<peak/peak.h> [-DNM=nm] -P cmake/PeakCheckExports.cmake
#  - libpeak_jni: every native method javac declared (javac -h) and JNI_OnLoad
#      cmake -DLIBRARY=<libpeak_jni.so> -DJNI_HEADER=<peak_Native.h> [-DNM=nm] -P cmake/PeakCheckExports.cmake
# Tests of a shared build (tests/capi) and of the Java binding (tools/bindings/java),
# and CI steps on the installed and the cross-built libraries.
cmake_minimum_required(VERSION 3.20)
if(NOT LIBRARY OR (NOT HEADER AND NOT JNI_HEADER))
  message(FATAL_ERROR "usage: cmake -DLIBRARY=<lib.so> (-DHEADER=<peak.h> | -DJNI_HEADER=<peak_Native.h>) [-DNM=<nm>] "
                      "-P PeakCheckExports.cmake")
endif()
if(NOT NM)
  set(NM nm)
endif()

set(_api)
if(HEADER)
  set(_interface "the C API of ${HEADER}")
  file(READ ${HEADER} _header)
  # "PEAK_API <type> peak_<name>(", possibly with PEAK_DEPRECATED("...") after PEAK_API.
  string(REGEX MATCHALL "PEAK_API[^;(]*(PEAK_DEPRECATED\\(\"[^\"]*\"\\)[^;(]*)?[ *](peak_[a-z0-9_]+)\\(" _declarations
         "${_header}")
  foreach(_declaration ${_declarations})
    string(REGEX MATCH "(peak_[a-z0-9_]+)\\($" _ignored "${_declaration}")
    list(APPEND _api ${CMAKE_MATCH_1})
  endforeach()
else()
  set(_interface "the native methods of ${JNI_HEADER} and JNI_OnLoad")
  file(READ ${JNI_HEADER} _header)
  # "JNIEXPORT <type> JNICALL Java_<class>_<method>"
  string(REGEX MATCHALL "JNICALL[ \t\n]+Java_[A-Za-z0-9_]+" _declarations "${_header}")
  foreach(_declaration ${_declarations})
    string(REGEX MATCH "Java_[A-Za-z0-9_]+$" _name "${_declaration}")
    list(APPEND _api ${_name})
  endforeach()
  list(APPEND _api JNI_OnLoad)
endif()
list(LENGTH _api _n_api)
if(_n_api EQUAL 0 OR (JNI_HEADER AND _n_api EQUAL 1))
  message(FATAL_ERROR "found no function of ${_interface}")
endif()

execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE _symbols RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed (${_result})")
endif()
string(REPLACE "\n" ";" _lines "${_symbols}")
set(_exported)
set(_foreign)
foreach(_line ${_lines})
  # "<address> <type> <name>[@version]"; type A marks the linker's version nodes.
  if(_line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) ([^@ ]+)" AND NOT CMAKE_MATCH_1 STREQUAL "A")
    if(CMAKE_MATCH_2 IN_LIST _api)
      list(APPEND _exported ${CMAKE_MATCH_2})
    else()
      list(APPEND _foreign ${CMAKE_MATCH_2})
    endif()
  endif()
endforeach()

set(_missing ${_api})
if(_exported)
  list(REMOVE_ITEM _missing ${_exported})
endif()
list(LENGTH _foreign _n_foreign)
list(LENGTH _missing _n_missing)
if(_n_foreign GREATER 0 OR _n_missing GREATER 0)
  list(JOIN _foreign "\n  " _foreign_list)
  list(JOIN _missing "\n  " _missing_list)
  message(FATAL_ERROR "${LIBRARY} does not export exactly ${_interface}:\n"
                      "${_n_foreign} other symbols:\n  ${_foreign_list}\n"
                      "${_n_missing} functions missing:\n  ${_missing_list}")
endif()
message(STATUS "${LIBRARY} exports the ${_n_api} functions of ${_interface} and nothing else")
