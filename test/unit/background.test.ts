/** The daemon's background jobs: one list in main.ts, each job exactly once, checked before anything starts. */
import { describe, expect, it } from 'vitest';
import { checkWorkers, type BackgroundWorker } from '../../daemon/background.js';
import { BACKGROUND_WORKERS } from '../../daemon/main.js';

const worker = (name: string): BackgroundWorker => ({ name, start: () => undefined, stop: () => undefined });

describe('background workers', () => {
  it('main.ts lists every job once', () => {
    expect(BACKGROUND_WORKERS.map((w) => w.name).sort()).toEqual(
      ['artifact expiry', 'hook deliveries', 'merge lock repair', 'sign-in throttle sweep', 'stuck builds'],
    );
    expect(() => checkWorkers(BACKGROUND_WORKERS)).not.toThrow();
  });

  it('refuses a job listed twice, by name or as the same worker', () => {
    const a = worker('a');
    expect(() => checkWorkers([a, worker('b'), worker('a')])).toThrow('background worker "a" is listed twice');
    expect(() => checkWorkers([a, a])).toThrow(/listed twice/);
  });
});
