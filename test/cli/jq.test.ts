/**
 * `--jq` is jq: a table of filters over one input with what jq 1.7.1 prints for them (`jq -r -c`), and its errors.
 * The cases the issue found wrong with the JavaScript jq that came before: `keys` (an array, not a stream),
 * `keys_unsorted`, and `.[] | ` (a syntax error, not silence).
 */
import { describe, expect, it } from 'vitest';
import { runJq } from '../../cli/jq.js';
import { CliError, UsageError } from '../../cli/errors.js';

const INPUT = {
  b: 1, a: [1, 2, 3], s: 'x y', n: null, t: true, f: 1.5,
  items: [{ name: 'one', state: 'opened', labels: ['bug'] }, { name: 'two', state: 'closed', labels: [] }],
};

const TABLE: [string, string][] = [
  ['.', '{"b":1,"a":[1,2,3],"s":"x y","n":null,"t":true,"f":1.5,"items":[{"name":"one","state":"opened","labels":["bug"]},{"name":"two","state":"closed","labels":[]}]}\n'],
  ['keys', '["a","b","f","items","n","s","t"]\n'],
  ['keys_unsorted', '["b","a","s","n","t","f","items"]\n'],
  ['.a[]', '1\n2\n3\n'],
  ['.s', 'x y\n'],
  ['.n', 'null\n'],
  ['.missing', 'null\n'],
  ['.a | length', '3\n'],
  ['.items[] | .name', 'one\ntwo\n'],
  ['[.items[] | select(.state == "opened") | .name]', '["one"]\n'],
  ['.items | map(.labels | length) | add', '1\n'],
  ['.items[0] | to_entries | map(.key)', '["name","state","labels"]\n'],
  ['"\\(.b)-\\(.s)"', '1-x y\n'],
  ['.a | @csv', '1,2,3\n'],
  ['.f * 2', '3\n'],
  ['[.a[] | . * 10] | add / 3', '20\n'],
  ['.items | group_by(.state) | map(length)', '[1,1]\n'],
  ['[paths(type == "number")] | length', '5\n'],
  ['.a | first, last', '1\n3\n'],
  ['pick(.b)', '{"b":1}\n'],
  ['empty', ''],
  ['.items[] | {name, n: (.labels | length)}', '{"name":"one","n":1}\n{"name":"two","n":0}\n'],
  ['[limit(2; .a[])]', '[1,2]\n'],
  ['.s | ascii_upcase | split(" ")', '["X","Y"]\n'],
  ['.t and (.n // "d" | . == "d")', 'true\n'],
];

describe('--jq answers as jq 1.7.1', () => {
  it.each(TABLE)('%s', async (filter, expected) => {
    expect(await runJq(filter, INPUT, false)).toBe(expected);
  });

  it('indents values on a terminal, as jq does', async () => {
    expect(await runJq('.items[1]', INPUT, true)).toBe('{\n  "name": "two",\n  "state": "closed",\n  "labels": []\n}\n');
  });

  it('a filter that does not compile is a usage error naming jq\'s reason', async () => {
    for (const bad of ['.[] | ', '.[', 'nosuchfunction']) {
      const e = await runJq(bad, INPUT, false).catch((x: unknown) => x);
      expect(e, bad).toBeInstanceOf(UsageError);
      expect((e as Error).message).toContain('cannot compile the jq expression');
    }
    const e = await runJq('.[] | ', INPUT, false).catch((x: unknown) => x as Error);
    expect((e as Error).message).toMatch(/syntax error/);
  });

  it('a filter that fails at run time is an error, after what jq printed before it', async () => {
    const e = await runJq('.a[], (.s | tonumber)', INPUT, false).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CliError);
    expect(e).not.toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(/Invalid numeric literal.*'x y'/);
    expect((e as { output?: string }).output).toBe('1\n2\n3\n');
  });

  it('takes megabytes of input and output in linear time (jq-wasm\'s own glue copied per byte)', async () => {
    const big = Array.from({ length: 20_000 }, (_, i) => ({ id: i, title: `issue number ${i} with some words in its title` }));
    const out = await runJq('.[] | .title', big, false);
    expect(out.split('\n')).toHaveLength(20_001);
    expect((await runJq('.', big, false)).length).toBeGreaterThan(1_000_000);
  }, 30_000);
});
