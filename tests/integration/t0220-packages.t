#!/bin/bash
# t0220-packages.t - the Debian packages, as a site installs them: built from a copy of the
# tree with dpkg-buildpackage, lintian-clean, installed with apt-get; allotd run the way its
# unit runs it (systemd is not PID 1 here: the unit's ExecStart as the unit's User), the
# demo tour and a Slurm job through the installed plugins, against installed files only;
# dpkg -r leaves the bank's data.  Whatever happens, the packages, their user and their
# directories are purged at the end, so the machine is as before.
#
# Runs alone (RUN_SERIAL, tests/integration/CMakeLists.txt): while the packages are
# installed, /usr/bin/allot and Slurm's plugin directory hold installed copies, and no other
# test may run beside them.  Label "package"; not run by the sanitizer build (tests/run.sh).
test_description='Debian packages: build, install, run as the unit does, remove, purge'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

pkgs="allotd allot-client allot-agent slurm-wlm-allot-plugins liballot0 liballot-dev"
# Written while the packages are installed by this test: a leftover of an interrupted run is
# purged at the next start; packages installed without it belong to the machine's owner.
marker=/var/lib/allot-package-test.installed

[ "$(id -u)" = 0 ] || { skip_all="needs root (apt-get, dpkg)"; test_done; }
command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null ||
	{ skip_all="dpkg-dev, debhelper and lintian not installed (.ci/deps.sh)"; test_done; }
grep -q '^ALLOT_SANITIZE:BOOL=ON' "$ALLOT_BUILD_DIR/CMakeCache.txt" 2>/dev/null &&
	{ skip_all="the sanitizer build tests the tree, not the packages"; test_done; }

installed_pkgs() {
	dpkg-query -W -f='${Package} ${db:Status-Status}\n' $pkgs 2>/dev/null |
		awk '$2 != "not-installed" { print $1 }'
}
if [ -n "$(installed_pkgs)" ] && [ ! -e "$marker" ]; then
	skip_all="allot packages are installed on this machine: $(installed_pkgs | tr '\n' ' ')"
	test_done
fi
user_existed=no
getent passwd allot >/dev/null && [ ! -e "$marker" ] && user_existed=yes

# pkg_purge_: the machine as before: packages purged, their directories, the bank's data
# (which dpkg keeps) and the system user the package created removed.
pkg_purge_() {
	if [ -n "$ALLOTD_PID" ]; then
		kill -9 "$ALLOTD_PID" 2>/dev/null
		wait "$ALLOTD_PID" 2>/dev/null
		ALLOTD_PID=
	fi
	local left
	left=$(installed_pkgs)
	# shellcheck disable=SC2086
	[ -z "$left" ] || flock /tmp/allot-apt.lock dpkg --purge $left >purge.log 2>&1
	rm -rf /var/lib/allot /var/log/allot /run/allot /var/spool/allot /var/lib/allot-agent \
		/etc/allot
	if [ "$(cat "$marker" 2>/dev/null)" = created-user ] && getent passwd allot >/dev/null; then
		userdel allot 2>/dev/null
		getent group allot >/dev/null && groupdel allot 2>/dev/null
	fi
	rm -f "$marker"
	[ -z "$PKG_WORK" ] || rm -rf "$PKG_WORK"
	return 0
}
PKG_PREV_EXIT_TRAP=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
pkg_exit_hook_() {
	local rc=$?
	pkg_purge_
	if [ -n "$PKG_PREV_EXIT_TRAP" ]; then
		(exit "$rc")
		eval "$PKG_PREV_EXIT_TRAP"
	fi
	exit "$rc"
}
trap pkg_exit_hook_ EXIT
[ ! -e "$marker" ] || pkg_purge_

PKG_WORK=$(mktemp -d /tmp/allot-packages.XXXXXX) || exit 1
chmod 0755 "$PKG_WORK"
src=$PKG_WORK/allot

