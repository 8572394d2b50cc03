// The counters dashboard: plain JavaScript over the gateway's public JSON API, no build step. Every value that comes
// from a counter id is put on the page as text (textContent), never as HTML: ids are chosen by whoever sends beacons.
'use strict';

(() => {
  const BUCKET_SECONDS = { minute: 60, hour: 3600, day: 86400 };
  const POLL_MS = 2000;
  const TOP = 20;
  const numbers = new Intl.NumberFormat('en-US');
  const state = { token: null, namespaces: [], selected: null, previous: null, chart: null, range: null, chartId: null };
  const $ = id => document.getElementById(id);

  /** A number with thousands separators; '–' for none. */
  const count = n => (n === null || n === undefined) ? '–' : numbers.format(n);
  /** An instant as ISO-8601 in UTC, to the second. */
  const iso = date => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

  class NeedsToken extends Error {}

  /** GET a JSON answer of the API, with the token when one was given; a 401 or 403 asks for one. */
  async function api(path) {
    const headers = state.token ? { Authorization: 'Bearer ' + state.token } : {};
    const response = await fetch(path, { headers, cache: 'no-store' });
    if (response.status === 401 || response.status === 403) {
      askForToken(response.status === 403 ? 'this token does not carry the read right' : '');
      throw new NeedsToken();
    }
    const body = await response.json();
    if (!response.ok) {
      throw new Error(body.message || ('HTTP ' + response.status));
    }
    return body;
  }

  function askForToken(problem) {
    $('token-dialog').hidden = false;
    $('token-button').hidden = false;
    $('token-error').textContent = problem;
    $('token-input').focus();
  }

  function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) {
      td.className = className;
    }
    return td;
  }

  function kind(namespace) {
    const parts = [];
    if (namespace.window) {
      const kept = namespace.window.retentionSeconds;
      parts.push(namespace.window.bucket + ' buckets, ' + (kept % 86400 === 0 ? kept / 86400 + ' d' : kept / 3600 + ' h')
        + ' kept');
    } else {
      parts.push('plain');
    }
    if (namespace.unique) {
      parts.push('unique visitors');
    }
    if (namespace.public) {
      parts.push('public');
    }
    return parts.join(', ');
  }

  // ---- the gateway and its namespaces, refreshed every POLL_MS ----

  async function refresh() {
    try {
      const overview = await api('/v1/namespaces');
      showHealth(overview.gateway);
      showNamespaces(overview.namespaces, Date.now());
    } catch (e) {
      if (!(e instanceof NeedsToken)) {
        $('health').textContent = 'unreachable';
        $('health').className = 'badge not-ready';
      }
    }
  }

  function showHealth(gateway) {
    const problems = [];
    if (gateway.draining) {
      problems.push('shutting down');
    }
    if (gateway.failingWriters > 0) {
      problems.push(gateway.failingWriters + ' writers failing');
    }
    if (gateway.sheddingWriters > 0) {
      problems.push(gateway.sheddingWriters + ' writers shedding');
    }
    const backlog = gateway.journalBytes > 0 && gateway.journalOldestAgeSeconds >= 5
      ? ' · journal holds ' + count(gateway.journalBytes) + ' bytes, oldest ' + count(Math.round(gateway.journalOldestAgeSeconds)) + ' s'
      : '';
    $('health').textContent = (gateway.ready ? 'ready' : 'not ready: ' + problems.join(', ')) + backlog;
    $('health').className = 'badge ' + (gateway.ready ? 'ready' : 'not-ready');
  }

  function showNamespaces(namespaces, now) {
    const before = state.previous;
    state.previous = { at: now, taken: Object.fromEntries(namespaces.map(n => [n.name, n.increments])) };
    state.namespaces = namespaces;
    const body = $('namespaces').tBodies[0];
    body.replaceChildren(...namespaces.map(namespace => {
      const row = document.createElement('tr');
      row.dataset.namespace = namespace.name;
      const rate = before && before.taken[namespace.name] !== undefined
        ? Math.max(0, Math.round((namespace.increments - before.taken[namespace.name]) * 1000 / (now - before.at)))
        : null;
      row.append(cell(namespace.name), cell(kind(namespace)), cell(count(rate), 'num rate'),
        cell(count(namespace.increments), 'num'));
      row.classList.toggle('selected', state.selected === namespace.name);
      row.addEventListener('click', () => select(namespace.name));
      return row;
    }));
  }

  // ---- one namespace ----

  function select(name) {
    state.selected = name;
    state.chartId = null;
    const namespace = state.namespaces.find(n => n.name === name);
    document.querySelectorAll('#namespaces tbody tr').forEach(row =>
      row.classList.toggle('selected', row.dataset.namespace === name));
    $('detail').hidden = false;
    $('detail-title').textContent = name + ' (' + kind(namespace) + ')';
    $('detail-error').textContent = '';
    $('windowed').hidden = !namespace.window;
    $('plain').hidden = !!namespace.window;
    document.querySelectorAll('.unique-col').forEach(th => { th.hidden = !namespace.unique; });
    if (namespace.window) {
      showTop();
    } else {
      $('values').tBodies[0].replaceChildren();
    }
  }

  /** The chosen range as [from, to): the last hour, day or 30 days up to now, or the custom one (UTC); within the retention. */
  function range(namespace) {
    const now = new Date();
    let from;
    let to = now;
    if ($('range').value === 'custom') {
      from = new Date($('from').value + 'Z');
      to = new Date($('to').value + 'Z');
    } else {
      from = new Date(now.getTime() - Number($('range').value) * 1000);
    }
    const oldest = new Date(now.getTime() - namespace.window.retentionSeconds * 1000);
    if (from < oldest) {
      from = oldest;
    }
    return { from: iso(from), to: iso(to) };
  }

  async function showTop() {
    const namespace = state.namespaces.find(n => n.name === state.selected);
    const r = range(namespace);
    state.range = r;
    $('range-label').textContent = 'buckets starting from ' + r.from + ' to ' + r.to + ' (UTC)';
    const table = $('top');
    table.dataset.from = r.from;
    table.dataset.to = r.to;
    const query = 'top=' + TOP + '&from=' + encodeURIComponent(r.from) + '&to=' + encodeURIComponent(r.to)
      + (namespace.unique ? '&unique=true' : '');
    try {
      const answer = await api('/v1/counters/' + encodeURIComponent(namespace.name) + '?' + query);
      $('detail-error').textContent = '';
      table.tBodies[0].replaceChildren(...answer.top.map(entry => {
        const row = document.createElement('tr');
        row.dataset.id = entry.id;
        row.append(cell(entry.id), cell(count(entry.total), 'num total'));
        if (namespace.unique) {
          row.append(cell(count(entry.unique), 'num unique'));
        }
        row.addEventListener('click', () => showChart(namespace, entry.id));
        return row;
      }));
      table.dataset.loaded = 'true';
      if (answer.top.length > 0) {
        await showChart(namespace, state.chartId && answer.top.some(e => e.id === state.chartId)
          ? state.chartId : answer.top[0].id);
      }
    } catch (e) {
      if (!(e instanceof NeedsToken)) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  /** The counter's buckets over the range as a line (every bucket, empty ones at 0), unique visitors as a second. */
  async function showChart(namespace, id) {
    state.chartId = id;
    document.querySelectorAll('#top tbody tr').forEach(row => row.classList.toggle('selected', row.dataset.id === id));
    const r = state.range;
    const query = 'from=' + encodeURIComponent(r.from) + '&to=' + encodeURIComponent(r.to)
      + (namespace.unique ? '&unique=true' : '');
    const answer = await api('/v1/counters/' + encodeURIComponent(namespace.name) + '/' + encodeURIComponent(id)
      + '?' + query);
    const step = BUCKET_SECONDS[namespace.window.bucket];
    const start = Date.parse(answer.from) / 1000;
    const end = Date.parse(answer.to) / 1000;
    const byStart = new Map(answer.buckets.map(b => [Date.parse(b.start) / 1000, b]));
    const times = [];
    const values = [];
    const uniques = [];
    for (let t = start; t < end; t += step) {
      const bucket = byStart.get(t);
      times.push(t);
      values.push(bucket ? bucket.value : 0);
      uniques.push(bucket && bucket.unique !== undefined ? bucket.unique : 0);
    }
    $('chart-title').textContent = id + ': ' + count(answer.total) + ' over the range'
      + (namespace.unique ? ', ' + count(answer.unique) + ' unique visitors' : '');
    // times as ISO-8601 in UTC (the date alone for day buckets), whatever the browser's language
    const when = t => t === null || t === undefined ? '–'
      : iso(new Date(t * 1000)).slice(0, namespace.window.bucket === 'day' ? 10 : 16).replace('T', ' ');
    const series = [{ label: 'bucket (UTC)', value: (u, t) => when(t) }, { label: 'increments', stroke: '#2f6fde', width: 2, value: (u, v) => count(v) }];
    const data = [times, values];
    if (namespace.unique) {
      series.push({ label: 'unique visitors', stroke: '#d9822b', width: 2, value: (u, v) => count(v) });
      data.push(uniques);
    }
    if (state.chart) {
      state.chart.destroy();
    }
    const options = {
      width: $('chart').clientWidth || 320,
      height: 260,
      series,
      // the date over the time, ticks far enough apart for both
      axes: [{ space: 90, size: 60, values: (u, ticks) => ticks.map(t => when(t).replace(' ', '\n')) },
        { size: 70, values: (u, ticks) => ticks.map(count) }],
      scales: { x: { time: true } },
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    };
    state.chart = new uPlot(options, data, $('chart'));
    window.dashboard.chart = state.chart;
  }

  async function lookUp(event) {
    event.preventDefault();
    const ids = $('ids').value.split(',').map(id => id.trim()).filter(id => id.length > 0);
    if (ids.length === 0) {
      return;
    }
    const query = ids.map(id => 'id=' + encodeURIComponent(id)).join('&');
    try {
      const answer = await api('/v1/counters/' + encodeURIComponent(state.selected) + '?' + query);
      $('detail-error').textContent = '';
      $('values').tBodies[0].replaceChildren(...answer.counters.map(counter => {
        const row = document.createElement('tr');
        row.dataset.id = counter.id;
        row.append(cell(counter.id), cell(count(counter.value), 'num value'));
        return row;
      }));
    } catch (e) {
      if (!(e instanceof NeedsToken)) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  // ---- wiring ----

  $('token-dialog').addEventListener('submit', event => {
    event.preventDefault();
    state.token = $('token-input').value.trim() || null;
    $('token-dialog').hidden = true;
    refresh();
  });
  $('token-button').addEventListener('click', () => askForToken(''));
  $('range').addEventListener('change', () => {
    $('custom').hidden = $('range').value !== 'custom';
    if ($('range').value !== 'custom') {
      showTop();
    }
  });
  $('range-form').addEventListener('submit', event => {
    event.preventDefault();
    showTop();
  });
  $('lookup').addEventListener('submit', lookUp);
  window.addEventListener('resize', () => {
    if (state.chart) {
      state.chart.setSize({ width: $('chart').clientWidth || 320, height: 260 });
    }
  });

  window.dashboard = { state, select, refresh };
  refresh();
  setInterval(refresh, POLL_MS);
})();
