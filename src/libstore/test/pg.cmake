# SPDX-License-Identifier: GPL-3.0-or-later
# pg.cmake - register every libstore cmocka test a second time, against PostgreSQL
# (store_<name>_pg).  test/pg_run.sh starts a private server on loopback, exports
# ALLOT_TEST_PG_CONNINFO and runs the test binary, so the same assertions hold on both
# backends (doc/design.md §9).  Included from src/libstore/CMakeLists.txt after the SQLite loop.
foreach(t ${STORE_TESTS})
  get_filename_component(n ${t} NAME_WE)
  add_test(NAME store_${n}_pg
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test/pg_run.sh $<TARGET_FILE:store_${n}>)
  set_tests_properties(store_${n}_pg PROPERTIES LABELS "unit;pg" TIMEOUT 300
    ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=TAP;ALLOT_SRC_DIR=${CMAKE_SOURCE_DIR}")
endforeach()