test_expect_success 'dpkg-buildpackage builds every package from a copy of the tree' '
	mkdir "$src" &&
	git -c safe.directory="*" -C "$ALLOT_SRC_DIR" ls-files -co --exclude-standard -z |
		(cd "$ALLOT_SRC_DIR" && tar --null -T - -cf -) | tar -xf - -C "$src" &&
	t0=$(date +%s) &&
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" \
		dpkg-buildpackage -us -uc -b) >build.log 2>&1 ||
		{ tail -n 40 build.log; return 1; }
	echo "built in $(($(date +%s) - t0)) s" &&
	for p in $pkgs; do
		test -f "$PKG_WORK/${p}_"*_*.deb || { echo "no $p package"; return 1; }
	done
'
test_expect_success 'lintian finds nothing at its default level' '
	lintian --fail-on error,warning "$PKG_WORK"/allot_*.changes >lintian.out 2>&1 ||
		{ cat lintian.out; return 1; }
	! grep "^[EW]:" lintian.out
'
test_expect_success 'the plugins depend on exactly the installed Slurm' '
	slurm=$(dpkg-query -W -f="\${Version}" libslurm-dev) &&
	dpkg-deb -f "$PKG_WORK"/slurm-wlm-allot-plugins_*.deb Depends >deps &&
	grep "slurm-wlm-basic-plugins (= $slurm)" deps
'
test_expect_success 'apt-get installs the packages' '
	if getent passwd allot >/dev/null; then echo kept-user; else echo created-user; fi >"$marker" &&
	(cd "$PKG_WORK" && flock /tmp/allot-apt.lock apt-get install -y -q --no-install-recommends \
		$(for p in $pkgs; do echo ./${p}_*.deb; done)) >install.log 2>&1 ||
		{ tail -n 30 install.log; return 1; }
	test -z "$(for p in $pkgs; do dpkg-query -W -f="\${db:Status-Status}\n" $p; done |
		grep -v "^installed$")"
'
test_expect_success 'the system user and the directories allotd needs' '
	getent passwd allot >passwd && grep ":/usr/sbin/nologin$" passwd &&
	test "$(stat -c "%U:%G %a" /var/lib/allot)" = "allot:allot 750" &&
	test "$(stat -c "%U:%G %a" /var/log/allot)" = "allot:allot 750" &&
	test "$(stat -c "%U:%G %a" /run/allot)" = "allot:allot 755" &&
	test "$(stat -c "%U:%G %a" /var/spool/allot)" = "slurm:slurm 700" &&
	dpkg-query -W -f="\${Conffiles}\n" allotd | grep " /etc/allot/allot.conf " &&
	test -f /etc/logrotate.d/allotd &&
	test -f /usr/lib/x86_64-linux-gnu/slurm-wlm/job_submit_allot.so &&
	test -f /usr/lib/x86_64-linux-gnu/slurm-wlm/prep_allot.so &&
	/usr/sbin/allotd --config /etc/allot/allot.conf --check-config
'
test_expect_success 'systemd-analyze verify accepts the installed units' '
	systemd-analyze verify /lib/systemd/system/allotd.service \
		/lib/systemd/system/allot-agent.service
'

# A cluster first: its munged is the one the bank decodes credentials with.  The plugins
# come from Slurm's own plugin directory (no --plugin-dir) and read /etc/allot/allot.conf.
test_expect_success 'a Slurm cluster with the installed plugins' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 DefMemPerCPU=1024 TRESBillingWeights=CPU=1.0,Mem=0.5G State=UP
	EOF
	SLURM_CLUSTER=demo slurm_start --conf-extra extra.conf &&
	chmod 0755 "$MUNGE_DIR" &&
	sacctmgr -i add account chem cluster=demo >/dev/null &&
	sacctmgr -i add user root account=chem cluster=demo >/dev/null
'

