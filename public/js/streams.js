// The page's two streams, and subscribing them to the topic typed in.
import { $, clockTime } from './dom.js';
import { readEventNames, readTopics, rememberTopic, splitTopics } from './names.js';
import { addMarker, clearLog, clearState, onEventsEvent, onStateEvent, resetEventsSequence } from './received.js';
import { Stream } from './stream.js';

export const streams = {
  state: new Stream('state', {
    event: onStateEvent,
    newTopic: clearState,
    started: () => {},
    reopened: () => {},
  }),
  events: new Stream('events', {
    event: onEventsEvent,
    newTopic: clearLog,
    started: resetEventsSequence,
    reopened: (stream) => {
      addMarker('reconnect', 'reconnected at ' + clockTime(new Date()) +
        (stream.lastId ? ' — resuming after #' + stream.lastId : ''), { after: stream.lastId });
    },
  }),
};

export function subscribe(channels) {
  const topics = readTopics();
  if (!topics) return;
  rememberTopic(topics.join(', '));
  for (const channel of channels) streams[channel].open(topics);
}

export function toggle(channel) {
  const stream = streams[channel];
  const topic = splitTopics($('topic').value).join(', ');
  if (stream.active && stream.topic === topic) {
    stream.close();
  } else {
    subscribe([channel]);
  }
}

/** A new topic applies to the open streams, or opens both when none is. */
export function applyTopic() {
  const open = Object.keys(streams).filter((c) => streams[c].active);
  subscribe(open.length ? open : ['state', 'events']);
}

/** Adds `name` to #event-names (and to the open streams' listeners) unless it is there. */
export function listenTo(name) {
  if (name === 'message' || name === 'gap' || readEventNames().includes(name)) return;
  const field = $('event-names');
  field.value = field.value.trim() ? field.value.trim().replace(/,$/, '') + ', ' + name : name;
  const names = readEventNames();
  streams.state.syncListeners(names);
  streams.events.syncListeners(names);
}
