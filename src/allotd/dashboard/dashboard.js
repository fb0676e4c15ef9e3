// SPDX-License-Identifier: GPL-3.0-or-later
// dashboard.js - allot's web dashboard: the caller's balances and one burn-down chart per
// allocation, from allotd's JSON API (doc/api.md), on the page index.html.
//
// Sign-in: `allot dashboard` prints /dashboard#token=<token>, a read-only, short-lived
// bearer token.  The page moves the token from the address bar to sessionStorage (this tab
// only), so it is neither bookmarked nor shown, and sends it as `Authorization: Bearer` on
// every call.  A fragment never reaches a server, nor a Referer.
//
// Safety: bank data (account names, comments, error messages) only ever becomes text
// (textContent, SVG <text>, attribute values set one by one); nothing here parses HTML or
// evaluates strings, and the page's Content-Security-Policy would refuse both anyway.
//
// Load: one call each for the identity, the accounts, the balances and the forecasts, then
// the burn-downs of at most MAX_CHARTS allocations, FETCH_CONCURRENCY at a time; each chart
// fails on its own.  The other views (views.js) load when opened; `#view=NAME` in the link
// opens one (mine, project, ops).
'use strict';

(function () {
  const TOKEN_KEY = 'allot-token';
  const MAX_CHARTS = 50;
  const FETCH_CONCURRENCY = 4;
  const FETCH_TIMEOUT_MS = 20000;
  const BURNDOWN_POINTS = 60;
  const DAY_MS = 86400000;
  const FILTER_DELAY_MS = 200; // charts follow the filter box after typing pauses
  const PACE_TOLERANCE = 0.1;  // |used share - elapsed share| within this is "on pace"
  const SVGNS = 'http://www.w3.org/2000/svg';
  // A token68 (RFC 7235): what may follow "Bearer " in a header; anything else is no link
  // of ours and would only make fetch throw.
  const TOKEN_RE = /^[A-Za-z0-9._~+/-]{16,512}=*$/;
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct',
    'Nov', 'Dec'];

  class AuthError extends Error {}
  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status;
    }
  }
  class SkipError extends Error {}

  const state = {
    token: null,
    who: null,
    balances: [],           // sorted by account, then allocation id
    accounts: [],           // GET /v1/accounts: the ones the caller sees
    view: 'balances',       // the view shown (views.js)
    burndowns: new Map(),   // allocation id -> Promise of its burn-down reply
    forecasts: new Map(),   // allocation id -> its row of GET /v1/forecasts
    filterTimer: 0,
    failed: false,          // the whole page gave way to a notice
  };

  const $ = (id) => document.getElementById(id);

  // ---- DOM helpers: text only, never markup ----

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className)
      e.className = className;
    if (text !== undefined && text !== null)
      e.textContent = String(text);
    return e;
  }

  function svgEl(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {}))
      e.setAttribute(k, String(v));
    if (parent)
      parent.appendChild(e);
    return e;
  }

  function svgText(parent, x, y, text, className, anchor) {
    const t = svgEl('text', {x: round1(x), y: round1(y), class: className}, parent);
    if (anchor)
      t.setAttribute('text-anchor', anchor);
    t.textContent = text;
    return t;
  }

  function round1(v) {
    return Math.round(v * 10) / 10;
  }

  // ---- token ----

  function storageGet() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null; // storage disabled: the token lives in memory for this page only
    }
  }

  function storageSet(token) {
    try {
      if (token === null)
        sessionStorage.removeItem(TOKEN_KEY);
      else
        sessionStorage.setItem(TOKEN_KEY, token);
    } catch (e) {
      // as above
    }
  }

  // The view the address asks for (#view=NAME), else the balances.
  function readView() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    return params.get('view') || 'balances';
  }

  // Keep #view=NAME in the address (a reload reopens it), with nothing else there.
  function setView(name) {
    state.view = name;
    history.replaceState(history.state, '', location.pathname + location.search +
      (name === 'balances' ? '' : '#view=' + encodeURIComponent(name)));
  }

  // The token of the link (then moved out of the address bar), else this tab's.
  function readToken() {
    const hash = location.hash.replace(/^#/, '');
    if (hash) {
      const params = new URLSearchParams(hash);
      if (params.has('token')) {
        const token = params.get('token');
        params.delete('token');
        const rest = params.toString();
        history.replaceState(history.state, '',
          location.pathname + location.search + (rest ? '#' + rest : ''));
        storageSet(token);
        return token;
      }
    }
    return storageGet();
  }

  // ---- API ----

  function errorText(body) {
    if (!body || typeof body !== 'object')
      return '';
    const e = body.error;
    if (e && typeof e === 'object' && typeof e.message === 'string')
      return e.message;
    if (typeof e === 'string')
      return e;
    if (typeof body.message === 'string')
      return body.message;
    return '';
  }

  // GET a path relative to /dashboard ("v1/balances" is /v1/balances, also under a proxy
  // prefix), or POST it the object send (a read by POST: the token is read-only); resolves to
  // the parsed JSON object, rejects with AuthError on 401, else ApiError carrying allotd's
  // message.
  async function api(path, send) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
    const headers = {Authorization: 'Bearer ' + state.token, Accept: 'application/json'};
    if (send !== undefined)
      headers['Content-Type'] = 'application/json';
    let resp;
    let body = null;
    try {
      resp = await fetch(path, {
        method: send === undefined ? 'GET' : 'POST',
        body: send === undefined ? undefined : JSON.stringify(send),
        headers,
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
        signal: ctl.signal,
      });
      body = await resp.json().catch(() => null);
    } catch (e) {
      throw new ApiError(e && e.name === 'AbortError'
        ? 'allotd did not answer within ' + FETCH_TIMEOUT_MS / 1000 + ' s'
        : 'cannot reach allotd (' + (e && e.message ? e.message : 'network error') + ')', 0);
    } finally {
      clearTimeout(timer);
    }
    if (resp.status === 401)
      throw new AuthError(errorText(body) || 'not authenticated');
    if (!resp.ok)
      throw new ApiError(errorText(body) || 'HTTP ' + resp.status + ' ' + resp.statusText,
        resp.status);
    if (!body || typeof body !== 'object')
      throw new ApiError('allotd sent a reply that is not a JSON object', resp.status);
    return body;
  }

  // A runner of at most n promises at a time, first come first served.
  function limiter(n) {
    let active = 0;
    const queue = [];
    function next() {
      while (active < n && queue.length) {
        const job = queue.shift();
        active++;
        Promise.resolve().then(job.fn).then(job.resolve, job.reject).finally(() => {
          active--;
          next();
        });
      }
    }
    return (fn) => new Promise((resolve, reject) => {
      queue.push({fn, resolve, reject});
      next();
    });
  }
  const limited = limiter(FETCH_CONCURRENCY);

  // The burn-down of allocation id, fetched once (a failure is forgotten, to be retried).
  // A chart filtered away before its turn is skipped rather than fetched.
  function burndown(id) {
    let p = state.burndowns.get(id);
    if (!p) {
      p = limited(() => {
        if (state.failed || !$('chart-' + id))
          throw new SkipError('not shown');
        return api('v1/allocations/' + encodeURIComponent(id) + '/burndown?points=' +
                   BURNDOWN_POINTS);
      });
      state.burndowns.set(id, p);
      p.catch(() => {
        if (state.burndowns.get(id) === p)
          state.burndowns.delete(id);
      });
    }
    return p;
  }

  // ---- formats ----

  // SU-minutes as the CLI prints them (src/libcore/money.c money_format_sumin): "981h49m",
  // "45m", "12h", "0h".
  function fmtSU(sumin) {
    if (typeof sumin !== 'number' || !Number.isFinite(sumin))
      return '—';
    const mag = Math.abs(Math.trunc(sumin));
    const sign = sumin < 0 && mag ? '-' : '';
    const h = Math.floor(mag / 60);
    const m = mag % 60;
    if (h && m)
      return sign + h + 'h' + m + 'm';
    if (m)
      return sign + m + 'm';
    return sign + h + 'h';
  }

  // Hours for an axis: "2,500", "12.5k", "1.2M".
  function fmtHours(h) {
    const a = Math.abs(h);
    const num = (v) => v.toLocaleString('en-US', {maximumFractionDigits: 2});
    if (a >= 1e6)
      return num(h / 1e6) + 'M';
    if (a >= 1e4)
      return num(h / 1e3) + 'k';
    return num(h);
  }

  function parseTime(s) {
    return typeof s === 'string' ? Date.parse(s) : NaN;
  }

  // "2026-01-01" for a UTC midnight, else "2026-01-01 10:30" (as `allot balance` shows
  // periods: an allocation starting at 10:00 must not read as starting at the day's start).
  function fmtWhen(ms) {
    if (!Number.isFinite(ms))
      return '…';
    const iso = new Date(ms).toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) :
      iso.slice(0, 10) + ' ' + iso.slice(11, 16);
  }

  function fmtDate(ms) {
    return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : '…';
  }

  function fmtPct(x) {
    if (!Number.isFinite(x))
      return '—';
    const p = x * 100;
    return (Math.abs(p) < 10 && p !== 0 ? p.toFixed(1) : Math.round(p).toString()) + '%';
  }

  // Where an allocation applies: its cluster, or every cluster when it names none.
  function where(b) {
    return b.resource + ' on ' + (b.cluster ? b.cluster : 'any cluster');
  }

  function num(v) {
    return typeof v === 'number' && Number.isFinite(v) ? v : NaN;
  }

  // ---- notices ----

  function showNotice(title, text, kind) {
    state.failed = true;
    $('loading').hidden = true;
    $('content').hidden = true;
    $('notice-title').textContent = title;
    $('notice-text').textContent = text;
    $('notice').classList.toggle('error', kind !== 'signin');
    $('notice').querySelector('.hint').hidden = kind === 'error';
    $('notice').hidden = false;
    document.title = 'allot · ' + title;
  }

  function showSignedOut(detail) {
    state.token = null;
    storageSet(null);
    state.burndowns.clear();
    showNotice('This link has expired or is invalid',
      'Dashboard links are read-only and short-lived' +
      (detail ? ' (allotd said: ' + detail + ')' : '') + '. Get a new one.', 'auth');
  }

  // ---- balances table ----

  function validBalance(b) {
    return b && typeof b === 'object' && Number.isFinite(b.id) && typeof b.account === 'string';
  }

  function byAccountThenId(a, b) {
    if (a.account !== b.account)
      return a.account < b.account ? -1 : 1;
    return a.id - b.id;
  }

  function visibleBalances() {
    const f = $('filter').value.trim().toLowerCase();
    return f ? state.balances.filter((b) => b.account.toLowerCase().includes(f)) :
      state.balances;
  }

  // "ended" / "not started" / "" for an allocation now.
  function phase(startMs, endMs, now) {
    if (Number.isFinite(endMs) && now >= endMs)
      return 'ended';
    if (Number.isFinite(startMs) && now < startMs)
      return 'not started';
    return '';
  }

  function amountCell(sumin) {
    const td = el('td', 'num', fmtSU(sumin));
    if (sumin < 0)
      td.classList.add('neg');
    return td;
  }

  function renderTable(rows, charted) {
    const now = Date.now();
    const body = $('rows');
    const trs = rows.map((b) => {
      const tr = el('tr');
      const id = el('td');
      if (charted.has(b.id)) {
        const a = el('a', null, '#' + b.id);
        a.href = '#chart-' + b.id;
        a.title = 'burn-down chart of allocation ' + b.id;
        id.appendChild(a);
      } else {
        id.textContent = '#' + b.id;
      }
      if (b.category)
        id.appendChild(el('span', 'sub', b.category));
      tr.appendChild(id);
      tr.appendChild(el('td', 'account', b.account));
      tr.appendChild(el('td', null, b.resource));
      tr.appendChild(b.cluster ? el('td', null, b.cluster) : el('td', 'muted', 'any'));
      const start = parseTime(b.start);
      const end = parseTime(b.end);
      // Two unbreakable halves: a narrow table wraps the period at its dash only.
      const period = el('td', 'period');
      period.appendChild(el('span', null, fmtWhen(start) + ' –'));
      period.appendChild(document.createTextNode(' '));
      period.appendChild(el('span', null, fmtWhen(end)));
      const ph = phase(start, end, now);
      if (ph)
        period.appendChild(el('span', 'tag', ph));
      tr.appendChild(period);
      tr.appendChild(amountCell(b.granted_sumin));
      tr.appendChild(amountCell(b.used_sumin));
      tr.appendChild(amountCell(b.held_sumin));
      tr.appendChild(amountCell(b.available_sumin));
      const pct = el('td', 'num');
      const share = b.granted_sumin > 0 ? b.used_sumin / b.granted_sumin : NaN;
      const wrap = el('span', 'pct');
      if (Number.isFinite(share)) {
        const m = el('meter');
        m.min = 0;
        m.max = 1;
        m.low = 0.75;
        m.high = 0.9;
        m.optimum = 0;
        m.value = Math.max(0, Math.min(1, share));
        m.setAttribute('aria-hidden', 'true'); // the number beside it says it
        wrap.appendChild(m);
      }
      wrap.appendChild(el('span', null, fmtPct(share)));
      pct.appendChild(wrap);
      tr.appendChild(pct);
      return tr;
    });
    body.replaceChildren(...trs);
    const n = state.balances.length;
    $('count').textContent = rows.length === n ? n + (n === 1 ? ' allocation' : ' allocations') :
      rows.length + ' of ' + n + ' allocations';
    const empty = $('empty');
    empty.hidden = rows.length > 0;
    if (!n)
      empty.textContent = 'No allocations are visible to ' +
        (state.who && state.who.user ? state.who.user : 'you') + '.';
    else if (!rows.length)
      empty.textContent = 'No account matches "' + $('filter').value.trim() + '".';
  }

  // ---- burn-down charts ----

  // Date ticks: the smallest step of the list that gives at most max ticks, aligned to
  // UTC days, months or years.
  const DATE_STEPS = [[1, 'd'], [2, 'd'], [7, 'd'], [14, 'd'], [1, 'm'], [2, 'm'], [3, 'm'],
    [6, 'm'], [1, 'y'], [2, 'y'], [5, 'y'], [10, 'y'], [20, 'y'], [50, 'y'], [100, 'y']];

  function dateTicks(x0, x1, max) {
    const span = x1 - x0;
    const unitMs = {d: DAY_MS, m: 30.44 * DAY_MS, y: 365.25 * DAY_MS};
    let step = DATE_STEPS[DATE_STEPS.length - 1];
    for (const s of DATE_STEPS) {
      if (span / (s[0] * unitMs[s[1]]) <= max) {
        step = s;
        break;
      }
    }
    const [n, unit] = step;
    const ticks = [];
    const d = new Date(x0);
    if (unit === 'd') {
      let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      if (t < x0)
        t += DAY_MS;
      for (; t <= x1 && ticks.length < 200; t += n * DAY_MS)
        ticks.push({t, label: MONTHS[new Date(t).getUTCMonth()] + ' ' + new Date(t).getUTCDate()});
    } else if (unit === 'm') {
      let y = d.getUTCFullYear();
      let m = d.getUTCMonth();
      if (Date.UTC(y, m) < x0)
        m++;
      m = Math.ceil(m / n) * n;
      for (let t = Date.UTC(y, m); t <= x1 && ticks.length < 200; m += n, t = Date.UTC(y, m)) {
        const td = new Date(t);
        const first = ticks.length === 0 || td.getUTCMonth() < n;
        ticks.push({t, label: MONTHS[td.getUTCMonth()] + (first ? ' ' + td.getUTCFullYear() : '')});
      }
    } else {
      let y = d.getUTCFullYear();
      if (Date.UTC(y, 0) < x0)
        y++;
      y = Math.ceil(y / n) * n;
      for (let t = Date.UTC(y, 0); t <= x1 && ticks.length < 200; y += n, t = Date.UTC(y, 0))
        ticks.push({t, label: String(y)});
    }
    return ticks;
  }

  // Round ticks over [lo, hi] (hours), about count of them; returns {lo, hi, ticks}.
  function valueTicks(lo, hi, count) {
    if (!(hi > lo))
      hi = lo + 1;
    const raw = (hi - lo) / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / mag;
    const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
    const a = Math.floor(lo / step + 1e-9);
    const b = Math.ceil(hi / step - 1e-9);
    const ticks = [];
    for (let i = a; i <= b; i++)
      ticks.push(Number((i * step).toPrecision(12)));
    return {lo: a * step, hi: b * step, ticks};
  }

  // The numbers a chart draws, from a burn-down reply and the table's row.
  function prepare(row, reply) {
    const alloc = reply.alloc && typeof reply.alloc === 'object' ? reply.alloc : row;
    const start = parseTime(alloc.start !== undefined ? alloc.start : row.start);
    const end = parseTime(alloc.end !== undefined ? alloc.end : row.end);
    const pts = (Array.isArray(reply.points) ? reply.points : [])
      .filter((p) => p && typeof p === 'object')
      .map((p) => ({
        t: parseTime(p.time),
        g: num(p.granted_sumin),
        u: num(p.used_sumin),
        h: Number.isFinite(num(p.held_sumin)) ? p.held_sumin : 0,
      }))
      .filter((p) => Number.isFinite(p.t) && Number.isFinite(p.g) && Number.isFinite(p.u))
      .sort((a, b) => a.t - b.t);
    // Nothing to draw before the first point with money in it (allotd counts the grant from
    // the start and job entries at the jobs' times, so this trims only empty leading points).
    const first = pts.findIndex((p) => p.g !== 0 || p.u !== 0 || p.h !== 0);
    if (first > 0)
      pts.splice(0, first);
    const bal = reply.balance && typeof reply.balance === 'object' ? reply.balance : row;
    const now = Date.now();
    if (!pts.length && Number.isFinite(num(bal.granted_sumin)) &&
        Number.isFinite(num(bal.used_sumin))) {
      const t = Number.isFinite(end) ? Math.min(now, end) : now;
      pts.push({t, g: bal.granted_sumin, u: bal.used_sumin, h: num(bal.held_sumin) || 0});
    }
    for (const p of pts) {
      p.r = p.g - p.u;   // remaining: the line
      p.a = p.r - p.h;   // available: the held band's lower edge
    }
    const forecast = state.forecasts.get(row.id) || null;
    return {start, end, pts, now, last: pts[pts.length - 1], forecast};
  }

  // Ideal remaining at time t: the grant at the start, nothing at the end, linear between.
  function idealAt(d, t) {
    if (!Number.isFinite(d.start) || !Number.isFinite(d.end) || d.end <= d.start || !d.last)
      return NaN;
    const f = Math.max(0, Math.min(1, (t - d.start) / (d.end - d.start)));
    return d.last.g * (1 - f);
  }

  // Used at time t, interpolated between the points.
  function usedAt(pts, t) {
    if (!pts.length || t < pts[0].t)
      return NaN;
    for (let i = pts.length - 1; i >= 0; i--) {
      if (pts[i].t <= t) {
        const p = pts[i];
        const q = pts[i + 1];
        if (!q || q.t === p.t)
          return p.u;
        return p.u + (q.u - p.u) * (t - p.t) / (q.t - p.t);
      }
    }
    return NaN;
  }

  // How the use compares with the ideal burn: {cls, label, hint}.
  function pace(d) {
    const ph = phase(d.start, d.end, d.now);
    if (ph)
      return {cls: 'idle', label: ph, hint: 'the allocation is not active now'};
    if (!d.last || !(d.last.g > 0) || !Number.isFinite(d.start) || !Number.isFinite(d.end))
      return null;
    const elapsed = (d.now - d.start) / (d.end - d.start);
    const used = d.last.u / d.last.g;
    if (used - elapsed > PACE_TOLERANCE)
      return {cls: 'over', label: 'over pace',
              hint: fmtPct(used) + ' used with ' + fmtPct(elapsed) + ' of the period gone'};
    if (elapsed - used > PACE_TOLERANCE)
      return {cls: 'under', label: 'under pace',
              hint: fmtPct(used) + ' used with ' + fmtPct(elapsed) + ' of the period gone'};
    return {cls: 'ok', label: 'on pace',
            hint: fmtPct(used) + ' used with ' + fmtPct(elapsed) + ' of the period gone'};
  }

  // One sentence on the current numbers and, at the last 30 days' rate, where they lead.
  function summary(row, d) {
    const l = d.last;
    if (!l)
      return 'No balance to show.';
    let s = fmtSU(l.r) + ' of ' + fmtSU(l.g) + ' remains (' + fmtSU(l.u) + ' used, ' +
      fmtSU(l.h) + ' held, ' + fmtSU(l.r - l.h) + ' available).';
    const ideal = idealAt(d, d.now);
    if (!phase(d.start, d.end, d.now) && Number.isFinite(ideal))
      s += ' On the ideal line ' + fmtSU(Math.round(ideal)) + ' would remain now.';
    const f = d.forecast;
    if (phase(d.start, d.end, d.now) || !f)
      return s;
    const burn = num(f.burn_sumin_per_day);
    if (!(burn > 0))
      return s + ' Nothing was used in the last ' + f.history_days + ' days.';
    const band = f.exhausts_early && f.exhausts_late ?
      ' (between ' + fmtDate(parseTime(f.exhausts_early)) + ' and ' +
        fmtDate(parseTime(f.exhausts_late)) + ')' : '';
    if (f.before_end && f.exhausts)
      return s + ' At ' + fmtSU(burn) + ' a day (allot forecast) it runs out around ' +
        fmtDate(parseTime(f.exhausts)) + band + ', before the period ends.';
    return s + ' At ' + fmtSU(burn) + ' a day (allot forecast) about ' +
      fmtSU(num(f.end_balance_sumin)) + ' will be left unused at the end.';
  }

  function describe(row, d) {
    const l = d.last;
    let s = 'Burn-down of allocation ' + row.id + ' (' + row.account + ', ' + where(row) +
      '), ' + fmtWhen(d.start) + ' to ' + fmtWhen(d.end) + ' UTC.';
    if (l)
      s += ' Remaining ' + fmtSU(l.r) + ' of ' + fmtSU(l.g) + ' granted; used ' +
        fmtSU(l.u) + ', held ' + fmtSU(l.h) + ', available ' + fmtSU(l.r - l.h) + '.';
    const ideal = idealAt(d, d.now);
    if (Number.isFinite(ideal) && !phase(d.start, d.end, d.now))
      s += ' Ideal remaining now: ' + fmtSU(Math.round(ideal)) + '.';
    return s;
  }

  // Draw d into box (a .chart element) at the box's width.
  function draw(box, row, d) {
    const W = Math.max(280, Math.round(box.clientWidth || 560));
    const H = Math.round(Math.min(300, Math.max(210, W * 0.48)));
    const now = d.now;
    let x0 = Number.isFinite(d.start) ? d.start : d.pts.length ? d.pts[0].t : now - DAY_MS;
    let x1 = Number.isFinite(d.end) ? d.end : Math.max(now, d.last ? d.last.t : now) + DAY_MS;
    if (!(x1 > x0))
      x1 = x0 + DAY_MS;

    // Values in SU-hours; the scale includes the grant, every point and 0.
    let vmax = 0;
    let vmin = 0;
    for (const p of d.pts) {
      vmax = Math.max(vmax, p.g / 60, p.r / 60);
      vmin = Math.min(vmin, p.r / 60, p.a / 60);
    }
    const yt = valueTicks(vmin, vmax > vmin ? vmax * 1.04 : vmin + 1, Math.max(3, H / 55));
    const labels = yt.ticks.map(fmtHours);
    const L = 14 + 6.6 * Math.max(...labels.map((s) => s.length), 3);
    const R = 14;
    const T = 24;
    const B = 28;
    const pw = W - L - R;
    const ph = H - T - B;
    const X = (t) => L + (t - x0) / (x1 - x0) * pw;
    const Y = (h) => T + (yt.hi - h) / (yt.hi - yt.lo) * ph;
    const clampT = (t) => Math.max(x0, Math.min(x1, t));

    const svg = svgEl('svg', {
      viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img',
      'aria-label': describe(row, d), focusable: 'false',
    });
    svgEl('title', {}, svg).textContent = describe(row, d);

    // Grid and axes.
    const grid = svgEl('g', {}, svg);
    yt.ticks.forEach((v, i) => {
      const y = round1(Y(v));
      svgEl('line', {x1: L, x2: L + pw, y1: y, y2: y, class: v === 0 ? 'c-axis' : 'c-grid'},
        grid);
      svgText(grid, L - 6, y + 4, labels[i], 'c-tick', 'end');
    });
    svgText(grid, 0, T - 10, 'SU-hours', 'c-label', 'start');
    const xt = dateTicks(x0, x1, Math.max(2, Math.floor(pw / 80)));
    for (const tk of xt) {
      const x = round1(X(tk.t));
      svgEl('line', {x1: x, x2: x, y1: T, y2: T + ph, class: 'c-grid'}, grid);
      svgText(grid, x, T + ph + 17, tk.label, 'c-tick', 'middle');
    }
    svgEl('line', {x1: L, x2: L, y1: T, y2: T + ph, class: 'c-axis'}, grid);
    svgEl('line', {x1: L, x2: L + pw, y1: T + ph, y2: T + ph, class: 'c-axis'}, grid);

    const pts = d.pts.filter((p) => p.t >= x0 - 1 && p.t <= x1 + 1);
    const xy = (t, v) => round1(X(clampT(t))) + ',' + round1(Y(v / 60));

    // Held: the band between remaining and available.
    if (pts.some((p) => p.h > 0)) {
      const top = pts.map((p) => xy(p.t, p.r));
      const bottom = pts.slice().reverse().map((p) => xy(p.t, p.a));
      svgEl('polygon', {points: top.concat(bottom).join(' '), class: 'c-held'}, svg);
      svgEl('polyline', {points: pts.map((p) => xy(p.t, p.a)).join(' '), class: 'c-held-edge'},
        svg);
    }
    // Ideal burn.
    if (Number.isFinite(d.start) && Number.isFinite(d.end) && d.last)
      svgEl('line', {x1: round1(X(d.start)), y1: round1(Y(d.last.g / 60)), x2: round1(X(d.end)),
        y2: round1(Y(0)), class: 'c-ideal'}, svg);
    // Remaining.
    if (pts.length > 1)
      svgEl('polyline', {points: pts.map((p) => xy(p.t, p.r)).join(' '), class: 'c-remaining'},
        svg);
    // Forecast: the available balance from now at the recent burn (and its band) until it
    // reaches zero or the period ends.
    const f = d.forecast;
    if (f && Number.isFinite(num(f.burn_sumin_per_day)) && d.last && now < x1) {
      const avail = num(f.available_sumin);
      const at = (rate) => {
        const out = rate > 0 ? now + avail / rate * DAY_MS : Infinity;
        const t = Math.min(x1, out);
        return xy(t, avail - rate * (t - now) / DAY_MS);
      };
      const lo = num(f.burn_low_sumin_per_day);
      const hi = num(f.burn_high_sumin_per_day);
      if (Number.isFinite(avail) && hi > lo)
        svgEl('polygon', {points: [xy(now, avail), at(hi), at(lo)].join(' '),
          class: 'c-band'}, svg);
      if (Number.isFinite(avail))
        svgEl('polyline', {points: [xy(now, avail), at(num(f.burn_sumin_per_day))].join(' '),
          class: 'c-forecast'}, svg);
    }
    // Now.
    if (now >= x0 && now <= x1) {
      const x = round1(X(now));
      svgEl('line', {x1: x, x2: x, y1: T - 4, y2: T + ph, class: 'c-now'}, svg);
      const right = x > L + pw - 30;
      svgText(svg, right ? x - 4 : x + 4, T - 8, 'now', 'c-now-label', right ? 'end' : 'start');
    }
    if (d.last && d.last.t >= x0 && d.last.t <= x1)
      svgEl('circle', {cx: round1(X(d.last.t)), cy: round1(Y(d.last.r / 60)), r: 3.5,
        class: 'c-dot'}, svg);

    box.replaceChildren(svg);
    box.dataset.width = String(W);
  }

  function legendItem(list, text, build) {
    const li = el('li');
    const s = svgEl('svg', {viewBox: '0 0 24 12', 'aria-hidden': 'true', focusable: 'false'});
    build(s);
    li.appendChild(s);
    li.appendChild(el('span', null, text));
    list.appendChild(li);
  }

  function legend() {
    const ul = el('ul', 'legend');
    ul.setAttribute('aria-label', 'legend');
    legendItem(ul, 'remaining (granted − used)', (s) =>
      svgEl('line', {x1: 1, x2: 23, y1: 6, y2: 6, class: 'c-remaining'}, s));
    legendItem(ul, 'held by running jobs', (s) =>
      svgEl('rect', {x: 1, y: 2, width: 22, height: 8, class: 'c-held'}, s));
    legendItem(ul, 'ideal burn', (s) =>
      svgEl('line', {x1: 1, x2: 23, y1: 6, y2: 6, class: 'c-ideal'}, s));
    legendItem(ul, 'forecast of available (band: ±1 sd of the daily burn)', (s) =>
      svgEl('line', {x1: 1, x2: 23, y1: 6, y2: 6, class: 'c-forecast'}, s));
    legendItem(ul, 'now', (s) => svgEl('line', {x1: 12, x2: 12, y1: 0, y2: 12, class: 'c-now'}, s));
    return ul;
  }

  function chartMessage(box, text, isError) {
    box.replaceChildren(el('p', isError ? 'chart-msg error' : 'chart-msg', text));
  }

  const resizer = typeof ResizeObserver === 'function' ? new ResizeObserver((entries) => {
    for (const e of entries) {
      const box = e.target;
      const w = Math.round(box.clientWidth);
      if (box.chartDraw && Math.abs(w - Number(box.dataset.width || 0)) >= 8)
        box.chartDraw();
    }
  }) : null;

  function chartCard(row) {
    const fig = el('figure', 'chart-card');
    fig.id = 'chart-' + row.id;
    const head = el('figcaption', 'chart-head');
    const h = el('h3', null, row.account);
    h.appendChild(el('span', 'sub', '#' + row.id + ' · ' + where(row)));
    head.appendChild(h);
    const badge = el('span', 'pace');
    badge.hidden = true;
    head.appendChild(badge);
    fig.appendChild(head);
    const box = el('div', 'chart');
    chartMessage(box, 'Loading burn-down…', false);
    fig.appendChild(box);
    const sum = el('p', 'summary');
    fig.appendChild(sum);
    const key = legend();
    fig.appendChild(key);

    burndown(row.id).then((reply) => {
      const d = prepare(row, reply);
      if (!d.last) {
        key.hidden = true;
        chartMessage(box, 'allotd sent no burn-down points for this allocation.', true);
        return;
      }
      box.chartDraw = () => {
        try {
          draw(box, row, d);
        } catch (e) {
          chartMessage(box, 'Cannot draw this chart: ' + e.message, true);
        }
      };
      box.chartDraw();
      if (resizer)
        resizer.observe(box);
      sum.textContent = summary(row, d);
      const p = pace(d);
      if (p) {
        badge.textContent = p.label;
        badge.title = p.hint;
        badge.className = 'pace ' + p.cls;
        badge.hidden = false;
      }
    }, (e) => {
      if (e instanceof SkipError)
        return;
      if (e instanceof AuthError) {
        if (!state.failed)
          showSignedOut(e.message);
        return;
      }
      key.hidden = true;
      chartMessage(box, 'Could not load the burn-down: ' + e.message, true);
    });
    return fig;
  }

  function renderCharts(rows) {
    const list = $('charts');
    if (resizer)
      resizer.disconnect();
    const shown = rows.slice(0, MAX_CHARTS);
    list.replaceChildren(...shown.map(chartCard));
    const note = $('charts-note');
    note.hidden = rows.length <= MAX_CHARTS;
    note.textContent = 'Charts of the first ' + MAX_CHARTS + ' of ' + rows.length +
      ' allocations; filter by account to see the others.';
  }

  // ---- page ----

  function render(withCharts) {
    const rows = visibleBalances();
    const charted = new Set(rows.slice(0, MAX_CHARTS).map((b) => b.id));
    renderTable(rows, charted);
    if (withCharts)
      renderCharts(rows);
  }

  function showWho(who) {
    const p = $('who');
    p.replaceChildren();
    p.appendChild(document.createTextNode('Signed in as '));
    p.appendChild(el('strong', null, who.user || '?'));
    if (who.real_user && who.real_user !== who.user)
      p.appendChild(document.createTextNode(' (by ' + who.real_user + ')'));
    if (who.role)
      p.appendChild(el('span', 'role', who.role));
    p.hidden = false;
  }

  async function load() {
    $('refresh').disabled = true;
    try {
      const [who, bal, fc, acc] = await Promise.all([api('v1/whoami'), api('v1/balances'),
        api('v1/forecasts?active=true'), api('v1/accounts')]);
      if (state.failed)
        return;
      state.who = who;
      if (!Array.isArray(bal.items))
        throw new ApiError('the balances reply has no items list', 200);
      state.balances = bal.items.filter(validBalance).sort(byAccountThenId);
      state.burndowns.clear();
      state.forecasts = new Map((Array.isArray(fc.items) ? fc.items : [])
        .filter((f) => f && typeof f === 'object').map((f) => [f.id, f]));
      state.accounts = (Array.isArray(acc.items) ? acc.items : [])
        .filter((a) => a && typeof a === 'object' && typeof a.name === 'string');
      showWho(who);
      $('loading').hidden = true;
      $('content').hidden = false;
      $('updated').textContent = 'Updated ' + new Date().toISOString().slice(11, 16) + ' UTC';
      render(true);
      if (globalThis.allotViews)
        globalThis.allotViews.init({
          api, el, fmtSU, fmtWhen, fmtPct, parseTime, state, setView, AuthError, ApiError,
          signedOut: showSignedOut,
        }, state.view);
    } catch (e) {
      if (e instanceof AuthError)
        showSignedOut(e.message);
      else
        showNotice('Could not load the balances', e.message, 'error');
    } finally {
      $('refresh').disabled = false;
    }
  }

  function start() {
    state.view = readView();
    state.token = readToken();
    if (!state.token) {
      showNotice('Open this dashboard from a sign-in link',
        'It shows allocation balances and burn-down charts to the people they belong ' +
        'to, and needs a personal, short-lived link.', 'signin');
      return;
    }
    if (!TOKEN_RE.test(state.token)) {
      showSignedOut('');
      return;
    }
    $('filter').addEventListener('input', () => {
      render(false);
      clearTimeout(state.filterTimer);
      state.filterTimer = setTimeout(() => render(true), FILTER_DELAY_MS);
    });
    $('refresh').addEventListener('click', () => {
      if (!state.failed)
        load();
    });
    load();
  }

  start();
})();
