import { describe, expect, it } from 'vitest';
import { given, normalizeBoolean } from '../../daemon/api/params.js';

describe('normalizeBoolean', () => {
  it('maps the true words, numbers and booleans to true', () => {
    for (const v of [true, 1, '1', 'true', 'TRUE', 't', 'T', 'yes', 'Yes', 'y', 'on', 'ON', ' true ']) expect(normalizeBoolean(v), String(v)).toBe(true);
  });
  it('maps the false words, numbers and booleans to false', () => {
    for (const v of [false, 0, '0', 'false', 'False', 'f', 'no', 'NO', 'n', 'off', ' off']) expect(normalizeBoolean(v), String(v)).toBe(false);
  });
  it('leaves anything else unchanged (validation then rejects it)', () => {
    for (const v of ['maybe', '', '2', 2, -1, null, undefined, ['true'], { a: 1 }]) expect(normalizeBoolean(v)).toEqual(v);
  });
});

describe('given', () => {
  it('keeps only defined keys, including false, 0, null and empty strings', () => {
    expect(given({ a: 1, b: undefined, c: false, d: 0, e: null, f: '' })).toEqual({ a: 1, c: false, d: 0, e: null, f: '' });
    expect(given({})).toEqual({});
  });
});
