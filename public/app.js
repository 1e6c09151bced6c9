/*
 * streams — the gateway's browser page. Plain JS, no dependencies, no build step.
 *
 * Stable element ids (tests rely on them; keep them):
 *   #topic                 topic input, default "demo" (#topic-list: datalist of recent topics)
 *   #event-names           extra SSE event types to listen for, comma or space separated;
 *                          "message" and "gap" are always listened to
 *   #subscribe-state       toggles the /state/<topic> EventSource (aria-pressed="true" while on)
 *   #subscribe-events      toggles the /events/<topic> EventSource (aria-pressed="true" while on)
 *   #subscribe-both        turns both on for the current topic
 *   #unsubscribe           closes both
 *   #token                 the token (password field), kept in sessionStorage (this tab only): sent as
 *                          ?access_token= when subscribing (EventSource cannot send headers) and as
 *                          Authorization: Bearer when publishing; left out when empty
 *   #token-error           the gateway's last refusal of the token (401 or 403, its reason and what
 *                          to do), data-status="401|403"; hidden when the last answer was not one
 *   #topic-error           why the topic can't be used (hidden when fine); topics and event
 *                          names are checked here with the gateway's rules, so an invalid one
 *                          never reaches the network (and never puts a 400 in the console)
 *   #event-names-error     which names in #event-names are invalid (and not listened to)
 *   #state-status, #events-status
 *                          connection status: idle | connecting | open | reconnecting | closed
 *                          (textContent and data-state); while connecting or reconnecting,
 *                          data-attempts (and the title) count the failed attempts so far
 *   #state-reconnects, #events-reconnects
 *                          times the stream was re-established after a drop since subscribing
 *                          (also data-count); failed attempts in between don't count
 *   #state-last-id, #events-last-id
 *                          the id the stream resumes from (EventSource lastEventId), "—" when none
 *   #state-error, #events-error
 *                          why a stream closed for good (the server's status and text, e.g.
 *                          "401 Unauthorized — invalid token: …"), data-status; hidden otherwise
 *   #state-value           current state value, lines kept (data-empty="true" before the first one)
 *   #state-id              id of the current state value
 *   #state-event, #state-time, #state-size   its event name, time received, size in bytes
 *   #events-log            <ol>, newest first, at most 500 items; each received event is
 *                          <li class="entry" data-id="<id>" data-event="<name>"> with children
 *                          .id .event .time .size .data; a gap event (which has no id of its own)
 *                          is <li class="entry gap" data-id="" data-event="gap">.
 *                          Between entries, <li class="marker" data-kind="reconnect"> notes that the
 *                          stream was re-established (data-after="<id it resumed after>"), and
 *                          <li class="marker" data-kind="skipped" data-from="<id>" data-to="<id>">
 *                          that ids were skipped: events whose event type nobody listens to here
 *   #events-count          events received since subscribing
 *   #events-clear          clears the log and hides the gap mark
 *   Subscribing a channel to a different topic clears that channel's display (value, or log and gap mark).
 *   #gap-mark              shown when a `gap` event arrives; data-first-missing="<first lost id>"
 *   #publish-channel       select: "state" | "events"
 *   #publish-event, #publish-body, #publish-button
 *                          (publishing with an event name also starts listening to that name)
 *   #publish-result        "<status> <response text>" e.g. `200 {"id":"3","subscribers":1}`;
 *                          data-status="<HTTP status>|pending|error", data-ok="true|false"
 *   #chart                 canvas: events/s received by this page, and sse_gateway_connections
 *   #rate-now, #connections-now, #metrics-status   the chart's latest values and /metrics trouble
 *
 * URL parameters: ?topic=<name>&events=<names>&subscribe=state|events|both
 * Requests use relative URLs (state/…, events/…, metrics), so the page also works under a path prefix.
 */
