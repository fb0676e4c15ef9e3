#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3001-slurm-plugins-load.t - slurmctld loads allot's job_submit and PrEp plugins from
# the build directory (PluginDir=<build>/plugins:<Slurm's own>), accepts their
# plugin_version, and calls them for a job: submit, prolog and epilog, seen in its log.
test_description='slurmctld loads job_submit/allot and prep/allot'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

plugins=$ALLOT_SLURM_PLUGINS
if ! test -f "$plugins/job_submit_allot.so"; then
	skip_all="plugins not built in $plugins (ALLOT_PLUGINS=OFF or no libslurm-dev)"
	test_done
fi

ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }

test_expect_success 'both plugins were built for the installed Slurm' '
	test -f "$plugins/prep_allot.so" &&
	nm -D --defined-only "$plugins/job_submit_allot.so" >js.syms &&
	nm -D --defined-only "$plugins/prep_allot.so" >prep.syms &&
	for s in plugin_name plugin_type plugin_version init fini job_submit job_modify; do
		grep -q " $s\$" js.syms || return 1
	done &&
	for s in plugin_name plugin_type plugin_version init fini prep_p_register_callbacks \
		prep_p_prolog prep_p_epilog prep_p_prolog_slurmctld prep_p_epilog_slurmctld \
		prep_p_required; do
		grep -q " $s\$" prep.syms || return 1
	done
'
test_expect_success 'slurmctld starts with JobSubmitPlugins=allot and PrEpPlugins=...,prep/allot' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	grep -q "^PluginDir=$plugins:" "$SLURM_CONF"
'
test_expect_success 'slurmctld logged both plugins loading, with no version complaint' '
	ver=$(scontrol -V | sed -n "s/^slurm[-a-z]* \([0-9.]*\).*/\1/p") && test -n "$ver" &&
	ctld_log | grep "slurmctld version $ver started" &&
	ctld_log | grep "job_submit/allot: loaded, built for Slurm $ver\$" &&
	ctld_log | grep "prep/allot: loaded in slurmctld" &&
	! ctld_log | grep -i "incompatible\|allot.*error\|Couldn.t load.*allot"
'
test_expect_success 'a job passes through prolog and epilog of prep/allot' '
	job=$(sbatch --parsable --wrap true) &&
	slurm_wait_job "$job" COMPLETED 60 &&
	wait_for 10 sh -c "grep -q \"prep/allot: epilog JobId=$job \" \"$SLURM_DIR/log/slurmctld.log\"" &&
	ctld_log | grep "prep/allot: prolog JobId=$job account=root"
'
test_expect_success 'slurm_stop' '
	slurm_stop
'
test_done