# The unit's own lines: User=, Group= and ExecStart=, run as systemd would run them.
unit=/lib/systemd/system/allotd.service
test_expect_success 'allotd runs from the unit ExecStart line as the unit User' '
	user=$(sed -n "s/^User=//p" $unit) && group=$(sed -n "s/^Group=//p" $unit) &&
	exec_start=$(sed -n "s/^ExecStart=//p" $unit) &&
	test "$user" = allot && test -n "$exec_start" &&
	ALLOTD_PORT=$(find_free_port) &&
	sed -i -e "s|^ListenAddr=.*|ListenAddr=127.0.0.1:$ALLOTD_PORT|" /etc/allot/allot.conf &&
	echo "MungeSocket=$MUNGE_SOCKET" >>/etc/allot/allot.conf &&
	ALLOTD_URL=http://127.0.0.1:$ALLOTD_PORT ALLOTD_DIR=$PWD ALLOTD_AUTH=munge &&
	export ALLOTD_URL ALLOTD_DIR ALLOTD_AUTH &&
	{ setpriv --reuid="$user" --regid="$group" --init-groups -- $exec_start \
		</dev/null >allotd.stderr 2>&1 & } &&
	ALLOTD_PID=$! &&
	wait_for 20 curl -sf "$ALLOTD_URL/healthz" &&
	test "$(stat -c %U /proc/$ALLOTD_PID)" = allot &&
	test "$(stat -c %U /var/lib/allot/allot.db)" = allot &&
	grep "allotd started" /var/log/allot/allotd.log
'
test_expect_success 'the demo tour runs with the installed allot' '
	test "$(command -v allot)" = /usr/bin/allot &&
	(unset ALLOT_URL; PATH=/usr/sbin:/usr/bin:/sbin:/bin bash "$ALLOT_SRC_DIR/demo/run.sh" tour) \
		>tour.out 2>&1 || { cat tour.out; return 1; }
	allot job show demo:101 >job101 && grep -i "settled\|COMPLETED" job101
'
test_expect_success 'a Slurm job is admitted, held and charged through the installed plugins' '
	allot partition add bank cluster=demo resource=cpu billing=CPU=1.0,Mem=0.5G &&
	allot user add root &&
	allot assoc add cluster=demo account=chem user=root &&
	sleep 1.2 &&
	wait_for 30 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\"" &&
	# Two seconds at least: a job that ends within its first second costs ceil(0) = 0 and
	# leaves no debit in the ledger (doc/money.md).
	sbatch -A chem -p bank -t 5 --wrap "sleep 2" >sbatch.out &&
	jobid=$(sed -n "s/^Submitted batch job //p" sbatch.out) && test -n "$jobid" &&
	slurm_wait_job "$jobid" COMPLETED 120 &&
	wait_for 60 sh -c "allot job show demo:$jobid | grep -q \" settled \"" &&
	allot job show demo:$jobid >job &&
	grep -E "^demo +$jobid +0 +root +chem +bank +settled +COMPLETED " job &&
	allot ledger chem >ledger && test "$(grep -c " debit " ledger)" = 2
'
test_expect_success 'SIGHUP (ExecReload) reopens the log logrotate renamed' '
	mv /var/log/allot/allotd.log /var/log/allot/allotd.log.1 &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "configuration reloaded" /var/log/allot/allotd.log
'
test_expect_success 'allotd stops on SIGTERM; dpkg -r leaves the bank and its config' '
	kill -TERM $ALLOTD_PID && wait_for 20 pid_gone $ALLOTD_PID && ALLOTD_PID= &&
	flock /tmp/allot-apt.lock dpkg -r $pkgs >remove.log 2>&1 &&
	test ! -e /usr/sbin/allotd && test ! -e /usr/bin/allot &&
	test ! -e /usr/lib/x86_64-linux-gnu/slurm-wlm/prep_allot.so &&
	test -s /var/lib/allot/allot.db && test -f /etc/allot/allot.conf &&
	sqlite3 /var/lib/allot/allot.db "select count(*) from accounts" >accounts &&
	test "$(cat accounts)" -ge 4
'
test_expect_success 'purge and cleanup leave the machine as it was' '
	slurm_stop &&
	pkg_purge_ &&
	test -z "$(installed_pkgs)" &&
	test ! -e /var/lib/allot && test ! -e /etc/allot &&
	if [ "$user_existed" = no ]; then ! getent passwd allot; fi
'
test_done
