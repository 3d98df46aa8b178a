import { describe, expect, it } from 'vitest';
import qs from 'qs';
import { parseQuery, QS_OPTIONS } from '../../daemon/query-string.js';

describe('parseQuery', () => {
  const cases = [
    '', 'per_page=20', 'per_page=20&page=3', 'a=1&a=2', 'a', 'a=', '=1', '&&a=1&&', 'a=b=c', 'toString=1', '__proto__=x',
    'constructor=1&b=2', 'hasOwnProperty=1', 'a[]=1&a[]=2', 'a[b]=1', 'a%5Bb%5D=1', 'a=%20b', 'a=b+c', 'search=foo.bar~baz',
    'labels=bug,feature', 'a.b=1', `${'x'.repeat(600)}=1`, 'order_by=id&sort=asc&archived=true&visibility=private',
  ];
  it.each(cases)('answers what qs answers for %j', (s) => {
    expect(parseQuery(s)).toEqual(qs.parse(s, QS_OPTIONS));
  });

  it('agrees with qs on random strings of the plain alphabet', () => {
    const alphabet = 'ab_=&.~-0';
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5000; i++) {
      const s = Array.from({ length: Math.floor(next() * 14) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      expect(parseQuery(s), s).toEqual(qs.parse(s, QS_OPTIONS));
    }
  });
});