(function () {
  'use strict';

  const LOG_LIMIT = 500;
  const CHART_SECONDS = 60;
  const RECENT_TOPICS_KEY = 'streams.recentTopics';
  const TOKEN_KEY = 'streams.token'; // sessionStorage: this tab only, gone when it closes

  const $ = (id) => document.getElementById(id);
  const encoder = new TextEncoder();

  /** `chat/room 1` → `chat/room%201`: each segment encoded, the slashes kept. */
  function encodeTopic(topic) {
    return topic.split('/').map(encodeURIComponent).join('/');
  }

  function channelURL(channel, topic) {
    return channel + '/' + encodeTopic(topic);
  }

  // ---- the token ----------------------------------------------------------

  function readToken() {
    return $('token').value.trim();
  }

  function loadToken() {
    try {
      $('token').value = sessionStorage.getItem(TOKEN_KEY) || '';
    } catch (_) {
      // Storage may be disabled: the token then lives in the field only.
    }
  }

  function saveToken() {
    try {
      if (readToken()) sessionStorage.setItem(TOKEN_KEY, readToken());
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) {
      // As above.
    }
  }

  /** A stream's URL: the token rides in the query, as EventSource cannot send headers. */
  function streamURL(channel, topic) {
    const token = readToken();
    return channelURL(channel, topic) + (token ? '?access_token=' + encodeURIComponent(token) : '');
  }

  /**
   * The gateway's answer as one line, with what a 401 or 403 means here; the token
   * field is marked and #token-error repeats it, so a refused token is hard to miss.
   */
  function describeAnswer(status, statusText, text, action) {
    const line = status + ' ' + (statusText || '') + (text ? ' — ' + text : '');
    if (status === 401) {
      showTokenProblem(status, line + (readToken()
        ? '. Paste a valid token above and ' + action + ' again.'
        : '. This gateway needs a token: paste one above.'));
    } else if (status === 403) {
      showTokenProblem(status, line + '. The token is valid but does not grant this topic.');
    }
    return line;
  }

  function showTokenProblem(status, text) {
    showMessage('token-error', text);
    $('token-error').dataset.status = String(status);
    $('token').setAttribute('aria-invalid', 'true');
  }

  function clearTokenProblem() {
    showMessage('token-error', '');
    delete $('token-error').dataset.status;
    $('token').setAttribute('aria-invalid', 'false');
  }

  function pad(n, width) {
    return String(n).padStart(width || 2, '0');
  }

  function clockTime(date) {
    return pad(date.getHours()) + ':' + pad(date.getMinutes()) + ':' + pad(date.getSeconds()) +
      '.' + pad(date.getMilliseconds(), 3);
  }

  function byteSize(text) {
    return encoder.encode(text).length;
  }

  function formatBytes(n) {
    return n === 1 ? '1 byte' : n + ' bytes';
  }

  function setText(id, text) {
    $(id).textContent = text;
  }

  function showMessage(id, text) {
    const el = $(id);
    el.textContent = text || '';
    el.hidden = !text;
  }

  // ---- topic and event names ----------------------------------------------

  // The gateway's rules (API.md "Topics"): a name is 1 to 200 bytes; a topic is
  // segments of A-Z a-z 0-9 . _ ~ - joined by '/', none empty, '.' or '..'; an
  // event name is one such segment. Checked here so a bad name gets a clear
  // message instead of a 400 (which the browser would also log as a console error).
  const NAME_MAX_BYTES = 200;
  const SEGMENT = /^[A-Za-z0-9._~-]+$/;

  /** Why `name` is not a valid topic (or, with `single`, event name), or '' when it is. */
  function nameProblem(name, what, single) {
    if (!name) return what + ' is empty';
    if (name.length > NAME_MAX_BYTES) return what + ' is longer than ' + NAME_MAX_BYTES + ' bytes';
    const segments = single ? [name] : name.split('/');
    for (const segment of segments) {
      if (!segment) return what + " has an empty segment (leading, trailing or double '/')";
      if (!SEGMENT.test(segment)) {
        return what + ' may contain only A-Z a-z 0-9 . _ ~ -' + (single ? '' : ' and /');
      }
      if (segment === '.' || segment === '..') return what + " has a '.' or '..' segment";
    }
    return '';
  }

  /** The trimmed topic, or null (with a message) when it is empty or invalid. */
  function readTopic() {
    const topic = $('topic').value.trim();
    const problem = topic ? nameProblem(topic, 'topic', false) : 'Enter a topic name, e.g. demo.';
    showMessage('topic-error', problem ? problem[0].toUpperCase() + problem.slice(1) + '.' : '');
    $('topic').setAttribute('aria-invalid', String(Boolean(problem)));
    if (problem) {
      $('topic').focus();
      return null;
    }
    return topic;
  }

  /** The valid names typed in #event-names; invalid ones are reported and left out. */
  function readEventNames() {
    const names = $('event-names').value.split(/[\s,]+/).filter(Boolean);
    const bad = names.filter((name) => nameProblem(name, 'event name', true));
    showMessage('event-names-error', bad.length
      ? 'Not listening to ' + bad.map((n) => JSON.stringify(n)).join(', ') +
        ': an event name may contain only A-Z a-z 0-9 . _ ~ -'
      : '');
    return names.filter((name) => !bad.includes(name));
  }

  /** Adds `name` to #event-names (and to the open streams' listeners) unless it is there. */
  function listenTo(name) {
    if (name === 'message' || name === 'gap' || readEventNames().includes(name)) return;
    const field = $('event-names');
    field.value = field.value.trim() ? field.value.trim().replace(/,$/, '') + ', ' + name : name;
    const names = readEventNames();
    streams.state.syncListeners(names);
    streams.events.syncListeners(names);
  }

  function loadRecentTopics() {
    try {
      const list = JSON.parse(localStorage.getItem(RECENT_TOPICS_KEY) || '[]');
      return Array.isArray(list) ? list.filter((t) => typeof t === 'string') : [];
    } catch (_) {
      return [];
    }
  }

  function rememberTopic(topic) {
    const list = [topic].concat(loadRecentTopics().filter((t) => t !== topic)).slice(0, 10);
    try {
      localStorage.setItem(RECENT_TOPICS_KEY, JSON.stringify(list));
    } catch (_) {
      // Storage may be disabled; the list is only a convenience.
    }
    renderRecentTopics(list);
  }

  function renderRecentTopics(list) {
    const datalist = $('topic-list');
    datalist.replaceChildren();
    for (const topic of (list.includes('demo') ? list : list.concat('demo'))) {
      const option = document.createElement('option');
      option.value = topic;
      datalist.append(option);
    }
  }

  // ---- one EventSource per channel ----------------------------------------

  /** One channel's subscription: its EventSource, listeners, status and reconnect count. */
  class Stream {
    /**
     * hooks.event(stream, MessageEvent)  an event arrived
     * hooks.newTopic()                   forget what the previous topic showed
     * hooks.started(stream)              a new EventSource was opened (no Last-Event-ID yet)
     * hooks.reopened(stream)             the EventSource re-established a dropped stream
     */
    constructor(channel, hooks) {
      this.channel = channel;   // "state" | "events"
      this.hooks = hooks;
      this.topic = null;        // the topic last opened
      this.source = null;       // the live EventSource, or null when idle/closed
      this.listeners = new Map(); // event name -> handler registered on `source`
      this.reconnects = 0;      // drops after which the stream was re-established
      this.status = 'idle';     // what #<channel>-status shows
      this.attempts = 0;        // failed attempts since the stream was last open
      this.everOpen = false;    // the current EventSource has been open at least once
      this.lastId = '';         // the id the EventSource resumes from (its last event id)
      this.button = $('subscribe-' + channel);
    }

    get active() {
      return this.source !== null;
    }

    open(topic) {
      this.close();
      this.reconnects = 0;
      this.attempts = 0;
      this.everOpen = false;
      this.lastId = '';
      if (topic !== this.topic) this.hooks.newTopic();
      this.topic = topic;
      const url = streamURL(this.channel, topic);
      const source = new EventSource(url);
      this.source = source;
      this.showStatus('connecting');
      this.showReconnects();
      this.showLastId('');
      this.showError(null, '');
      // The path without the token: it is a secret, not something to show.
      setText(this.channel + '-path', '/' + channelURL(this.channel, topic) + (readToken() ? '?access_token=…' : ''));
      this.button.setAttribute('aria-pressed', 'true');
      this.hooks.started(this);

      source.addEventListener('open', () => {
        if (this.source !== source) return;
        this.attempts = 0;
        if (this.everOpen) {
          // Re-established after a drop (the browser sent Last-Event-ID by itself).
          this.reconnects += 1;
          this.showReconnects();
          this.hooks.reopened(this);
        }
        this.everOpen = true;
        this.showStatus('open');
        if ($('token-error').dataset.status) clearTokenProblem();
      });
      source.addEventListener('error', () => {
        if (this.source !== source) return;
        if (source.readyState === EventSource.CONNECTING) {
          // The stream dropped (or an attempt failed); the browser retries by itself
          // after the server's retry: delay. Only a successful re-open counts as a reconnect.
          if (this.status !== 'open') this.attempts += 1;
          this.showStatus(this.everOpen ? 'reconnecting' : 'connecting');
        } else if (source.readyState === EventSource.CLOSED) {
          // The browser gave up (a non-200 answer or a wrong content type).
          this.source = null;
          this.listeners.clear();
          this.showStatus('closed');
          this.button.setAttribute('aria-pressed', 'false');
          this.explainClose(url);
        }
      });
      this.syncListeners(readEventNames());
    }

    close() {
      if (this.source) this.source.close();
      this.source = null;
      this.listeners.clear();
      this.showStatus('idle');
      this.button.setAttribute('aria-pressed', 'false');
    }

    /** Listens to `message`, `gap` and every name given, and to nothing else. */
    syncListeners(names) {
      if (!this.source) return;
      const wanted = new Set(['message', 'gap'].concat(names));
      for (const [name, handler] of this.listeners) {
        if (!wanted.has(name)) {
          this.source.removeEventListener(name, handler);
          this.listeners.delete(name);
        }
      }
      for (const name of wanted) {
        if (this.listeners.has(name)) continue;
        const source = this.source;
        const handler = (event) => {
          if (this.source !== source) return;
          this.showLastId(event.lastEventId);
          this.hooks.event(this, event);
        };
        source.addEventListener(name, handler);
        this.listeners.set(name, handler);
      }
    }

    /**
     * EventSource hides why it closed (a 401 when a token expired and the browser
     * reconnected, a 403, a 503); ask once more with fetch to show the server's answer.
     */
    explainClose(url) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), 5000);
      fetch(url, { headers: { Accept: 'text/event-stream' }, cache: 'no-store', signal: abort.signal })
        .then((response) => {
          if (response.ok) {
            abort.abort();
            this.showError(null, 'The stream closed. Subscribe again to retry.');
            return null;
          }
          return response.text().then((text) => {
            this.showError(response.status,
              describeAnswer(response.status, response.statusText, text.trim(), 'subscribe'));
          });
        })
        .catch(() => this.showError(null, 'The stream closed and the gateway could not be reached.'))
        .finally(() => clearTimeout(timer));
    }

    showError(status, text) {
      const el = $(this.channel + '-error');
      showMessage(this.channel + '-error', text);
      if (status) el.dataset.status = String(status);
      else delete el.dataset.status;
    }

    showStatus(state) {
      this.status = state;
      const el = $(this.channel + '-status');
      el.textContent = state;
      el.dataset.state = state;
      const retrying = (state === 'connecting' || state === 'reconnecting') && this.attempts > 0;
      el.dataset.attempts = String(retrying ? this.attempts : 0);
      el.title = retrying
        ? this.attempts + (this.attempts === 1 ? ' failed attempt' : ' failed attempts') + ' so far; the browser keeps retrying'
        : '';
    }

    showReconnects() {
      const el = $(this.channel + '-reconnects');
      el.textContent = String(this.reconnects);
      el.dataset.count = String(this.reconnects);
    }

    showLastId(id) {
      this.lastId = id || '';
      setText(this.channel + '-last-id', id || '—');
    }
  }

  // ---- received events ----------------------------------------------------

  // EventSource only delivers the event types it listens to, so say so where a value is awaited.
  const EMPTY_STATE = 'no value yet (one published with an event name shows once that name is listed under Event names)';

  let receivedThisTick = 0;
  let eventsReceived = 0;

  function onStateEvent(stream, event) {
    receivedThisTick += 1;
    if (event.type === 'gap') return; // /state never sends gaps; ignore one if it did
    const value = $('state-value');
    value.textContent = event.data;
    value.dataset.empty = 'false';
    setText('state-id', event.lastEventId || '—');
    setText('state-event', event.type === 'message' ? '' : 'event: ' + event.type);
    setText('state-time', clockTime(new Date()));
    setText('state-size', formatBytes(byteSize(event.data)));
  }

  // The id of the last event the events stream delivered (a number), or null right after
  // subscribing or a gap event: ids are consecutive on /events, so a jump means events of
  // a type this page doesn't listen to went by.
  let lastEventsId = null;

  function addToLog(item) {
    const log = $('events-log');
    log.prepend(item);
    while (log.childElementCount > LOG_LIMIT) log.lastElementChild.remove();
  }

  function addMarker(kind, text, data) {
    const marker = document.createElement('li');
    marker.className = 'marker';
    marker.dataset.kind = kind;
    for (const key of Object.keys(data || {})) marker.dataset[key] = data[key];
    marker.textContent = text;
    addToLog(marker);
  }

  function onEventsEvent(stream, event) {
    receivedThisTick += 1;
    eventsReceived += 1;
    setText('events-count', String(eventsReceived));

    const isGap = event.type === 'gap';
    // A gap event carries no id: the EventSource's lastEventId is still the one it resumed from.
    const id = isGap ? '' : event.lastEventId;
    const number = /^\d+$/.test(id) ? Number(id) : null;
    if (number !== null && lastEventsId !== null && number > lastEventsId + 1) {
      const from = lastEventsId + 1;
      const to = number - 1;
      addMarker('skipped', (from === to ? '#' + from + ' was' : '#' + from + '–#' + to + ' were') +
        ' not shown here — most likely events of a type this page does not listen to (add it under Event names)',
      { from: String(from), to: String(to) });
    }
    lastEventsId = isGap ? null : number;

    const entry = document.createElement('li');
    entry.className = isGap ? 'entry gap' : 'entry';
    entry.dataset.id = id;
    entry.dataset.event = event.type;
    const field = (className, text) => {
      const span = document.createElement('span');
      span.className = className;
      span.textContent = text;
      entry.append(span);
    };
    field('id', id ? '#' + id : '#—');
    field('event', event.type);
    field('time', clockTime(new Date()));
    field('size', formatBytes(byteSize(event.data)));
    const data = document.createElement('div');
    data.className = 'data';
    data.textContent = isGap ? 'gap: first missing id ' + event.data : event.data;
    entry.append(data);
    addToLog(entry);

    if (event.type === 'gap') {
      const mark = $('gap-mark');
      mark.dataset.firstMissing = event.data;
      mark.textContent = 'Gap: events from id ' + event.data +
        ' on had left the replay window when this stream resumed — some events were lost.';
      mark.hidden = false;
    }
  }

  function clearState() {
    const value = $('state-value');
    value.textContent = EMPTY_STATE;
    value.dataset.empty = 'true';
    setText('state-id', '—');
    setText('state-event', '');
    setText('state-time', '');
    setText('state-size', '');
  }

  function clearLog() {
    $('events-log').replaceChildren();
    eventsReceived = 0;
    setText('events-count', '0');
    const mark = $('gap-mark');
    mark.hidden = true;
    mark.textContent = '';
    delete mark.dataset.firstMissing;
  }

  const streams = {
    state: new Stream('state', {
      event: onStateEvent,
      newTopic: clearState,
      started: () => {},
      reopened: () => {},
    }),
    events: new Stream('events', {
      event: onEventsEvent,
      newTopic: clearLog,
      started: () => { lastEventsId = null; },
      reopened: (stream) => {
        addMarker('reconnect', 'reconnected at ' + clockTime(new Date()) +
          (stream.lastId ? ' — resuming after #' + stream.lastId : ''), { after: stream.lastId });
      },
    }),
  };

  function subscribe(channels) {
    const topic = readTopic();
    if (!topic) return;
    rememberTopic(topic);
    for (const channel of channels) streams[channel].open(topic);
  }

  function toggle(channel) {
    const stream = streams[channel];
    const topic = $('topic').value.trim();
    if (stream.active && stream.topic === topic) {
      stream.close();
    } else {
      subscribe([channel]);
    }
  }

  /** A new topic applies to the open streams, or opens both when none is. */
  function applyTopic() {
    const open = Object.keys(streams).filter((c) => streams[c].active);
    subscribe(open.length ? open : ['state', 'events']);
  }

  // ---- publishing ---------------------------------------------------------

  let publishSequence = 0;

  function showResult(text, status, ok) {
    const el = $('publish-result');
    el.textContent = text;
    el.dataset.status = String(status);
    el.dataset.ok = String(ok);
  }

  async function publish() {
    const topic = readTopic();
    if (!topic) return;
    rememberTopic(topic);
    const channel = $('publish-channel').value;
    const name = $('publish-event').value.trim();
    const problem = name ? nameProblem(name, 'event name', true) : '';
    $('publish-event').setAttribute('aria-invalid', String(Boolean(problem)));
    if (problem) {
      showResult('not sent: ' + problem, 'error', false);
      $('publish-event').focus();
      return;
    }
    // Show what this page publishes: an event type nobody listens to would not appear.
    if (name) listenTo(name);
    const token = readToken();
    const url = channelURL(channel, topic) + (name ? '?event=' + encodeURIComponent(name) : '');
    const headers = { 'Content-Type': 'text/plain; charset=utf-8' };
    if (token) headers.Authorization = 'Bearer ' + token;

    const sequence = ++publishSequence;
    showResult('publishing…', 'pending', false);
    try {
      const response = await fetch(url, {
        method: 'POST', headers: headers, body: $('publish-body').value, cache: 'no-store',
      });
      const text = (await response.text()).trim();
      if (sequence !== publishSequence) return; // a later publish owns the result line
      if (response.status === 401 || response.status === 403) {
        showResult(describeAnswer(response.status, response.statusText, text, 'publish'), response.status, false);
      } else {
        if (response.ok && $('token-error').dataset.status) clearTokenProblem();
        showResult(response.status + ' ' + (text || response.statusText), response.status, response.ok);
      }
    } catch (error) {
      if (sequence !== publishSequence) return;
      showResult('network error: ' + (error && error.message ? error.message : String(error)), 'error', false);
    }
  }

  // ---- chart: events/s here and the gateway's open connections -------------

  const samples = []; // { rate: number, connections: number|null }, oldest first
  let lastTick = performance.now();

  async function readConnections() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 900);
    try {
      const response = await fetch('metrics', { cache: 'no-store', signal: abort.signal });
      if (!response.ok) {
        showMessage('metrics-status', '/metrics answered ' + response.status);
        return null;
      }
      const match = /^sse_gateway_connections(?:\{[^}]*\})?[ \t]+(\S+)/m.exec(await response.text());
      const value = match ? Number(match[1]) : NaN;
      if (!Number.isFinite(value)) {
        showMessage('metrics-status', '/metrics has no sse_gateway_connections');
        return null;
      }
      showMessage('metrics-status', '');
      return value;
    } catch (_) {
      showMessage('metrics-status', '/metrics unreachable');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  async function tick() {
    const now = performance.now();
    const rate = receivedThisTick * 1000 / Math.max(now - lastTick, 1);
    receivedThisTick = 0;
    lastTick = now;
    const connections = document.hidden ? null : await readConnections();
    samples.push({ rate: rate, connections: connections });
    if (samples.length > CHART_SECONDS) samples.shift();
    setText('rate-now', rate < 10 ? rate.toFixed(1) : String(Math.round(rate)));
    setText('connections-now', connections === null ? '—' : String(connections));
    drawChart();
    setTimeout(tick, Math.max(0, 1000 - (performance.now() - now)));
  }

  /** 1, 2, 5 × 10^k at or above `value` (at least 1), so the axis reads well. */
  function niceCeiling(value) {
    if (!(value > 1)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(value)));
    for (const step of [1, 2, 5, 10]) {
      if (value <= step * power) return step * power;
    }
    return 10 * power;
  }

  function drawChart() {
    const canvas = $('chart');
    const context = canvas.getContext('2d');
    if (!context) return;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) return;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);

    const style = getComputedStyle(canvas);
    const color = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    const top = 18;
    const bottom = height - 4;
    const plotHeight = bottom - top;

    context.strokeStyle = color('--chart-grid', '#8884');
    context.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(top + plotHeight * i / 4) + 0.5;
      context.beginPath();
      context.moveTo(0, y);
      context.lineTo(width, y);
      context.stroke();
    }

    const rateMax = niceCeiling(Math.max(0, ...samples.map((s) => s.rate)));
    const connMax = niceCeiling(Math.max(0, ...samples.map((s) => s.connections || 0)));
    const step = width / (CHART_SECONDS - 1);
    const offset = CHART_SECONDS - samples.length;
    const plot = (key, max, stroke) => {
      context.strokeStyle = stroke;
      context.lineWidth = 2;
      context.beginPath();
      let drawing = false;
      samples.forEach((sample, i) => {
        const value = sample[key];
        if (value === null) {
          drawing = false;
          return;
        }
        const x = (offset + i) * step;
        const y = bottom - plotHeight * Math.min(value / max, 1);
        if (drawing) context.lineTo(x, y); else context.moveTo(x, y);
        drawing = true;
      });
      context.stroke();
    };
    plot('connections', connMax, color('--chart-conns', '#d97706'));
    plot('rate', rateMax, color('--chart-rate', '#2563eb'));

    context.font = '12px system-ui, sans-serif';
    context.textBaseline = 'top';
    context.fillStyle = color('--chart-rate', '#2563eb');
    context.textAlign = 'left';
    context.fillText('max ' + rateMax + ' events/s', 2, 2);
    context.fillStyle = color('--chart-conns', '#d97706');
    context.textAlign = 'right';
    context.fillText('max ' + connMax + ' connections', width - 2, 2);
  }

  // ---- wiring ---------------------------------------------------------------

  function start() {
    renderRecentTopics(loadRecentTopics());
    loadToken();
    $('token').addEventListener('change', saveToken);
    const params = new URLSearchParams(location.search);
    if (params.get('topic')) $('topic').value = params.get('topic');
    if (params.get('events')) $('event-names').value = params.get('events');

    if (typeof EventSource === 'undefined') {
      showMessage('topic-error', 'This browser has no EventSource; subscriptions are unavailable.');
      $('subscribe-state').disabled = true;
      $('subscribe-events').disabled = true;
      $('subscribe-both').disabled = true;
    } else {
      $('subscribe-state').addEventListener('click', () => toggle('state'));
      $('subscribe-events').addEventListener('click', () => toggle('events'));
      $('subscribe-both').addEventListener('click', () => subscribe(['state', 'events']));
      $('unsubscribe').addEventListener('click', () => {
        streams.state.close();
        streams.events.close();
      });
      // Two text fields and no submit button: the browser won't submit on Enter, so do it here.
      $('subscribe-form').addEventListener('submit', (event) => event.preventDefault());
      $('subscribe-form').addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && !event.isComposing) {
          event.preventDefault();
          applyTopic();
        }
      });
      $('event-names').addEventListener('change', () => {
        const names = readEventNames();
        streams.state.syncListeners(names);
        streams.events.syncListeners(names);
      });
    }
    $('events-clear').addEventListener('click', clearLog);

    const form = $('publish-form');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      publish();
    });
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        publish();
      }
    });

    window.addEventListener('resize', drawChart);
    drawChart();
    setTimeout(tick, 1000);

    const wanted = params.get('subscribe');
    if (wanted === 'both') subscribe(['state', 'events']);
    else if (wanted === 'state' || wanted === 'events') subscribe([wanted]);
  }

  start();
})();
