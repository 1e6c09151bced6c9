/*
 * streams — the gateway's browser page. Plain JS modules, no dependencies, no build step.
 * This file wires the page up; js/ holds one part each: dom.js (helpers), names.js (topic
 * and event-name rules, recent topics), stream.js (one channel's EventSource), streams.js
 * (the two streams, subscribing), received.js (the state value and the events log),
 * publish.js (the publish form), token.js (the token and how a refusal is shown), chart.js
 * (the chart).
 *
 * Stable element ids (tests rely on them; keep them):
 *   #topic                 topic input, default "demo" (#topic-list: datalist of recent topics);
 *                          several topics separated by commas or spaces (1 to 32, distinct) are
 *                          followed in one stream per channel (/events?topic=a&topic=b, /state?topic=…)
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
 *                          to do), data-status="401|403"; hidden once a request is accepted again
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
 *   #state-box             the one topic's value and its details (hidden on several topics)
 *   #state-cards           on several topics (#state-box hidden), <ol> of one
 *                          <li class="state-card" data-topic="<topic>" data-empty="true|false"
 *                          data-id="<its id in its topic>"> per topic, in the order typed, each
 *                          with .topic-name .id .event .time .size .value (its current value)
 *   #state-event, #state-time, #state-size   its event name, time received, size in bytes
 *   #events-log            <ol>, newest first, at most 500 items; each received event is
 *                          <li class="entry" data-id="<id>" data-event="<name>"> with children
 *                          .id .event .time .size .data; a gap event (which has no id of its own)
 *                          is <li class="entry gap" data-id="" data-event="gap">. On several topics
 *                          each entry also has data-topic="<topic>" and data-cursor="<the stream's
 *                          cursor after it>" and a .topic child, data-id is the id in its topic,
 *                          .data the value from the JSON; skipped markers are per topic (data-topic).
 *                          Between entries, <li class="marker" data-kind="reconnect"> notes that the
 *                          stream was re-established (data-after="<id it resumed after>"), and
 *                          <li class="marker" data-kind="skipped" data-from="<id>" data-to="<id>">
 *                          that ids were skipped: events whose event type nobody listens to here
 *   #events-count          events received since subscribing
 *   #events-clear          clears the log and hides the gap mark
 *   Subscribing a channel to a different topic clears that channel's display (value, or log and gap mark).
 *   #gap-mark              shown when a `gap` event arrives; data-first-missing="<first lost id>"
 *                          (and data-topic on several topics)
 *   #publish-channel       select: "state" | "events"
 *   #publish-event, #publish-body, #publish-button
 *                          (with several topics typed in, publishing goes to the first)
 *                          (publishing with an event name also starts listening to that name)
 *   #publish-result        "<status> <response text>" e.g. `200 {"id":"3","subscribers":1}`;
 *                          data-status="<HTTP status>|pending|error", data-ok="true|false"
 *   #chart                 canvas: events/s received by this page, and sse_gateway_connections
 *   #rate-now, #connections-now, #metrics-status   the chart's latest values and /metrics trouble
 *
 * URL parameters: ?topic=<name>[,<name>…]&events=<names>&subscribe=state|events|both
 * Requests use relative URLs (state/…, events/…, metrics), so the page also works under a path prefix.
 */
import { $, showMessage } from './js/dom.js';
import { drawChart, tick } from './js/chart.js';
import { loadRecentTopics, readEventNames, renderRecentTopics } from './js/names.js';
import { publish } from './js/publish.js';
import { clearLog } from './js/received.js';
import { applyTopic, streams, subscribe, toggle } from './js/streams.js';
import { keepToken } from './js/token.js';

function start() {
  renderRecentTopics(loadRecentTopics());
  keepToken();
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
