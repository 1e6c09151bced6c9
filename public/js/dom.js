// Small DOM and formatting helpers every part of the page uses.

export const $ = (id) => document.getElementById(id);
const encoder = new TextEncoder();

/** `chat/room 1` → `chat/room%201`: each segment encoded, the slashes kept. */
export function encodeTopic(topic) {
  return topic.split('/').map(encodeURIComponent).join('/');
}

/**
 * The stream URL of `topics`: `events/<topic>` for one, and for several one stream
 * `events?topic=a&topic=b%2Fc` (API.md "Several topics in one stream").
 */
export function channelURL(channel, topics) {
  if (topics.length === 1) return channel + '/' + encodeTopic(topics[0]);
  return channel + '?' + new URLSearchParams(topics.map((t) => ['topic', t]));
}

export function pad(n, width) {
  return String(n).padStart(width || 2, '0');
}

export function clockTime(date) {
  return pad(date.getHours()) + ':' + pad(date.getMinutes()) + ':' + pad(date.getSeconds()) +
    '.' + pad(date.getMilliseconds(), 3);
}

export function byteSize(text) {
  return encoder.encode(text).length;
}

export function formatBytes(n) {
  return n === 1 ? '1 byte' : n + ' bytes';
}

export function setText(id, text) {
  $(id).textContent = text;
}

export function showMessage(id, text) {
  const el = $(id);
  el.textContent = text || '';
  el.hidden = !text;
}
