/**
 * Wake-ups between the parts of Gantry that wait for a write (held runners, hook delivery workers, live trace
 * followers) and the transactions that make it: one channel name, a payload of text, a callback.
 *
 * - wakeAtCommit(tx, channel, payload), inside the writing transaction. On PostgreSQL `SELECT pg_notify(...)` on the
 *   transaction, which PostgreSQL delivers at the commit (never for a rollback) to every daemon's listeners, this
 *   one's included. On SQLite one process owns the file: the listeners on this connection (its localWakeUps) get it on
 *   the next turn of the event loop, after the commit (a transaction runs within one turn there).
 * - listenForWakeUps(data, channel, fn): until stop(), `fn` gets each payload sent on `channel`, and null when
 *   notifications may have been lost (PostgreSQL's listening connection broke and was made again by the layer,
 *   db/layer/postgres.ts: look again). A listener that cannot listen (the database refused) is told through `onError`
 *   and gets nothing: whoever uses it must not depend on a wake-up alone (the held runners' hold ends, the hook
 *   workers poll, the trace followers poll).
 *
 * A wake-up is a hint that something changed, never the change itself: the listener reads the database for what it
 * does.
 */
import type { Database, LocalWakeUps, Queries } from './types.js';

/** A wake-up's callback: the payload sent, or null for "anything may have changed". */
export type WakeUp = (payload: string | null) => void;

/** What listenForWakeUps returns: stop() ends the listening (also when it has not started yet) and resolves once done. */
export interface WakeUpListener {
  stop(): Promise<void>;
}

const call = (fn: WakeUp, payload: string | null) => {
  try {
    fn(payload);
  } catch {
    // a listener's own error must not keep the others from their wake-up
  }
};

/** Send `payload` on `channel` when `tx` commits (PostgreSQL: to every daemon; SQLite: to this process, next turn). */
export async function wakeAtCommit(tx: Queries, channel: string, payload = ''): Promise<void> {
  if (tx.dialect.name === 'postgres') {
    await tx.get('SELECT pg_notify(?, ?)', [channel, payload]);
    return;
  }
  const local = tx.localWakeUps;
  if (!local?.get(channel)?.size) return;
  setImmediate(() => {
    for (const fn of [...(local.get(channel) ?? [])]) call(fn, payload);
  });
}

/** Call `fn` with every wake-up sent on `channel` until stop(); `onError` hears why listening could not start. */
export function listenForWakeUps(data: Database, channel: string, fn: WakeUp, onError: (e: unknown) => void = () => undefined): WakeUpListener {
  if (!data.listen) {
    const local: LocalWakeUps = data.localWakeUps ?? new Map(); // (a layer with neither: nobody sends)
    let set = local.get(channel);
    if (!set) local.set(channel, (set = new Set()));
    const own: WakeUp = (payload) => fn(payload); // its own entry, so the same fn may listen twice and stop once
    set.add(own);
    return {
      stop: async () => {
        const current = local.get(channel);
        if (current?.delete(own) && !current.size) local.delete(channel);
      },
    };
  }
  let stopped = false;
  const listening = data.listen(channel, (payload) => {
    if (!stopped) fn(payload);
  }).catch((e: unknown) => {
    if (!stopped) onError(e);
    return null;
  });
  return {
    stop: async () => {
      stopped = true;
      const stop = await listening; // also when stop() comes while LISTEN is on its way
      await stop?.().catch(() => undefined);
    },
  };
}
