// SPDX-License-Identifier: GPL-3.0-or-later
// views.js - the dashboard's views beside the balances (doc/allotd.md "Web dashboard"):
// "My jobs" for everyone, "Project" for an account's coordinators, "Operations" for
// operators, admins and superusers.  Each shows what a CLI command prints (named under
// its heading) from the same API call, and is loaded the first time it is opened.
//
// dashboard.js owns the page (token, API calls, formats) and hands its helpers over in
// allotViews.init(); nothing here builds markup from strings: bank data becomes text only.
'use strict';

(function () {
  const JOBS_LIMIT = 200;
  const ROWS_LIMIT = 100;
  const SHARE_MAX = 50;       // allocations whose share is fetched, one call each
  const AT_RISK_USED = 0.9;   // an allocation this much used is at risk whatever its forecast
  let h = null;               // dashboard.js's helpers
  // The what-if change a link carries (#wi_cluster=&wi_partition=&wi_weights=&wi_max_tres=
  // &wi_halflife=): read now, before the address keeps only #view=.
  const linkWhatif = new URLSearchParams(location.hash.replace(/^#/, ''));
  const loaded = new Map();   // view name -> Promise of its rendering

  // ---- building blocks ----

  function section(title, cli, note) {
    const s = h.el('section', 'block');
    s.appendChild(h.el('h2', 'title', title));
    const p = h.el('p', 'muted explain');
    p.appendChild(document.createTextNode(note ? note + ' ' : 'As '));
    p.appendChild(h.el('code', null, cli));
    p.appendChild(document.createTextNode(note ? '' : ' prints it.'));
    s.appendChild(p);
    return s;
  }

  // A table of rows: cols are [heading, cell(row) -> text or Node, className?].
  function table(id, cols, rows, empty) {
    if (!rows.length)
      return h.el('p', 'empty', empty);
    const wrap = h.el('div', 'table-wrap');
    const t = h.el('table', 'list');
    t.id = id;
    const head = h.el('tr');
    for (const [name, , cls] of cols) {
      const th = h.el('th', cls || null, name);
      th.scope = 'col';
      head.appendChild(th);
    }
    const thead = h.el('thead');
    thead.appendChild(head);
    t.appendChild(thead);
    const body = h.el('tbody');
    for (const r of rows) {
      const tr = h.el('tr');
      for (const [name, cell, cls] of cols) {
        const v = cell(r);
        const td = h.el('td', cls || null);
        td.dataset.label = name; // a narrow screen shows each cell under its heading
        if (v instanceof Node)
          td.appendChild(v);
        else
          td.textContent = v === undefined || v === null ? '' : String(v);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    t.appendChild(body);
    wrap.appendChild(t);
    return wrap;
  }

  function when(s) {
    return h.fmtWhen(h.parseTime(s));
  }

  function jobName(j) {
    return (j.slurm_id || String(j.job_id)) + (j.run ? ' run ' + j.run : '');
  }

  function items(reply, key) {
    const v = reply && reply[key || 'items'];
    return Array.isArray(v) ? v : [];
  }

  // A held run is pending while its job id is still a submit token (hold at submit: doc/slurm.md
  // "Hold at submit"; tokens start at 2^32, above every Slurm job id), or has no start.
  const SUBMIT_TOKEN_MIN = 4294967296;
  function pendingRun(j) {
    return j.status === 'held' && (j.job_id >= SUBMIT_TOKEN_MIN || !j.start);
  }

  function failMessage(box, what, e) {
    if (e instanceof h.AuthError)
      return h.signedOut(e.message);
    box.appendChild(h.el('p', 'chart-msg error', 'Could not load ' + what + ': ' + e.message));
  }

  // ---- My jobs ----

  // CPU efficiency of a job from its recorded steps (allot-step): their mean CPU use,
  // weighted by how long each ran; null without a usable record.
  function cpuByJob(steps) {
    const acc = new Map();
    for (const s of steps) {
      const r = s && s.record && s.record.result;
      const pct = r && Number(r.avg_cpu_percent);
      const ms = r && Number(r.exec_time_ms);
      if (!Number.isFinite(pct) || !(ms > 0))
        continue;
      const k = s.cluster + '/' + s.job_id;
      const a = acc.get(k) || {w: 0, ms: 0};
      a.w += pct * ms;
      a.ms += ms;
      acc.set(k, a);
    }
    const out = new Map();
    for (const [k, a] of acc)
      out.set(k, a.w / a.ms / 100);
    return out;
  }

  async function viewMine(box) {
    const me = h.state.who.user;
    const q = 'user=' + encodeURIComponent(me);
    // A caller the bank has no user record of (an operator, root) has no jobs: allotd's 404
    // says that user= names no user.
    const none = (e) => {
      if (e instanceof h.ApiError && e.status === 404)
        return {items: []};
      throw e;
    };
    const [jobs, fails, steps] = await Promise.all([
      h.api('v1/jobs?' + q + '&limit=' + JOBS_LIMIT).catch(none),
      h.api('v1/failures?' + q + '&limit=' + ROWS_LIMIT).catch(none),
      h.api('v1/steps?' + q + '&limit=1000').catch(() => ({items: []})),
    ]);
    const all = items(jobs);
    const cpu = cpuByJob(items(steps));
    const running = all.filter((j) => j.status === 'held' && !pendingRun(j));
    const pending = all.filter(pendingRun);
    const done = all.filter((j) => j.status === 'settled' || j.status === 'released');

    let s = section('Running', 'allot job show user=' + me + ' status=held');
    s.appendChild(table('jobs-running', [
      ['Job', jobName], ['Account', (j) => j.account], ['Partition', (j) => j.partition],
      ['Started', (j) => when(j.start)], ['Held', (j) => h.fmtSU(j.hold_sumin), 'num'],
    ], running, 'No running job.'));
    box.appendChild(s);

    s = section('Pending', 'allot job show user=' + me + ' status=held',
      'Jobs not started yet, with the SU their hold keeps from others; as');
    s.appendChild(table('jobs-pending', [
      ['Job', jobName], ['Account', (j) => j.account], ['Partition', (j) => j.partition],
      ['Hold', (j) => h.fmtSU(j.hold_sumin), 'num'],
      ['Time limit', (j) => Math.round(j.time_limit_s / 60) + ' min', 'num'],
    ], pending, 'No pending job.'));
    box.appendChild(s);

    s = section('Finished', 'allot job show user=' + me,
      'Charge, and efficiency: the share of the time limit used and, for jobs with ' +
      'recorded steps (allot step list), their mean CPU use; as');
    s.appendChild(table('jobs-finished', [
      ['Job', jobName], ['Account', (j) => j.account], ['Ended', (j) => when(j.end)],
      ['State', (j) => j.state || j.status], ['Charge', (j) => h.fmtSU(j.charge_sumin), 'num'],
      ['Time used', (j) => j.time_limit_s > 0 ? h.fmtPct(j.elapsed_s / j.time_limit_s) : '—',
        'num'],
      ['CPU', (j) => {
        const c = cpu.get(j.cluster + '/' + j.job_id);
        return c === undefined ? '—' : h.fmtPct(c);
      }, 'num'],
    ], done, 'No finished job.'));
    box.appendChild(s);

    s = section('Refused', 'allot failures user=' + me);
    s.appendChild(table('refusals-mine', [
      ['When', (f) => when(f.time)], ['Job', (f) => f.job_id ? String(f.job_id) : '—'],
      ['Account', (f) => f.account], ['Why', (f) => h.el('span', 'message', f.message)],
    ], items(fails), 'Nothing of yours was refused.'));
    box.appendChild(s);

    // My share of each allocation: my settled usage in its period, over what it used.
    const rows = h.state.balances.slice(0, SHARE_MAX);
    const now = Date.now();
    const mine = await Promise.all(rows.map((b) => {
      let path = 'v1/usage?account=' + encodeURIComponent(b.account) + '&' + q +
        '&since=' + encodeURIComponent(b.start);
      if (h.parseTime(b.end) < now)
        path += '&until=' + encodeURIComponent(b.end);
      if (b.cluster)
        path += '&cluster=' + encodeURIComponent(b.cluster);
      return h.api(path).then((r) => items(r).reduce((t, u) => t + (u.charge_sumin || 0), 0),
        () => NaN);
    }));
    s = section('My share of each allocation', 'allot usage account=A user=' + me +
      ' since=START', 'Your settled usage in each allocation\'s period; as');
    s.appendChild(table('share-mine', [
      ['Allocation', (b) => '#' + b.id], ['Account', (b) => b.account],
      ['Mine', (b, i) => h.fmtSU(mine[rows.indexOf(b)]), 'num'],
      ['Used', (b) => h.fmtSU(b.used_sumin), 'num'],
      ['My share', (b) => b.used_sumin > 0 ? h.fmtPct(mine[rows.indexOf(b)] / b.used_sumin) : '—',
        'num'],
      ['Granted', (b) => h.fmtSU(b.granted_sumin), 'num'],
    ], rows, 'No allocation is yours to use.'));
    box.appendChild(s);
  }

  // ---- Project (coordinators) ----

  function coordinated() {
    const me = h.state.who.user;
    return h.state.accounts.filter((a) =>
      String(a.coordinators || '').split(',').includes(me));
  }

  async function viewProject(box) {
    const accts = coordinated();
    for (const a of accts) {
      const name = a.name;
      const q = 'account=' + encodeURIComponent(name);
      const allocs = h.state.balances.filter((b) => b.account === name);
      const starts = allocs.map((b) => h.parseTime(b.start)).filter(Number.isFinite);
      const since = starts.length ? new Date(Math.min(...starts)).toISOString()
        .replace(/\.\d+Z$/, 'Z') : null;
      const [usage, jobs, fails] = await Promise.all([
        h.api('v1/usage?' + q + (since ? '&since=' + encodeURIComponent(since) : '')),
        h.api('v1/jobs?' + q + '&limit=' + ROWS_LIMIT),
        h.api('v1/failures?' + q + '&limit=' + ROWS_LIMIT),
      ]);
      const card = h.el('section', 'project');
      card.id = 'project-' + name;
      card.appendChild(h.el('h2', 'title', 'Project ' + name));

      let s = section('Usage per user', 'allot usage account=' + name +
        (since ? ' since=' + since.slice(0, 10) : ''));
      s.appendChild(table('usage-' + name, [
        ['User', (u) => u.user], ['Cluster', (u) => u.cluster], ['Jobs', (u) => u.jobs, 'num'],
        ['Charged', (u) => h.fmtSU(u.charge_sumin), 'num'],
      ], items(usage).slice().sort((x, y) => y.charge_sumin - x.charge_sumin),
      'No settled usage yet.'));
      card.appendChild(s);

      s = section('Forecast', 'allot forecast ' + name);
      s.appendChild(table('forecast-' + name, [
        ['Allocation', (b) => '#' + b.id], ['Available', (b) => h.fmtSU(b.available_sumin), 'num'],
        ['Burn a day', (b) => {
          const f = h.state.forecasts.get(b.id);
          return f ? h.fmtSU(Math.round(f.burn_sumin_per_day)) : '—';
        }, 'num'],
        ['Runs out', (b) => {
          const f = h.state.forecasts.get(b.id);
          return f && f.exhausts ? h.fmtWhen(h.parseTime(f.exhausts)).slice(0, 10) +
            (f.before_end ? ' (before the end)' : '') : 'not in its period';
        }],
        ['Left at end', (b) => {
          const f = h.state.forecasts.get(b.id);
          return f ? h.fmtSU(Math.round(f.end_balance_sumin)) : '—';
        }, 'num'],
      ], allocs, 'No allocation of this account.'));
      card.appendChild(s);

      s = section('Jobs', 'allot job show account=' + name);
      s.appendChild(table('jobs-' + name, [
        ['Job', jobName], ['User', (j) => j.user], ['Status', (j) => j.status],
        ['Held', (j) => j.status === 'held' ? h.fmtSU(j.hold_sumin) : '', 'num'],
        ['Charge', (j) => h.fmtSU(j.charge_sumin), 'num'],
      ], items(jobs), 'No job yet.'));
      card.appendChild(s);

      s = section('Refused', 'allot failures account=' + name);
      s.appendChild(table('refusals-' + name, [
        ['When', (f) => when(f.time)], ['User', (f) => f.user],
        ['Job', (f) => f.job_id ? String(f.job_id) : '—'],
        ['Why', (f) => h.el('span', 'message', f.message)],
      ], items(fails), 'Nothing was refused.'));
      card.appendChild(s);
      box.appendChild(card);
    }
  }

  // ---- Operations ----

  function atRisk() {
    const out = [];
    for (const b of h.state.balances) {
      const f = h.state.forecasts.get(b.id);
      const used = b.granted_sumin > 0 ? (b.used_sumin + b.held_sumin) / b.granted_sumin : 0;
      const why = [];
      if (f && f.before_end && f.exhausts)
        why.push('runs out ' + h.fmtWhen(h.parseTime(f.exhausts)).slice(0, 10) +
          ', before its end');
      if (used >= AT_RISK_USED)
        why.push(h.fmtPct(used) + ' used or held');
      if (why.length)
        out.push({b, why: why.join('; ')});
    }
    return out;
  }

  async function viewOps(box) {
    const [evals, cmds, sync] = await Promise.all([
      h.api('v1/evaluations?limit=' + ROWS_LIMIT),
      h.api('v1/commands?limit=' + ROWS_LIMIT),
      h.api('v1/sync'),
    ]);
    let s = section('Allocations at risk', 'allot forecast active=yes',
      'Forecast to run out before their period ends, or ' + Math.round(AT_RISK_USED * 100) +
      '% used or held; as');
    s.appendChild(table('at-risk', [
      ['Allocation', (r) => '#' + r.b.id], ['Account', (r) => r.b.account],
      ['Available', (r) => h.fmtSU(r.b.available_sumin), 'num'], ['Why', (r) => r.why],
    ], atRisk(), 'No allocation is at risk.'));
    box.appendChild(s);

    s = section('Command outbox', 'allot command list',
      'Commands policies queued for the agents, their state and sacctmgr\'s result; as');
    s.appendChild(table('outbox', [
      ['#', (c) => String(c.id)], ['Cluster', (c) => c.cluster], ['Command', (c) => c.kind],
      ['Target', (c) => c.target], ['State', (c) => h.el('span', 'state ' + c.state, c.state)],
      ['Tries', (c) => c.attempts, 'num'], ['Result', (c) => h.el('span', 'message', c.result)],
      ['Queued', (c) => when(c.created)],
    ], items(cmds, 'commands'), 'No command was queued.'));
    box.appendChild(s);

    s = section('Policy evaluations', 'allot policy status ID');
    s.appendChild(table('evaluations', [
      ['When', (e) => when(e.time)], ['Policy', (e) => '#' + e.policy], ['Period', (e) => e.period],
      ['Used', (e) => h.fmtPct(e.usage_ppm / 1e6), 'num'], ['Actions', (e) => e.actions || '—'],
      ['Commands', (e) => e.command_ids || '—'],
    ], items(evals, 'evaluations'), 'No policy was evaluated yet.'));
    box.appendChild(s);

    s = section('Drift from Slurm', 'allot sync status');
    const clusters = Array.isArray(sync.clusters) ? sync.clusters : [];
    if (!clusters.length)
      s.appendChild(h.el('p', 'empty', 'No cluster is synced with Slurm (allot sync).'));
    else
      s.appendChild(table('drift', [
        ['Cluster', (d) => d.cluster], ['Kind', (d) => d.kind], ['Object', (d) => d.object],
        ['Field', (d) => d.field], ['Slurm', (d) => d.slurm], ['allot', (d) => d.allot],
        ['Status', (d) => d.status],
      ], items(sync), 'No drift: allot and Slurm agree.'));
    box.appendChild(s);

    await whatifPanel(box);
  }

  // ---- What-if (in Operations) ----

  // The form's change as POST /v1/whatif's body; null with a message when incomplete.
  function whatifBody(f) {
    const body = {cluster: f.cluster.value.trim()};
    const part = f.partition.value.trim();
    const weights = f.weights.value.trim();
    const hl = f.halflife.value.trim();
    if (!body.cluster)
      return 'Name the cluster.';
    if ((weights || f.max_tres.value) && !part)
      return 'Weights and MAX_TRES change a partition: name it.';
    if (part && !weights && !f.max_tres.value)
      return 'Give the partition new weights or a MAX_TRES choice.';
    if (part)
      body.partition = part;
    if (weights)
      body.weights = weights;
    if (f.max_tres.value)
      body.max_tres = f.max_tres.value === 'yes';
    if (hl)
      body.halflife = hl;
    return body;
  }

  function whatifResult(out, rep) {
    const refusals = items(rep, 'refusals');
    const after = refusals.filter((r) => r.scenario === 'after').length;
    const before = refusals.length - after;
    out.replaceChildren(h.el('p', 'muted', rep.jobs + ' jobs replayed; refused: ' + before +
      ' before, ' + after + ' after.'));
    out.lastChild.id = 'whatif-summary';
    out.appendChild(table('whatif', [
      ['Account', (a) => a.account], ['Jobs', (a) => a.jobs_before, 'num'],
      ['Charged', (a) => h.fmtSU(a.charged_before_sumin), 'num'],
      ['After', (a) => h.fmtSU(a.charged_after_sumin), 'num'],
      ['Change', (a) => h.fmtSU(a.change_sumin), 'num'],
      ['Refused', (a) => a.refused_before, 'num'], ['Refused after', (a) => a.refused_after, 'num'],
    ], items(rep, 'accounts'), 'No job to replay.'));
  }

  function field(form, label, input) {
    const l = h.el('label', 'whatif-field', label + ' ');
    l.appendChild(input);
    form.appendChild(l);
    return input;
  }

  function input(name, value, placeholder) {
    const i = h.el('input');
    i.name = name;
    i.value = value || '';
    i.placeholder = placeholder || '';
    return i;
  }

  async function whatifPanel(box) {
    const s = section('What-if', 'allot whatif',
      'The settled jobs replayed under a proposed price or half-life, before and after; as');
    const form = h.el('form', 'whatif');
    form.id = 'whatif-form';
    const clusters = items(await h.api('v1/clusters'));
    field(form, 'Cluster', input('cluster',
      linkWhatif.get('wi_cluster') || (clusters.length === 1 ? clusters[0].name : '')));
    field(form, 'Partition', input('partition', linkWhatif.get('wi_partition')));
    field(form, 'TRES weights',
      input('weights', linkWhatif.get('wi_weights'), 'CPU=1.0,GRES/gpu=8.0'));
    const mt = h.el('select');
    mt.name = 'max_tres';
    for (const [v, t] of [['', 'unchanged'], ['yes', 'yes'], ['no', 'no']]) {
      const o = h.el('option', null, t);
      o.value = v;
      mt.appendChild(o);
    }
    const linkMt = linkWhatif.get('wi_max_tres');
    mt.value = ['yes', 'no'].includes(linkMt) ? linkMt : '';
    field(form, 'MAX_TRES', mt);
    field(form, 'Half-life', input('halflife', linkWhatif.get('wi_halflife'), '7-0'));
    const go = h.el('button', null, 'Replay');
    go.type = 'submit';
    form.appendChild(go);
    const out = h.el('div', 'whatif-out');
    out.id = 'whatif-out';
    async function run() {
      const body = whatifBody(form);
      if (typeof body === 'string') {
        out.replaceChildren(h.el('p', 'chart-msg error', body));
        return;
      }
      go.disabled = true;
      out.replaceChildren(h.el('p', 'loading', 'Replaying…'));
      try {
        whatifResult(out, await h.api('v1/whatif', body));
      } catch (e) {
        out.replaceChildren();
        failMessage(out, 'the what-if', e);
      } finally {
        go.disabled = false;
      }
    }
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      run();
    });
    s.appendChild(form);
    s.appendChild(out);
    box.appendChild(s);
    if ([...linkWhatif.keys()].some((k) => k.startsWith('wi_')))
      await run();
  }

  // ---- switching ----

  const VIEWS = {
    mine: {label: 'My jobs', build: viewMine, may: () => true},
    project: {label: 'Project', build: viewProject, may: () => coordinated().length > 0},
    ops: {label: 'Operations', build: viewOps,
      may: () => ['superuser', 'admin', 'operator'].includes(h.state.who.role)},
  };

  // The views this caller may open, after the balances.
  function allowed() {
    return ['balances'].concat(Object.keys(VIEWS).filter((v) => VIEWS[v].may()));
  }

  function show(name) {
    const names = allowed();
    if (!names.includes(name))
      name = 'balances';
    for (const b of document.querySelectorAll('#views button'))
      b.setAttribute('aria-current', b.dataset.view === name ? 'page' : 'false');
    $('view-balances').hidden = name !== 'balances';
    for (const v of Object.keys(VIEWS)) {
      const box = $('view-' + v);
      box.hidden = v !== name;
    }
    h.setView(name);
    if (name === 'balances' || loaded.has(name))
      return;
    const box = $('view-' + name);
    box.replaceChildren(h.el('p', 'loading', 'Loading…'));
    const p = (async () => {
      const inner = h.el('div');
      try {
        await VIEWS[name].build(inner);
      } catch (e) {
        loaded.delete(name);
        failMessage(inner, VIEWS[name].label.toLowerCase(), e);
      }
      box.replaceChildren(inner);
    })();
    loaded.set(name, p);
  }

  function $(id) {
    return document.getElementById(id);
  }

  globalThis.allotViews = {
    // helpers: dashboard.js's; view: the one the link asked for.
    init(helpers, view) {
      h = helpers;
      loaded.clear();
      const nav = $('views');
      nav.replaceChildren();
      for (const v of allowed()) {
        const b = h.el('button', null, v === 'balances' ? 'Balances' : VIEWS[v].label);
        b.type = 'button';
        b.dataset.view = v;
        b.addEventListener('click', () => show(v));
        nav.appendChild(b);
      }
      nav.hidden = false;
      show(view);
    },
  };
})();
