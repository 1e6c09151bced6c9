// One channel's EventSource (/state/<topic> or /events/<topic>): status, reconnects, listeners.
import { $, setText, showMessage } from './dom.js';
import { readEventNames } from './names.js';
import { describeAnswer, shownPath, streamURL, tokenAccepted } from './token.js';

/** One channel's subscription: its EventSource, listeners, status and reconnect count. */
export class Stream {
  /**
   * hooks.event(stream, MessageEvent)  an event arrived
   * hooks.newTopic()                   forget what the previous topic showed
   * hooks.started(stream)              a new EventSource was opened (no Last-Event-ID yet)
   * hooks.reopened(stream)             the EventSource re-established a dropped stream
   */
  constructor(channel, hooks) {
    this.channel = channel;   // "state" | "events"
    this.hooks = hooks;
    this.topic = null;        // the topics last opened, joined by ', '
    this.several = false;     // several topics in one stream: each event's data is JSON naming its topic
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

  open(topics) {
    const topic = topics.join(', ');
    this.close();
    this.reconnects = 0;
    this.attempts = 0;
    this.everOpen = false;
    this.lastId = '';
    if (topic !== this.topic) this.hooks.newTopic(topics);
    this.topic = topic;
    this.several = topics.length > 1;
    const url = streamURL(this.channel, topics);
    const source = new EventSource(url);
    this.source = source;
    this.showStatus('connecting');
    this.showReconnects();
    this.showLastId('');
    this.showError(null, '');
    setText(this.channel + '-path', shownPath(this.channel, topics));
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
      tokenAccepted();
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

  /** #<channel>-error with the answer's status in data-status (none: a plain message). */
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
