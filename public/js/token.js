// The token (#token): kept in this tab only, sent as ?access_token= when subscribing
// (EventSource cannot send headers) and as Authorization: Bearer when publishing; and
// a 401 or 403 from the gateway shown with what it means.
import { $, channelURL, showMessage } from './dom.js';

const TOKEN_KEY = 'streams.token'; // sessionStorage: this tab only, gone when it closes

export function readToken() {
  return $('token').value.trim();
}

/** Fills #token from this tab's storage and keeps storing what is typed. */
export function keepToken() {
  try {
    $('token').value = sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (_) {
    // Storage may be disabled: the token then lives in the field only.
  }
  $('token').addEventListener('change', () => {
    try {
      if (readToken()) sessionStorage.setItem(TOKEN_KEY, readToken());
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) {
      // As above.
    }
  });
}

/** A stream's URL for `topics` (one, or several in one stream), with the token in the query when there is one. */
export function streamURL(channel, topics) {
  const token = readToken();
  const url = channelURL(channel, topics);
  return url + (token ? (url.includes('?') ? '&' : '?') + 'access_token=' + encodeURIComponent(token) : '');
}

/** The path a stream shows: the token is a secret, not something to display. */
export function shownPath(channel, topics) {
  const url = channelURL(channel, topics);
  return '/' + url + (readToken() ? (url.includes('?') ? '&' : '?') + 'access_token=…' : '');
}

/** Reason phrases of the gateway's refusals: HTTP/2 has none (`statusText` is empty). */
const REASONS = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 411: 'Length Required', 413: 'Content Too Large', 414: 'URI Too Long',
  503: 'Service Unavailable',
};

/**
 * The gateway's answer as one line, with what a 401 or 403 means here; the token
 * field is marked and #token-error repeats it, so a refused token is hard to miss.
 */
export function describeAnswer(status, statusText, text, action) {
  const line = status + ' ' + (statusText || REASONS[status] || '') + (text ? ' — ' + text : '');
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

/** Clears a shown refusal once the gateway accepted a request again. */
export function tokenAccepted() {
  if (!$('token-error').dataset.status) return;
  showMessage('token-error', '');
  delete $('token-error').dataset.status;
  $('token').setAttribute('aria-invalid', 'false');
}
