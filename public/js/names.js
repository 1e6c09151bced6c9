// Topic and event names: the gateway's rules, the topic and event-name fields, recent topics.
import { $, showMessage } from './dom.js';

const RECENT_TOPICS_KEY = 'streams.recentTopics';

// The gateway's rules (API.md "Topics"): a name is 1 to 200 bytes; a topic is
// segments of A-Z a-z 0-9 . _ ~ - joined by '/', none empty, '.' or '..'; an
// event name is one such segment. Checked here so a bad name gets a clear
// message instead of a 400 (which the browser would also log as a console error).
const NAME_MAX_BYTES = 200;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** Why `name` is not a valid topic (or, with `single`, event name), or '' when it is. */
export function nameProblem(name, what, single) {
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

// Topics one stream may follow (API.md "Several topics in one stream").
const MAX_TOPICS = 32;

/** The topics typed in #topic (separated by commas or spaces), in order, unchecked. */
export function splitTopics(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** Why `topics` can't be one stream, or ''. */
function topicsProblem(topics) {
  if (!topics.length) return 'Enter a topic name, e.g. demo.';
  if (topics.length > MAX_TOPICS) return 'At most ' + MAX_TOPICS + ' topics in one stream.';
  if (new Set(topics).size !== topics.length) return 'A topic is named twice.';
  for (const topic of topics) {
    const problem = nameProblem(topic, 'topic', false);
    if (problem) return (topics.length > 1 ? JSON.stringify(topic) + ': ' : '') + problem[0].toUpperCase() + problem.slice(1) + '.';
  }
  return '';
}

/** The topics typed in (one, or several for one stream), or null (with a message) when unusable. */
export function readTopics() {
  const topics = splitTopics($('topic').value);
  const problem = topicsProblem(topics);
  showMessage('topic-error', problem);
  $('topic').setAttribute('aria-invalid', String(Boolean(problem)));
  if (problem) {
    $('topic').focus();
    return null;
  }
  return topics;
}

/** The valid names typed in #event-names; invalid ones are reported and left out. */
export function readEventNames() {
  const names = $('event-names').value.split(/[\s,]+/).filter(Boolean);
  const bad = names.filter((name) => nameProblem(name, 'event name', true));
  showMessage('event-names-error', bad.length
    ? 'Not listening to ' + bad.map((n) => JSON.stringify(n)).join(', ') +
      ': an event name may contain only A-Z a-z 0-9 . _ ~ -'
    : '');
  return names.filter((name) => !bad.includes(name));
}

export function loadRecentTopics() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_TOPICS_KEY) || '[]');
    return Array.isArray(list) ? list.filter((t) => typeof t === 'string') : [];
  } catch (_) {
    return [];
  }
}

export function rememberTopic(topic) {
  const list = [topic].concat(loadRecentTopics().filter((t) => t !== topic)).slice(0, 10);
  try {
    localStorage.setItem(RECENT_TOPICS_KEY, JSON.stringify(list));
  } catch (_) {
    // Storage may be disabled; the list is only a convenience.
  }
  renderRecentTopics(list);
}

export function renderRecentTopics(list) {
  const datalist = $('topic-list');
  datalist.replaceChildren();
  for (const topic of (list.includes('demo') ? list : list.concat('demo'))) {
    const option = document.createElement('option');
    option.value = topic;
    datalist.append(option);
  }
}
