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

/** The trimmed topic, or null (with a message) when it is empty or invalid. */
export function readTopic() {
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
