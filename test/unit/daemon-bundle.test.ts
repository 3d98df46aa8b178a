/**
 * The daemon's one-file bundle (scripts/bundle-daemon.mjs, built by `npm install`): V8 holds its 2.5 MB of source at
 * one byte a character only when every character is Latin-1 (one arrow made it two bytes a character, 3 MB more
 * resident for as long as the daemon runs), and undici, which only hook deliveries and outgoing requests use, stays
 * out of it (loaded from node_modules at its first use). Nor does it import node:http as an ES module: that reads all
 * of node:http's exports, and its WebSocket getter loads Node's own bundled undici (daemon/live/trace.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bundle = join(import.meta.dirname, '../../dist/daemon/gantryd.mjs');

describe('the daemon bundle', () => {
  it('exists (npm install or npm run build makes it)', () => {
    expect(existsSync(bundle), `${bundle} is missing: run npm run build`).toBe(true);
  });

  it('is Latin-1 only, with the web pages\' arrows as escapes in their templates', () => {
    const text = readFileSync(bundle, 'utf8');
    const wide = [...text.matchAll(/[^\x00-\xff]/g)].map((m) => `${JSON.stringify(m[0])} at ${m.index}: ${text.slice(m.index! - 40, m.index! + 10)}`);
    expect(wide).toEqual([]);
    // (daemon/web/pages/html.ts's pager: "Next ›" in an html`` template, where \u203a is the same character)
    expect(text).toContain('Next \\u203a</a>');
  });

  it('loads undici from node_modules instead of holding it', () => {
    const text = readFileSync(bundle, 'utf8');
    expect(text).toMatch(/import\("undici"\)/);
    expect(text).not.toContain('DispatcherBase'); // (undici's base class of every dispatcher)
  });

  it('does not import node:http as an ES module (Node would load its own undici with it)', () => {
    const text = readFileSync(bundle, 'utf8');
    expect(text).not.toMatch(/from\s*["']node:http["']/);
    expect(text).not.toMatch(/from\s*["']http["']/);
  });
});
