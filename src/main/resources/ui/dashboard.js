// The counters dashboard: plain JavaScript over the gateway's public JSON API, no build step. Every value that comes
// from a counter id is put on the page as text (textContent), never as HTML: ids are chosen by whoever sends beacons.
//
// Every view has an address, kept in the page's URL so that it can be shared and reloaded:
//   /ui/?ns=pageviews&range=24h&id=%2Fhome      a windowed namespace's top list over a range, and one counter's chart
//   /ui/?ns=pageviews&range=custom&from=…&to=…  the same over a custom range (ISO-8601, UTC)
//   /ui/?ns=likes&id=a&id=b                     a plain namespace's look-up of those ids
// Without ns, the page opens the first windowed namespace (else the first namespace).
'use strict';

(() => {
  const BUCKET_SECONDS = { minute: 60, hour: 3600, day: 86400 };
  /** The preset ranges, by their name in the address. */
  const RANGES = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
  const DEFAULT_RANGE = '24h';
  /** The namespaces and the gateway's health (answered from memory: cheap). */
  const POLL_MS = 2000;
  /** The shown view: its top list, chart or looked-up values (each a database read). */
  const VIEW_REFRESH_MS = 5000;
  const TOP = 20;
  /** The least room between two labels of the time axis, in CSS pixels. */
  const LABEL_SPACE = 90;
  const numbers = new Intl.NumberFormat('en-US');
  const state = {
    token: null, namespaces: [], gateway: null, previous: null, chart: null, chartKey: null, xLabels: [],
    // the view: what the address says
    view: { ns: null, range: DEFAULT_RANGE, from: null, to: null, ids: [] },
    // the range the shown top list and chart were read for
    range: null,
    // bumped by every change of view: an answer for an older view is dropped
    generation: 0,
  };
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

  const namespaceNamed = name => state.namespaces.find(n => n.name === name);

  // ---- what became of a public namespace's page views ----

  /** Why views were counted under a reserved id instead of their page's. */
  const FOLDED = {
    invalid_id: 'page addresses that cannot be stored as sent, counted under (invalid)',
    client_new_ids: 'new pages from one visitor address past its budget of new pages per hour, counted under (other)',
    network_new_ids: 'new pages from one network past its budget of new pages per hour, counted under (other)',
    namespace_new_ids: 'new pages past the namespace\'s budget of new pages per hour, counted under (other)',
  };
  /** Why views were not counted at all. */
  const DROPPED = {
    rate_limited: 'one client repeating views faster than its rate: not counted, so that nobody can inflate a page',
    crawler: 'crawlers and bots (ua-parser\'s list)',
    headless_browser: 'headless or automated browsers (Puppeteer, Playwright, Selenium…)',
    configured_pattern: 'user agents matching beacon.botPatterns',
    no_user_agent: 'requests without a User-Agent (every browser sends one)',
    long_user_agent: 'User-Agents over 512 characters (no browser sends one)',
    costly_user_agent: 'User-Agents made up to cost the bot filter (no browser\'s needs that many rules)',
    do_not_track: 'visitors asking not to be tracked (DNT: 1), as configured',
    global_privacy_control: 'visitors sending Global Privacy Control (Sec-GPC: 1), as configured',
  };

  function reasonItem(n, label, words) {
    const item = document.createElement('li');
    item.dataset.reason = label;
    item.textContent = count(n) + ' ' + (words || label);
    return item;
  }

  /** The selected public namespace's views since start: counted, folded and dropped by reason, and what to do. */
  function showBeacons(namespace, gateway) {
    const beacons = namespace && namespace.beacons;
    $('beacons').hidden = !beacons;
    if (!beacons) {
      return;
    }
    const folded = Object.values(beacons.folded).reduce((a, b) => a + b, 0);
    const dropped = Object.values(beacons.dropped).reduce((a, b) => a + b, 0);
    $('beacons-counted').textContent = count(beacons.counted) + ' views counted'
      + (folded > 0 ? ', ' + count(folded) + ' of them under a reserved id' : '')
      + (dropped > 0 ? '; ' + count(dropped) + ' not counted' : '; none left out');
    const items = [];
    Object.entries(beacons.folded).forEach(([label, n]) => items.push(reasonItem(n, 'folded_' + label, FOLDED[label])));
    Object.entries(beacons.dropped).forEach(([label, n]) => items.push(reasonItem(n, label, DROPPED[label])));
    $('beacons-reasons').replaceChildren(...items);
    const hints = [];
    const limited = beacons.dropped.rate_limited || 0;
    if (limited > 0 && beacons.rateLimitedFromOneClient >= limited / 2) {
      hints.push(count(limited) + ' rate_limited, at least ' + count(beacons.rateLimitedFromOneClient)
        + ' of them from one address: behind a proxy or load balancer? Set http.trustedProxies to its address, so that '
        + 'each visitor is told apart by X-Forwarded-For.');
    }
    (gateway.untrustedForwarders || []).forEach(peer => hints.push(count(peer.requests) + ' views arrived through '
      + peer.peer + ' with X-Forwarded-For naming ' + (peer.forwardedClients >= 20 ? '20 or more' : count(peer.forwardedClients))
      + ' visitors, but it is not in http.trustedProxies: they all count as one visitor address. If it is your proxy, '
      + 'add it there.'));
    $('beacons-hints').textContent = hints.join(' ');
  }

  // ---- the view and its address ----

  /** The view an address names. */
  function viewOf(search) {
    const query = new URLSearchParams(search);
    const range = query.get('range');
    return {
      ns: query.get('ns'),
      range: range === 'custom' || RANGES[range] ? range : DEFAULT_RANGE,
      from: query.get('from'),
      to: query.get('to'),
      ids: query.getAll('id').filter(id => id.length > 0),
    };
  }

  /** The address of a view: only what the view needs, in a fixed order. */
  function addressOf(view) {
    const query = new URLSearchParams();
    query.set('ns', view.ns);
    const namespace = namespaceNamed(view.ns);
    if (namespace && namespace.window) {
      query.set('range', view.range);
      if (view.range === 'custom') {
        query.set('from', view.from);
        query.set('to', view.to);
      }
    }
    view.ids.forEach(id => query.append('id', id));
    return location.pathname + '?' + query.toString();
  }

  /** Shows {@code view}; {@code how}: 'push' a new address (a reader's step), 'replace' it, or leave it. */
  function go(view, how) {
    state.view = view;
    state.generation++;
    const address = addressOf(view);
    if (how === 'push' && address !== location.pathname + location.search) {
      history.pushState(null, '', address);
    } else if (how === 'replace') {
      history.replaceState(null, '', address);
    }
    showView();
  }

  /** A namespace named by the address if declared, else the first windowed one, else the first. */
  function landingNamespace(name) {
    if (name && namespaceNamed(name)) {
      return name;
    }
    const windowed = state.namespaces.find(n => n.window);
    return (windowed || state.namespaces[0] || {}).name || null;
  }

  // ---- the gateway and its namespaces, refreshed every POLL_MS ----

  async function refresh() {
    try {
      const overview = await api('/v1/namespaces');
      showHealth(overview.gateway);
      state.gateway = overview.gateway;
      const first = state.namespaces.length === 0;
      showNamespaces(overview.namespaces, Date.now());
      showBeacons(namespaceNamed(state.view.ns), overview.gateway);
      if (first) {
        // the first answer tells which namespaces there are: open the one the address names, or the landing one
        const view = viewOf(location.search);
        const ns = landingNamespace(view.ns);
        if (ns) {
          go({ ...view, ns, ids: ns === view.ns ? view.ids : [] }, 'replace');
        }
      }
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
      const link = document.createElement('a');
      link.textContent = namespace.name;
      link.href = addressOf({ ns: namespace.name, range: state.view.range, from: state.view.from, to: state.view.to,
        ids: [] });
      link.addEventListener('click', event => {
        event.preventDefault();
        select(namespace.name);
      });
      const name = cell('', 'name');
      name.append(link);
      row.append(name, cell(kind(namespace), 'kind'), cell(count(rate), 'num rate'), cell(count(namespace.values), 'num values'));
      row.classList.toggle('selected', state.view.ns === namespace.name);
      row.addEventListener('click', () => select(namespace.name));
      return row;
    }));
  }

  // ---- one namespace ----

  function select(name) {
    if (name !== state.view.ns) {
      go({ ...state.view, ns: name, ids: [] }, 'push');
    }
  }

  /** Shows the view of the address: the namespace's heading, then its top list and chart, or its look-up. */
  function showView() {
    const namespace = namespaceNamed(state.view.ns);
    if (!namespace) {
      return;
    }
    document.querySelectorAll('#namespaces tbody tr').forEach(row =>
      row.classList.toggle('selected', row.dataset.namespace === namespace.name));
    $('detail').hidden = false;
    $('detail-title').textContent = namespace.name + ' (' + kind(namespace) + ')';
    $('detail-error').textContent = '';
    $('windowed').hidden = !namespace.window;
    showBeacons(namespace, state.gateway || {});
    $('plain').hidden = !!namespace.window;
    document.querySelectorAll('.unique-col').forEach(th => { th.hidden = !namespace.unique; });
    if (namespace.window) {
      $('range').value = state.view.range;
      $('custom').hidden = state.view.range !== 'custom';
      if (state.view.range === 'custom') {
        $('from').value = (state.view.from || '').replace(/:\d{2}Z$|Z$/, '').slice(0, 16);
        $('to').value = (state.view.to || '').replace(/:\d{2}Z$|Z$/, '').slice(0, 16);
      }
      showTop();
    } else {
      $('ids').value = state.view.ids.join(', ');
      lookUp();
    }
  }

  /** The view's range as [from, to): a preset up to now, or the custom one (UTC); within the retention. */
  function range(namespace) {
    const now = new Date();
    let from;
    let to = now;
    if (state.view.range === 'custom' && state.view.from && state.view.to) {
      from = new Date(state.view.from);
      to = new Date(state.view.to);
    } else {
      from = new Date(now.getTime() - (RANGES[state.view.range] || RANGES[DEFAULT_RANGE]) * 1000);
    }
    const oldest = new Date(now.getTime() - namespace.window.retentionSeconds * 1000);
    if (from < oldest) {
      from = oldest;
    }
    return { from: iso(from), to: iso(to) };
  }

  async function showTop() {
    const generation = state.generation;
    const namespace = namespaceNamed(state.view.ns);
    const r = range(namespace);
    const query = 'top=' + TOP + '&from=' + encodeURIComponent(r.from) + '&to=' + encodeURIComponent(r.to)
      + (namespace.unique ? '&unique=true' : '');
    try {
      const answer = await api('/v1/counters/' + encodeURIComponent(namespace.name) + '?' + query);
      if (generation !== state.generation) {
        return; // the reader moved on meanwhile
      }
      state.range = r;
      $('range-label').textContent = 'buckets starting from ' + r.from + ' to ' + r.to + ' (UTC), refreshed every '
        + VIEW_REFRESH_MS / 1000 + ' s';
      $('detail-error').textContent = '';
      const table = $('top');
      table.dataset.from = r.from;
      table.dataset.to = r.to;
      let visitorsPending = false;
      table.tBodies[0].replaceChildren(...answer.top.map(entry => {
        const row = document.createElement('tr');
        row.dataset.id = entry.id;
        row.append(cell(entry.id, 'id'), cell(count(entry.total), 'num total'));
        if (namespace.unique) {
          // views without a visitor yet: the visitors are merged apart from the counts, a moment later
          const none = entry.total > 0 && entry.unique === 0;
          visitorsPending = visitorsPending || none;
          row.append(cell(none ? '0 *' : count(entry.unique), 'num unique'));
        }
        row.addEventListener('click', () => go({ ...state.view, ids: [entry.id] }, 'push'));
        return row;
      }));
      showUniqueNote(namespace, visitorsPending);
      table.dataset.loaded = 'true';
      table.dataset.refreshed = String(Date.now());
      // the chart of the counter the address names, else of the first in the list
      const id = state.view.ids[0] || (answer.top.length > 0 ? answer.top[0].id : null);
      if (id !== null) {
        await showChart(namespace, id, generation);
      }
    } catch (e) {
      if (!(e instanceof NeedsToken) && generation === state.generation) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  /** Why a page with views may show 0 visitors: the merge a moment after the count, or visitors left out (and why). */
  function showUniqueNote(namespace, visitorsPending) {
    const leftOut = (state.gateway && state.gateway.uniquesLeftOut) || {};
    const reasons = Object.entries(leftOut).map(([reason, n]) => count(n) + ' ' + ({
      full: 'while the gateway held as many pages\' visitors as its memory allows',
      no_salt: 'while the database could not give the day\'s salt',
    }[reason] || reason));
    const note = $('unique-note');
    note.hidden = !namespace.unique || (!visitorsPending && reasons.length === 0);
    note.textContent = (visitorsPending ? '* Views without a visitor: visitors come from page-view beacons only, not '
      + 'from increments sent through the API, and are merged a moment after their views (every '
      + 'uniques.flushInterval), so a page seen in the last seconds may show none yet. ' : '')
      + (reasons.length > 0 ? 'Counted views left out of the visitor counts since start: ' + reasons.join('; ') + '.' : '');
  }

  /** Tick positions of the time axis: bucket starts, every {@code stride}-th one, so that labels never crowd. */
  function bucketSplits(step, start, end, width) {
    const buckets = Math.max(1, Math.round((end - start) / step));
    const room = Math.max(1, Math.floor(width / LABEL_SPACE));
    const stride = Math.ceil(buckets / room);
    const splits = [];
    for (let t = start; t < end; t += step * stride) {
      splits.push(t);
    }
    return splits;
  }

  /** The counter's buckets over the range as bars (every bucket, empty ones at 0), unique visitors as a line. */
  async function showChart(namespace, id, generation) {
    document.querySelectorAll('#top tbody tr').forEach(row => row.classList.toggle('selected', row.dataset.id === id));
    const r = state.range;
    const query = 'from=' + encodeURIComponent(r.from) + '&to=' + encodeURIComponent(r.to)
      + (namespace.unique ? '&unique=true' : '');
    const answer = await api('/v1/counters/' + encodeURIComponent(namespace.name) + '/' + encodeURIComponent(id)
      + '?' + query);
    if (generation !== state.generation) {
      return;
    }
    const bucket = namespace.window.bucket;
    const step = BUCKET_SECONDS[bucket];
    const start = Date.parse(answer.from) / 1000;
    const end = Date.parse(answer.to) / 1000;
    const byStart = new Map(answer.buckets.map(b => [Date.parse(b.start) / 1000, b]));
    const times = [];
    const values = [];
    const uniques = [];
    for (let t = start; t < end; t += step) {
      const found = byStart.get(t);
      times.push(t);
      values.push(found ? found.value : 0);
      uniques.push(found && found.unique !== undefined ? found.unique : 0);
    }
    $('chart-title').textContent = id + ': ' + count(answer.total) + ' over the range'
      + (namespace.unique ? ', ' + count(answer.unique) + ' unique visitors' : '');
    const data = namespace.unique ? [times, values, uniques] : [times, values];
    // the same chart again (a refresh): new data, the reader's cursor and size kept
    const key = [namespace.name, id, r.from, bucket, namespace.unique].join('|');
    if (state.chart && state.chartKey === key && state.chart.data[0].length === times.length) {
      state.chart.setData(data);
      return;
    }
    // times as ISO-8601 in UTC: the date alone for day buckets, whatever the browser's language
    const when = t => t === null || t === undefined ? '–'
      : iso(new Date(t * 1000)).slice(0, bucket === 'day' ? 10 : 16).replace('T', ' ');
    const series = [{ label: 'bucket (UTC)', value: (u, t) => when(t) },
      { label: 'increments', stroke: '#2f6fde', fill: '#2f6fde55', width: 1, paths: uPlot.paths.bars({ size: [0.7, 60] }),
        points: { show: false }, value: (u, v) => count(v) }];
    if (namespace.unique) {
      series.push({ label: 'unique visitors', stroke: '#d9822b', width: 2, value: (u, v) => count(v) });
    }
    if (state.chart) {
      state.chart.destroy();
    }
    const options = {
      width: $('chart').clientWidth || 320,
      height: 260,
      series,
      axes: [{
        space: LABEL_SPACE, size: 60,
        // one label per bucket start (every few when they are many): a day bucket is one date, never repeated
        splits: u => bucketSplits(step, start, end, u.width),
        values: (u, ticks) => {
          state.xLabels = ticks.map(t => when(t));
          return state.xLabels.map(label => label.replace(' ', '\n'));
        },
      }, { size: 70, values: (u, ticks) => ticks.map(count) }],
      // a bar per bucket: the scale reaches half a bucket beyond the first and the last, and never below zero
      scales: {
        x: { time: true, range: () => [times[0] - step / 2, times[times.length - 1] + step / 2] },
        y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] },
      },
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    };
    state.chart = new uPlot(options, data, $('chart'));
    state.chartKey = key;
    window.dashboard.chart = state.chart;
  }

  async function lookUp() {
    const generation = state.generation;
    const ids = state.view.ids;
    $('values').tBodies[0].replaceChildren();
    if (ids.length === 0) {
      return;
    }
    const query = ids.map(id => 'id=' + encodeURIComponent(id)).join('&');
    try {
      const answer = await api('/v1/counters/' + encodeURIComponent(state.view.ns) + '?' + query);
      if (generation !== state.generation) {
        return;
      }
      $('detail-error').textContent = '';
      $('values').tBodies[0].replaceChildren(...answer.counters.map(counter => {
        const row = document.createElement('tr');
        row.dataset.id = counter.id;
        row.append(cell(counter.id, 'id'), cell(count(counter.value), 'num value'));
        return row;
      }));
    } catch (e) {
      if (!(e instanceof NeedsToken) && generation === state.generation) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  /** The shown view read again, the top list and chart of a preset range sliding with the clock. */
  function refreshView() {
    const namespace = namespaceNamed(state.view.ns);
    if (!namespace || document.hidden) {
      return;
    }
    if (namespace.window) {
      showTop();
    } else if (state.view.ids.length > 0) {
      lookUp();
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
      go({ ...state.view, range: $('range').value, from: null, to: null }, 'push');
    }
  });
  $('range-form').addEventListener('submit', event => {
    event.preventDefault();
    const from = new Date($('from').value + 'Z');
    const to = new Date($('to').value + 'Z');
    if (isNaN(from) || isNaN(to)) {
      $('detail-error').textContent = 'give both ends of the range';
      return;
    }
    go({ ...state.view, range: 'custom', from: iso(from), to: iso(to) }, 'push');
  });
  $('lookup').addEventListener('submit', event => {
    event.preventDefault();
    const ids = $('ids').value.split(',').map(id => id.trim()).filter(id => id.length > 0);
    go({ ...state.view, ids }, 'push');
  });
  window.addEventListener('popstate', () => {
    const view = viewOf(location.search);
    go({ ...view, ns: landingNamespace(view.ns) }, 'none');
  });
  window.addEventListener('resize', () => {
    if (state.chart) {
      state.chart.setSize({ width: $('chart').clientWidth || 320, height: 260 });
    }
  });

  window.dashboard = { state, select, refresh, go };
  refresh();
  setInterval(refresh, POLL_MS);
  setInterval(refreshView, VIEW_REFRESH_MS);
})();
