#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t6010-durable-reply.t - no reply to a write before its flush (doc/design.md §10.1, writer.h).
#
# On SQLite the writer commits a batch without waiting for the disk and the completer
# thread fdatasyncs the WAL before any of the batch's replies.  A kill -9 cannot show a
# missing flush (the page cache survives a process), so this test reads the order of the
# syscalls themselves: allotd runs under strace -f, one client sends writes one at a time,
# and every HTTP reply must start after an fdatasync of the WAL has returned that began
# after the last write to the WAL.  The checker is first shown a trace that breaks the
# rule, so it is known to be able to fail.
test_description='a reply to a write is sent only after the WAL is flushed'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
command -v strace >/dev/null || { skip_all="strace not installed"; test_done; }
strace -f -qq -o /dev/null true 2>/dev/null || { skip_all="strace cannot trace here (ptrace refused)"; test_done; }
[ "${ALLOT_TEST_BACKEND:-sqlite}" = sqlite ] || { skip_all="SQLite only: a PostgreSQL commit is durable when it returns"; test_done; }

# check_order TRACE: strace -f -y output in event order.  Per thread, a call split by
# another thread's is "<unfinished ...>" then "<... NAME resumed>", so a call starts at its
# first line and ends at its last.  Prints the number of replies checked and WAL flushes.
cat >check_order.py <<\PY
import re, sys
wal_write = -1      # event index of the last write to the WAL (start)
synced = -1         # WAL write index covered by the last finished fdatasync of the WAL
pending = {}        # tid -> WAL write index seen when its fdatasync started
replies = flushes = bad = 0
for i, line in enumerate(open(sys.argv[1])):
    m = re.match(r"(\d+)\s+(.*)", line)
    if not m:
        continue
    tid, call = m.group(1), m.group(2)
    if re.match(r"p?write(v|64)?\(\d+<[^>]*-wal>", call):
        wal_write = i
    elif re.match(r"fdatasync\(\d+<[^>]*-wal>", call):
        if "<unfinished" in call:
            pending[tid] = wal_write
        elif call.rstrip().endswith("= 0"):
            synced, flushes = wal_write, flushes + 1
    elif call.startswith("<... fdatasync resumed>") and tid in pending:
        start = pending.pop(tid)
        if call.rstrip().endswith("= 0"):
            synced, flushes = start, flushes + 1
    elif re.match(r"(sendmsg|sendto|writev|write)\(\d+<(socket|TCP|UNIX)", call) and "HTTP/1.1 " in call:
        replies += 1
        if synced < wal_write:
            bad += 1
            print("reply before its flush at line %d: %s" % (i + 1, line.strip()))
print("replies=%d flushes=%d" % (replies, flushes))
sys.exit(1 if bad else 0)
PY

test_expect_success 'the checker fails on a reply sent before the WAL is flushed' '
	cat >bad.trace <<-\EOF &&
	101 pwrite64(7</x/allot.db-wal>, "\x00"..., 4096, 32) = 4096
	102 writev(9<socket:[5]>, [{iov_base="HTTP/1.1 200 OK\r"...}], 1) = 200
	101 fdatasync(7</x/allot.db-wal>) = 0
	EOF
	test_must_fail python3 check_order.py bad.trace &&
	cat >good.trace <<-\EOF &&
	101 pwrite64(7</x/allot.db-wal>, "\x00"..., 4096, 32) = 4096
	103 fdatasync(7</x/allot.db-wal> <unfinished ...>
	101 pwrite64(7</x/allot.db-wal>, "\x00"..., 4096, 4128) = 4096
	103 <... fdatasync resumed>) = 0
	102 writev(9<socket:[5]>, [{iov_base="HTTP/1.1 200 OK\r"...}], 1) = 200
	EOF
	test_must_fail python3 check_order.py good.trace &&
	sed -i "3d" good.trace &&
	python3 check_order.py good.trace
'

# strace is the process allotd_start tracks; a SIGTERM to strace would detach it and leave
# allotd running, so allotd is stopped through its pid file and strace exits with it.
REAL_ALLOTD=$ALLOTD_BIN
ALLOTD_BIN=$PWD/allotd-strace
# LeakSanitizer stops the world with ptrace at exit, which a traced process cannot: leaks
# are checked by the other tests of the sanitizer run.
cat >"$ALLOTD_BIN" <<EOF
#!/bin/sh
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS
exec strace -f -qq -y -s 16 -o "$PWD/allotd.trace" \
	-e trace=pwrite64,write,writev,sendto,sendmsg,fdatasync,fsync "$REAL_ALLOTD" "\$@"
EOF
chmod +x "$ALLOTD_BIN"

test_expect_success 'allotd under strace: one client, holds and settles one at a time' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"1000h\"}" &&
	for j in 1 2 3 4 5 6 7 8; do
		api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$j,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"billing\":1}" >out &&
		test "$(json_get held <out)" = true &&
		api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$j,\"elapsed_s\":60}" >out ||
		return 1
	done &&
	kill -TERM "$(cat "$ALLOTD_DIR/allotd.pid")" &&
	wait_for 30 pid_gone "$ALLOTD_PID" &&
	wait $ALLOTD_PID &&
	ALLOTD_PID=
'
test_expect_success 'every reply started after the WAL flush that covers its write' '
	python3 "$PWD/check_order.py" allotd.trace >order.out &&
	cat order.out &&
	replies=$(sed -n "s/^replies=\([0-9]*\) .*/\1/p" order.out) &&
	flushes=$(sed -n "s/.* flushes=\([0-9]*\)$/\1/p" order.out) &&
	test "$replies" -ge 20 &&
	test "$flushes" -ge 20
'
test_done
