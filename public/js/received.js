// What the page shows of received events: the state value, the events log and its markers.
import { $, byteSize, clockTime, formatBytes, setText } from './dom.js';

const LOG_LIMIT = 500;

// EventSource only delivers the event types it listens to, so say so where a value is awaited.
const EMPTY_STATE = 'no value yet (one published with an event name shows once that name is listed under Event names)';

let receivedThisTick = 0;
let eventsReceived = 0;

/** What an event of a several-topic stream carries: its JSON data line. */
function parseTopicEvent(event) {
  try {
    const value = JSON.parse(event.data);
    if (value && typeof value.topic === 'string' && typeof value.id === 'string') return value;
  } catch (_) {
    // Not JSON: shown as it came, without a topic.
  }
  return { topic: '', id: '', data: event.data };
}

/** The card of `topic` on a several-topic state stream, made if the topic is new to it. */
function stateCard(topic) {
  const cards = $('state-cards');
  for (const card of cards.children) if (card.dataset.topic === topic) return card;
  const card = document.createElement('li');
  card.className = 'state-card';
  card.dataset.topic = topic;
  card.dataset.empty = 'true';
  const meta = document.createElement('div');
  meta.className = 'state-meta';
  for (const [className, text] of [['topic-name', topic], ['id', 'id —'], ['event event-name', ''], ['time', ''], ['size', '']]) {
    const span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    meta.append(span);
  }
  const value = document.createElement('div');
  value.className = 'value';
  value.textContent = 'no value yet';
  card.append(meta, value);
  cards.append(card);
  return card;
}

/** On several topics: each topic's current value in its own card, in topic order. */
function showInCard(several, event) {
  const card = stateCard(several.topic);
  const data = several.data === undefined ? '' : several.data;
  card.dataset.empty = 'false';
  card.dataset.id = several.id;
  card.querySelector('.id').textContent = 'id ' + several.id;
  card.querySelector('.event').textContent = event.type === 'message' ? '' : 'event: ' + event.type;
  card.querySelector('.time').textContent = clockTime(new Date());
  card.querySelector('.size').textContent = formatBytes(byteSize(data));
  card.querySelector('.value').textContent = data;
}

export function onStateEvent(stream, event) {
  receivedThisTick += 1;
  if (event.type === 'gap') return; // /state never sends gaps; ignore one if it did
  if (stream.several) {
    showInCard(parseTopicEvent(event), event);
    return;
  }
  const value = $('state-value');
  const data = event.data;
  value.textContent = data;
  value.dataset.empty = 'false';
  setText('state-id', event.lastEventId || '—');
  setText('state-event', event.type === 'message' ? '' : 'event: ' + event.type);
  setText('state-time', clockTime(new Date()));
  setText('state-size', formatBytes(byteSize(data)));
}

// The id of the last event the events stream delivered in each topic (a number), absent
// right after subscribing or a gap event: ids are consecutive on /events, so a jump
// means events of a type this page doesn't listen to went by.
let lastEventsIds = new Map();

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
  // On several topics each event's data is JSON naming its topic and its id there; the
  // stream's own id (lastEventId) is then the cursor, its position in every topic.
  const several = stream.several ? parseTopicEvent(event) : null;
  const topic = several ? several.topic : '';
  const data = several ? (several.data === undefined ? '' : several.data) : event.data;
  // A gap event carries no id: the EventSource's lastEventId is still the one it resumed from.
  const id = isGap ? '' : (several ? several.id : event.lastEventId);
  const firstMissing = isGap ? (several ? several.id : event.data) : '';
  const number = /^\d+$/.test(id) ? Number(id) : null;
  const lastEventsId = lastEventsIds.has(topic) ? lastEventsIds.get(topic) : null;
  if (number !== null && lastEventsId !== null && number > lastEventsId + 1) {
    const from = lastEventsId + 1;
    const to = number - 1;
    addMarker('skipped', (from === to ? '#' + from + ' was' : '#' + from + '–#' + to + ' were') +
      ' not shown here — most likely events of a type this page does not listen to (add it under Event names)',
    Object.assign({ from: String(from), to: String(to) }, several ? { topic } : {}));
  }
  if (isGap || number === null) lastEventsIds.delete(topic);
  else lastEventsIds.set(topic, number);

  const entry = document.createElement('li');
  entry.className = isGap ? 'entry gap' : 'entry';
  entry.dataset.id = id;
  entry.dataset.event = event.type;
  if (several) {
    entry.dataset.topic = topic;
    entry.dataset.cursor = event.lastEventId;
  }
  const field = (className, text) => {
    const span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    entry.append(span);
  };
  if (several) field('topic', topic);
  field('id', id ? '#' + id : '#—');
  field('event', event.type);
  field('time', clockTime(new Date()));
  field('size', formatBytes(byteSize(isGap ? event.data : data)));
  const body = document.createElement('div');
  body.className = 'data';
  body.textContent = isGap ? 'gap: first missing id ' + firstMissing + (topic ? ' of ' + topic : '') : data;
  entry.append(body);
  addToLog(entry);

  if (event.type === 'gap') {
    const mark = $('gap-mark');
    mark.dataset.firstMissing = firstMissing;
    if (several) mark.dataset.topic = topic;
    mark.textContent = 'Gap: events ' + (topic ? 'of ' + topic + ' ' : '') + 'from id ' + firstMissing +
      ' on had left the replay window when this stream resumed — some events were lost.';
    mark.hidden = false;
  }
}

/** A new topic list: one topic shows in the state box, several in one card each (in topic order). */
export function clearState(topics) {
  const several = Array.isArray(topics) && topics.length > 1;
  const cards = $('state-cards');
  cards.replaceChildren();
  if (several) for (const topic of topics) stateCard(topic);
  cards.hidden = !several;
  $('state-box').hidden = several;
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
  delete mark.dataset.topic;
}

/** Forget the last id seen on /events (a new stream starts its own sequence). */
export function resetEventsSequence() {
  lastEventsIds = new Map();
}

/** Events received by both streams since the last call (the chart's rate). */
export function takeReceivedCount() {
  const count = receivedThisTick;
  receivedThisTick = 0;
  return count;
}
