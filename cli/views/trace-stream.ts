/**
 * `gantry build trace --follow`: stream a build's trace as it is written, over the daemon's live WebSocket
 * (GET /-/live/builds/:id/trace, see daemon/live/trace.ts), falling back to polling the API when the server has no
 * live endpoint or the connection drops. Resolves with the build's final status.
 */
import { StringDecoder } from 'node:string_decoder';
import type WebSocket from 'ws';

/** What followTrace needs: where to connect and how to poll as a fallback. */
export interface FollowOptions {
  /** Server base URL (http or https). */
  url: string;
  /** The authentication header (client.ts authHeaders). */
  headers: Record<string, string>;
  buildId: number;
  /** Trace text, in order (already decoded as UTF-8). */
  write(text: string): void;
  /** Status messages (stderr). */
  note(text: string): void;
  /** Poll: the build's status and its whole trace (fallback). */
  poll(): Promise<{ status: string; trace: string }>;
  pollIntervalMs?: number;
}

const FINAL = new Set(['success', 'failed', 'canceled', 'skipped']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The WebSocket URL of a build's live trace. */
export function liveTraceUrl(base: string, buildId: number): string {
  const u = new URL(base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/-/live/builds/${buildId}/trace`;
  return u.toString();
}

type LiveEnd = { kind: 'finished'; status: string } | { kind: 'unavailable' } | { kind: 'refused'; status: number; message: string } | { kind: 'dropped' };

/** One WebSocket session: writes the trace and ends with the final status, or says why it could not. */
async function live(o: FollowOptions, written: { chars: number }): Promise<LiveEnd> {
  // ws is loaded only by `build trace --follow` (a chunk of its own in the bundle).
  const { default: WebSocketClass } = await import('ws');
  return new Promise((resolve) => {
    const ws: WebSocket = new WebSocketClass(liveTraceUrl(o.url, o.buildId), { headers: o.headers });
    const decoder = new StringDecoder('utf8');
    let end: LiveEnd | null = null;
    const finish = (e: LiveEnd) => {
      if (!end) end = e;
    };
    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        let message = `HTTP ${status}`;
        try {
          message = (JSON.parse(body) as { message?: string }).message ?? message;
        } catch {
          /* not JSON */
        }
        req.destroy();
        resolve(status === 404 || status === 405 || status === 400 ? { kind: 'unavailable' } : { kind: 'refused', status, message });
      });
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        const text = decoder.write(data);
        written.chars += text.length;
        o.write(text);
        return;
      }
      let msg: { type?: string; status?: string };
      try {
        msg = JSON.parse(data.toString()) as typeof msg;
      } catch {
        return;
      }
      if (msg.type === 'reset') {
        o.note('\n[the trace was rewritten; showing it again]\n');
        written.chars = 0;
      } else if (msg.type === 'finished' && msg.status) {
        const rest = decoder.end();
        if (rest) o.write(rest);
        finish({ kind: 'finished', status: msg.status });
      }
    });
    ws.on('error', () => finish({ kind: 'dropped' }));
    ws.on('close', () => resolve(end ?? { kind: 'dropped' }));
  });
}

/** Follow the trace until the build finishes; returns its final status. Throws with the server's message when refused. */
export async function followTrace(o: FollowOptions): Promise<string> {
  const written = { chars: 0 };
  const end = await live(o, written);
  if (end.kind === 'finished') return end.status;
  if (end.kind === 'refused') throw Object.assign(new Error(end.message), { status: end.status });
  if (end.kind === 'dropped') o.note('\n[live connection lost; polling]\n');
  // Polling fallback: print what is new since the last look until the build is final.
  let printed = written.chars;
  let first = true;
  for (;;) {
    if (!first) await sleep(o.pollIntervalMs ?? 1000);
    first = false;
    const { status, trace } = await o.poll();
    if (trace.length > printed) {
      o.write(trace.slice(printed));
      printed = trace.length;
    }
    if (FINAL.has(status)) return status;
  }
}
