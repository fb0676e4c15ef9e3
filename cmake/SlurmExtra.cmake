# SPDX-License-Identifier: GPL-3.0-or-later
# SlurmExtra.cmake - allot's Slurm plugins built a second time, for another Slurm release
# than the installed one, and that release's end-to-end tests (tests/integration).
#
# Input:  ALLOT_SLURM_EXTRA (cache; optional) - a directory made by .ci/slurm-build.sh:
#         prefix/ (the installed Slurm) and src/ (its source tree).
# Output: ALLOT_SLURM_EXTRA_LABEL ("slurm24" for 24.11; empty when there is none),
#         ALLOT_SLURM_EXTRA_VERSION ("24.11.5"), ALLOT_SLURM_EXTRA_PREFIX,
#         ALLOT_SLURM_EXTRA_BUILD (the second build: plugins/ and src/agent/allot-agent).
#
# Design: the second set is this same source tree configured the way a site builds for its
# own Slurm (-DSLURM_PREFIX, -DSLURM_SOURCE_DIR; doc/slurm.md), as an external project in
# <build>/<label>, so the one path a site uses is the one CI tests.  Only what is linked
# with Slurm is built there: the plugins and allot-agent (libslurm's API speaks one
# release's protocol).  Not installed: it exists for the tests.
set(ALLOT_SLURM_EXTRA "" CACHE PATH "A .ci/slurm-build.sh directory: build and test the plugins for that Slurm too")
set(ALLOT_SLURM_EXTRA_LABEL "")
if(NOT ALLOT_SLURM_EXTRA)
  return()
endif()

set(_h "${ALLOT_SLURM_EXTRA}/prefix/include/slurm/slurm_version.h")
if(NOT EXISTS "${_h}" OR NOT EXISTS "${ALLOT_SLURM_EXTRA}/src/src/slurmctld/slurmctld.h")
  message(FATAL_ERROR "ALLOT_SLURM_EXTRA=${ALLOT_SLURM_EXTRA} has no prefix/include/slurm/"
          "slurm_version.h or src/src/slurmctld/slurmctld.h (run .ci/slurm-build.sh)")
endif()
file(STRINGS "${_h}" _sv REGEX "^#define SLURM_VERSION_NUMBER ")
if(NOT _sv MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
  message(FATAL_ERROR "${_h} has no SLURM_VERSION_NUMBER")
endif()
math(EXPR _major "0x${CMAKE_MATCH_1}")
math(EXPR _minor "0x${CMAKE_MATCH_2}")
math(EXPR _micro "0x${CMAKE_MATCH_3}")
if(_minor LESS 10)
  set(_minor "0${_minor}")
endif()
set(_v "${_major}.${_minor}.${_micro}")
set(ALLOT_SLURM_EXTRA_VERSION "${_v}")
set(ALLOT_SLURM_EXTRA_LABEL "slurm${_major}")
set(ALLOT_SLURM_EXTRA_PREFIX "${ALLOT_SLURM_EXTRA}/prefix")
set(_bin "${CMAKE_BINARY_DIR}/${ALLOT_SLURM_EXTRA_LABEL}")
set(ALLOT_SLURM_EXTRA_BUILD "${_bin}")

include(ExternalProject)
cmake_host_system_information(RESULT _jobs QUERY NUMBER_OF_LOGICAL_CORES)
ExternalProject_Add(allot_plugins_${ALLOT_SLURM_EXTRA_LABEL}
  SOURCE_DIR ${CMAKE_SOURCE_DIR}
  BINARY_DIR ${_bin}
  CMAKE_ARGS -DSLURM_PREFIX=${ALLOT_SLURM_EXTRA_PREFIX}
             -DSLURM_SOURCE_DIR=${ALLOT_SLURM_EXTRA}/src
             -DALLOT_PLUGINS=ON
             -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
  BUILD_COMMAND ${CMAKE_COMMAND} --build ${_bin} --target allot_plugins allot-agent
                --parallel ${_jobs}
  BUILD_ALWAYS ON
  INSTALL_COMMAND ""
  STEP_TARGETS build)
message(STATUS "Slurm plugins: a second set for Slurm ${_v} in ${_bin}/plugins "
               "(tests labelled ${ALLOT_SLURM_EXTRA_LABEL})")
