// The publish form: POST /state/<topic> or /events/<topic> and the answer shown.
import { $, channelURL } from './dom.js';
import { nameProblem, readTopic, rememberTopic } from './names.js';
import { listenTo } from './streams.js';
import { describeAnswer, readToken, tokenAccepted } from './token.js';

let publishSequence = 0;

function showResult(text, status, ok) {
  const el = $('publish-result');
  el.textContent = text;
  el.dataset.status = String(status);
  el.dataset.ok = String(ok);
}

export async function publish() {
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
      if (response.ok) tokenAccepted();
      showResult(response.status + ' ' + (text || response.statusText), response.status, response.ok);
    }
  } catch (error) {
    if (sequence !== publishSequence) return;
    showResult('network error: ' + (error && error.message ? error.message : String(error)), 'error', false);
  }
}
