// What the page shows of received events: the state value, the events log and its markers.
import { $, byteSize, clockTime, formatBytes, setText } from './dom.js';

const LOG_LIMIT = 500;

// EventSource only delivers the event types it listens to, so say so where a value is awaited.
const EMPTY_STATE = 'no value yet (one published with an event name shows once that name is listed under Event names)';

let receivedThisTick = 0;
let eventsReceived = 0;

export function onStateEvent(stream, event) {
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

export function addMarker(kind, text, data) {
  const marker = document.createElement('li');
  marker.className = 'marker';
  marker.dataset.kind = kind;
  for (const key of Object.keys(data || {})) marker.dataset[key] = data[key];
  marker.textContent = text;
  addToLog(marker);
}

export function onEventsEvent(stream, event) {
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

export function clearState() {
  const value = $('state-value');
  value.textContent = EMPTY_STATE;
  value.dataset.empty = 'true';
  setText('state-id', '—');
  setText('state-event', '');
  setText('state-time', '');
  setText('state-size', '');
}

export function clearLog() {
  $('events-log').replaceChildren();
  eventsReceived = 0;
  setText('events-count', '0');
  const mark = $('gap-mark');
  mark.hidden = true;
  mark.textContent = '';
  delete mark.dataset.firstMissing;
}

/** Forget the last id seen on /events (a new stream starts its own sequence). */
export function resetEventsSequence() {
  lastEventsId = null;
}

/** Events received by both streams since the last call (the chart's rate). */
export function takeReceivedCount() {
  const count = receivedThisTick;
  receivedThisTick = 0;
  return count;
}
