# SPDX-License-Identifier: GPL-3.0-or-later
# FindSlurmSource.cmake - Slurm's public headers, and the source tree of exactly the
# installed Slurm release, which PrEp and site_factor plugins need for internal headers
# (src/slurmctld/slurmctld.h, src/common/prep.h or, from 23.02, src/interfaces/prep.h).
#
# Input:  SLURM_PREFIX (cache; optional) - where the Slurm to build for is installed, when
#         not in the system's paths (e.g. /opt/slurm, or .ci/slurm-build.sh's prefix).
#         SLURM_SOURCE_DIR (cache; optional) - a Slurm source tree.  When empty, the cache
#         of .ci/slurm-source.sh is searched ($ENV{ALLOT_SLURM_SRC_CACHE} or
#         /var/cache/allot/slurm-src).
# Output: SLURM_INCLUDE_DIR, SLURM_VERSION_NUMBER (hex, e.g. 0x160508),
#         SLURM_VERSION_STRING ("22.05.8"), SLURM_VERSION_MAJOR/MINOR/MICRO,
#         SlurmHeaders_FOUND, SlurmSource_FOUND, SLURM_SOURCE_DIR (validated) and
#         SlurmSource_REASON (why it was not found).
# A source tree counts only if its META names the same major.minor.micro as the installed
# slurm/slurm_version.h: job_record_t's layout and plugin_version must match slurmctld's.

# SLURM_PREFIX: a Slurm installed elsewhere than the system's (its include/slurm/ is the
# only one searched); empty: the system's headers (libslurm-dev).
set(SLURM_PREFIX "" CACHE PATH "Prefix of the Slurm to build the plugins for (default: the system's)")
if(SLURM_PREFIX)
  find_path(SLURM_INCLUDE_DIR slurm/slurm_version.h PATHS ${SLURM_PREFIX}/include NO_DEFAULT_PATH)
else()
  find_path(SLURM_INCLUDE_DIR slurm/slurm_version.h)
endif()
set(SlurmHeaders_FOUND FALSE)
set(SlurmSource_FOUND FALSE)
set(SlurmSource_REASON "")

if(SLURM_INCLUDE_DIR)
  file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _sv
       REGEX "^#define SLURM_VERSION_NUMBER ")
  if(_sv MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    math(EXPR SLURM_VERSION_MAJOR "0x${CMAKE_MATCH_1}")
    math(EXPR SLURM_VERSION_MINOR "0x${CMAKE_MATCH_2}")
    math(EXPR SLURM_VERSION_MICRO "0x${CMAKE_MATCH_3}")
    set(SLURM_VERSION_NUMBER "0x${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    if(SLURM_VERSION_MINOR LESS 10)
      set(_minor "0${SLURM_VERSION_MINOR}")
    else()
      set(_minor "${SLURM_VERSION_MINOR}")
    endif()
    set(SLURM_VERSION_STRING "${SLURM_VERSION_MAJOR}.${_minor}.${SLURM_VERSION_MICRO}")
    set(SlurmHeaders_FOUND TRUE)
  endif()
endif()

# _slurm_source_check(DIR OUTVAR): OUTVAR is "" when DIR is a matching tree, else why not.
function(_slurm_source_check dir outvar)
  # prep.h is in src/common up to 22.05, in src/interfaces from 23.02 on.
  if(NOT EXISTS "${dir}/src/slurmctld/slurmctld.h" OR
     (NOT EXISTS "${dir}/src/common/prep.h" AND NOT EXISTS "${dir}/src/interfaces/prep.h"))
    set(${outvar} "${dir} has no src/slurmctld/slurmctld.h or src/{common,interfaces}/prep.h"
        PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${dir}/META" _meta REGEX "^[ \t]*(Major|Minor|Micro):")
  set(_v "")
  foreach(_l ${_meta})
    string(REGEX REPLACE "^[ \t]*[A-Za-z]+:[ \t]*([0-9]+).*" "\\1" _n "${_l}")
    math(EXPR _n "${_n}")
    list(APPEND _v ${_n})
  endforeach()
  if(NOT _v STREQUAL "${SLURM_VERSION_MAJOR};${SLURM_VERSION_MINOR};${SLURM_VERSION_MICRO}")
    string(REPLACE ";" "." _vs "${_v}")
    set(${outvar} "${dir} is Slurm ${_vs} but the installed headers are ${SLURM_VERSION_STRING}"
        PARENT_SCOPE)
    return()
  endif()
  set(${outvar} "" PARENT_SCOPE)
endfunction()

set(SLURM_SOURCE_DIR "" CACHE PATH "Source tree of the installed Slurm release (for PrEp plugins)")
if(SlurmHeaders_FOUND)
  if(SLURM_SOURCE_DIR)
    _slurm_source_check("${SLURM_SOURCE_DIR}" SlurmSource_REASON)
  else()
    if(DEFINED ENV{ALLOT_SLURM_SRC_CACHE})
      set(_cache "$ENV{ALLOT_SLURM_SRC_CACHE}")
    else()
      set(_cache "/var/cache/allot/slurm-src")
    endif()
    file(GLOB _candidates LIST_DIRECTORIES true "${_cache}/*/*-${SLURM_VERSION_STRING}")
    set(SlurmSource_REASON "no Slurm ${SLURM_VERSION_STRING} source tree under ${_cache}")
    foreach(_c ${_candidates})
      _slurm_source_check("${_c}" _why)
      if(_why STREQUAL "")
        set(SLURM_SOURCE_DIR "${_c}" CACHE PATH "Source tree of the installed Slurm release" FORCE)
        set(SlurmSource_REASON "")
        break()
      endif()
    endforeach()
  endif()
  if(SLURM_SOURCE_DIR AND SlurmSource_REASON STREQUAL "")
    set(SlurmSource_FOUND TRUE)
  endif()
else()
  set(SlurmSource_REASON "Slurm's public headers (libslurm-dev) are not installed")
endif()
