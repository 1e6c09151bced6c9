// The chart: events/s received by this page, and the gateway's open connections (/metrics).
import { $, setText, showMessage } from './dom.js';
import { takeReceivedCount } from './received.js';

const CHART_SECONDS = 60;

const samples = []; // { rate: number, connections: number|null }, oldest first
let lastTick = performance.now();

async function readConnections() {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 900);
  try {
    const response = await fetch('metrics', { cache: 'no-store', signal: abort.signal });
    if (!response.ok) {
      showMessage('metrics-status', '/metrics answered ' + response.status);
      return null;
    }
    const match = /^sse_gateway_connections(?:\{[^}]*\})?[ \t]+(\S+)/m.exec(await response.text());
    const value = match ? Number(match[1]) : NaN;
    if (!Number.isFinite(value)) {
      showMessage('metrics-status', '/metrics has no sse_gateway_connections');
      return null;
    }
    showMessage('metrics-status', '');
    return value;
  } catch (_) {
    showMessage('metrics-status', '/metrics unreachable');
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export async function tick() {
  const now = performance.now();
  const rate = takeReceivedCount() * 1000 / Math.max(now - lastTick, 1);
  lastTick = now;
  const connections = document.hidden ? null : await readConnections();
  samples.push({ rate: rate, connections: connections });
  if (samples.length > CHART_SECONDS) samples.shift();
  setText('rate-now', rate < 10 ? rate.toFixed(1) : String(Math.round(rate)));
  setText('connections-now', connections === null ? '—' : String(connections));
  drawChart();
  setTimeout(tick, Math.max(0, 1000 - (performance.now() - now)));
}

/** 1, 2, 5 × 10^k at or above `value` (at least 1), so the axis reads well. */
function niceCeiling(value) {
  if (!(value > 1)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (value <= step * power) return step * power;
  }
  return 10 * power;
}

export function drawChart() {
  const canvas = $('chart');
  const context = canvas.getContext('2d');
  if (!context) return;
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, width, height);

  const style = getComputedStyle(canvas);
  const color = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  const top = 18;
  const bottom = height - 4;
  const plotHeight = bottom - top;

  context.strokeStyle = color('--chart-grid', '#8884');
  context.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = Math.round(top + plotHeight * i / 4) + 0.5;
    context.beginPath();
    context.moveTo(0, y);
    context.lineTo(width, y);
    context.stroke();
  }

  const rateMax = niceCeiling(Math.max(0, ...samples.map((s) => s.rate)));
  const connMax = niceCeiling(Math.max(0, ...samples.map((s) => s.connections || 0)));
  const step = width / (CHART_SECONDS - 1);
  const offset = CHART_SECONDS - samples.length;
  const plot = (key, max, stroke) => {
    context.strokeStyle = stroke;
    context.lineWidth = 2;
    context.beginPath();
    let drawing = false;
    samples.forEach((sample, i) => {
      const value = sample[key];
      if (value === null) {
        drawing = false;
        return;
      }
      const x = (offset + i) * step;
      const y = bottom - plotHeight * Math.min(value / max, 1);
      if (drawing) context.lineTo(x, y); else context.moveTo(x, y);
      drawing = true;
    });
    context.stroke();
  };
  plot('connections', connMax, color('--chart-conns', '#d97706'));
  plot('rate', rateMax, color('--chart-rate', '#2563eb'));

  context.font = '12px system-ui, sans-serif';
  context.textBaseline = 'top';
  context.fillStyle = color('--chart-rate', '#2563eb');
  context.textAlign = 'left';
  context.fillText('max ' + rateMax + ' events/s', 2, 2);
  context.fillStyle = color('--chart-conns', '#d97706');
  context.textAlign = 'right';
  context.fillText('max ' + connMax + ' connections', width - 2, 2);
}
