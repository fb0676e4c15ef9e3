#!/bin/bash
# t0110-allotd-service.t - allotd under a service manager: SIGHUP reopens LogFile (what
# logrotate's postrotate relies on), LogFile=syslog sends each line at its level's priority,
# and sd_notify tells systemd READY=1, RELOADING=1 and STOPPING=1 (Type=notify).
test_description='allotd log reopen, syslog and readiness notification'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# dgram_listen SOCKET OUT: a Unix datagram socket at SOCKET (the service manager's notify
# socket, or the system logger's /dev/log); each datagram becomes one line of OUT, its
# newlines written as "|".  Its pid in $LISTENER.
dgram_listen() {
	rm -f "$1" "$2" || return 1
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(65536).decode(errors="replace").replace("\n", "|") + "\n")
        out.flush()
' "$1" "$2" </dev/null >/dev/null 2>&1 &
	LISTENER=$!
	LISTENERS="$LISTENERS $LISTENER"
	wait_for 10 test -S "$1"
}
LISTENERS=
cleanup 'kill $LISTENERS $SYSLOG_PID 2>/dev/null'

test_expect_success 'allotd tells the notify socket it is ready once it serves' '
	dgram_listen "$PWD/notify.sock" notify.out &&
	NOTIFY_SOCKET=$PWD/notify.sock && export NOTIFY_SOCKET &&
	allotd_start AuthType=none TestMode=local &&
	unset NOTIFY_SOCKET &&
	wait_for 10 grep -q "^READY=1" notify.out
'
test_expect_success 'SIGHUP reopens LogFile: a rotated log is left, the new file gets lines' '
	mv "$ALLOTD_LOG" "$ALLOTD_LOG.1" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "configuration reloaded" "$ALLOTD_LOG" &&
	! grep "configuration reloaded" "$ALLOTD_LOG.1" &&
	api POST /v1/accounts "{\"name\":\"after-rotate\"}" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 test "$(grep -c "configuration reloaded" "$ALLOTD_LOG")" = 2
'
test_expect_success 'a SIGHUP is announced as RELOADING=1, then READY=1 again' '
	grep -A1 "^RELOADING=1" notify.out >reload.out &&
	test "$(sed -n 2p reload.out)" = READY=1
'
test_expect_success 'a LogFile that cannot be reopened keeps the old one' '
	mv "$ALLOTD_LOG" "$ALLOTD_LOG.2" && mkdir "$ALLOTD_LOG" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "cannot reopen LogFile" "$ALLOTD_LOG.2" &&
	wait_for 10 grep -q "configuration reloaded" "$ALLOTD_LOG.2" &&
	rmdir "$ALLOTD_LOG"
'
test_expect_success 'SIGTERM is announced as STOPPING=1' '
	allotd_stop && test "$ALLOTD_EXIT" = 0 &&
	grep -q "^STOPPING=1" notify.out &&
	kill $LISTENER
'

# LogFile=syslog: allotd in a mount namespace whose /dev/log is the test's socket (the
# machine may have no system logger, and the test must not replace one that runs).
test_expect_success 'LogFile=syslog: each line at its priority, facility daemon' '
	mkdir -p sys/dev && chmod 0755 sys sys/dev &&
	for n in null zero full random urandom; do : >"sys/dev/$n" || return 1; done &&
	dgram_listen "$PWD/sys/log.sock" syslog.out &&
	ln -s "$PWD/sys/log.sock" sys/dev/log &&
	cat >sys/allot.conf <<-EOF &&
	StorageLoc=$PWD/sys/allot.db
	ListenAddr=
	ListenSocket=$PWD/sys/allotd.sock
	LogFile=syslog
	Threads=2
	EOF
	{ D=$PWD/sys BIN=$ALLOTD_BIN unshare -m sh -c "
		for n in null zero full random urandom; do mount --bind /dev/\$n \"\$D/dev/\$n\" || exit 1; done
		mount --rbind \"\$D/dev\" /dev && exec \"\$BIN\" --config \"\$D/allot.conf\" --foreground
	" </dev/null >sys/stderr 2>&1 & } &&
	SYSLOG_PID=$! &&
	wait_for 20 grep -q "allotd started" syslog.out &&
	# Facility daemon (3): info is <30>, warning <28>, error <27>; tagged allotd[pid].
	grep "^<30>.*allotd\[$SYSLOG_PID\]: msg=\"allotd started\"" syslog.out &&
	echo "Threads=3" >>sys/allot.conf && sed -i "/^Threads=2/d" sys/allot.conf &&
	kill -HUP $SYSLOG_PID &&
	wait_for 10 grep -q "configuration reloaded" syslog.out &&
	grep "^<28>.*needs a restart.*key=Threads" syslog.out &&
	echo "Bogus=1" >>sys/allot.conf &&
	kill -HUP $SYSLOG_PID &&
	wait_for 10 grep -q "reload failed" syslog.out &&
	grep "^<27>.*reload failed" syslog.out &&
	! grep "ts=\|level=" syslog.out &&
	test ! -s sys/stderr &&
	kill -TERM $SYSLOG_PID && wait_for 20 pid_gone $SYSLOG_PID &&
	grep "^<30>.*allotd stopped" syslog.out
'
test_expect_success 'cleanup' '
	kill $LISTENERS 2>/dev/null; kill -9 $SYSLOG_PID 2>/dev/null; true
'
test_done
