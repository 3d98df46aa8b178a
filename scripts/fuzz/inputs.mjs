// Hostile and random inputs for the fuzzer, all drawn from one seeded generator so that a seed replays a run.

/** A seeded generator (mulberry32): next() in [0, 1), int(n) in [0, n), pick(list), chance(p). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (list) => list[int(list.length)], chance: (p) => next() < p };
}

/** Ids that can name nothing (or overflow a parser). */
export const ODD_IDS = ['-1', '0', '-0', '1e3', '0x10', '99999999999999999999', '9007199254740993', '2147483648', '1.5', ' 1', '1 ', 'NaN', 'Infinity', 'null', 'true', '[]', '{}', 'abc'];

/** Paths that leave where they should stay: relative climbs, absolute paths, encodings of both. */
export function traversals(escape) {
  return [
    '../../../../../../etc/passwd', '..', '../', './../..', '..\\..\\..\\windows', '....//....//etc', '%2e%2e%2f%2e%2e%2f',
    '/etc/passwd', '/proc/self/environ', `${escape}/abs-escape`, `../../../../../../..${escape}/rel-escape`, '../escape-file', '../../escape-file',
    'a/../../b', 'foo/./bar', '.git/config', '../../gantry.db', '../repositories', 'refs/heads/../../x', 'HEAD', '@{-1}', 'master~999',
    'master^{tree}', '-rf', '--upload-pack=touch /tmp/x', '--output=escape-out', '-o', ':/', 'refs/heads/.lock', 'a.lock', 'x..y', 'a//b', '/',
  ];
}

/** Strings that break careless code: SQL, shell, format strings, control bytes, unicode oddities. */
export const NASTY = [
  '', ' ', "'", '"', '`', "' OR '1'='1", "1; DROP TABLE users; --", "1' UNION SELECT * FROM users --", '%', '_', '\\', '%00', '\u0000', 'a\u0000b',
  '$(touch escape-shell)', '`touch escape-shell`', '; touch escape-shell', '| touch escape-shell', '&& touch escape-shell', '${IFS}',
  '%s%s%s%n', '{{7*7}}', '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', 'javascript:alert(1)', '\r\nX-Fuzz-Injected: 1',
  'line\nbreak', '\t', '\u202e\u0644\u0627', '\ud800', '\udfff', '😀', '\u{1F4A9}'.repeat(50), 'é'.normalize('NFD'), '\uFEFF', '\u2028\u2029',
  'ﬀ', 'İ', 'ß', 'a'.repeat(300), 'a'.repeat(5000), '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  '[object Object]', 'undefined', 'null', 'NaN', '-1', '0', '1e309', '0x41', 'true', 'false', '2016-13-45', '9999-12-31T25:61:61Z',
  '1 week', '-1 day', '99999999999 years', 'refs/heads/master', 'master', '*', '**/*', '.', '..', 'CON', 'nul', '~root', '@', '#',
];

/** One random value of JSON type `type` (or any type), drawn from the hostile pools. */
export function anyValue(r, escape, depth = 0) {
  const kind = r.int(depth > 2 ? 6 : 9);
  switch (kind) {
    case 0: return r.pick(NASTY);
    case 1: return r.pick(traversals(escape));
    case 2: return r.pick([0, -1, 1, 2, 3, 2 ** 31, 2 ** 53, -(2 ** 53), 1.5, 1e308, -0]);
    case 3: return r.pick([true, false, null]);
    case 4: return r.pick(ODD_IDS);
    case 5: return randomText(r, r.int(40));
    case 6: return Array.from({ length: r.int(4) }, () => anyValue(r, escape, depth + 1));
    case 7: return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick(['a', '__proto__', 'constructor', 'id', 'x[y]', '']), anyValue(r, escape, depth + 1)]));
    default: return r.pick(NASTY) + r.pick(traversals(escape));
  }
}

/** Random code points from every plane, including controls, surrogates and NUL. */
export function randomText(r, n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const band = r.int(5);
    const cp = band === 0 ? r.int(32) : band === 1 ? 32 + r.int(95) : band === 2 ? 0x80 + r.int(0x780) : band === 3 ? 0xd800 + r.int(0x800) : r.int(0x110000);
    s += cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
  }
  return s;
}

/** A JSON text nested `depth` levels deep (arrays or objects). */
export function deepJson(depth, r) {
  return r.chance(0.5) ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Broken JSON texts. */
export const BAD_JSON = ['{', '}', '{"a":', '[1,2', '{"a":1,}', "{'a':1}", 'nul', 'tru', '"unterminated', '{"a":1}{"b":2}', '\u0000', '{"a":"\\u00"}', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}', '[]', '1', '"x"', 'null', '{"a":NaN}', '{"a":1e999999}'];

/** Content types that lie about the body. */
export const CONTENT_TYPES = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=', 'application/json; charset=utf-16', 'application/octet-stream', 'application/json;;;', 'image/png', '*/*', 'application/vnd.git-lfs+json', ''];

/** Junk in git's pkt-line framing for upload-pack / receive-pack bodies. */
export function junkPktLines(r, sha) {
  const line = (s) => `${(s.length + 4).toString(16).padStart(4, '0')}${s}`;
  const zero = '0'.repeat(40);
  const choices = [
    () => '0000',
    () => 'ffff' + 'a'.repeat(100),
    () => '0003',
    () => 'zzzz',
    () => line(`want ${sha}\n`) + '0000' + line('done\n'),
    () => line(`want ${'f'.repeat(40)}\n`) + '0000' + line('done\n'),
    () => line(`want ${sha} multi_ack side-band-64k ofs-delta\n`) + line('deepen -1\n') + '0000' + line('done\n'),
    () => line(`want ${sha}\n`) + line('shallow ../../etc\n') + '0000',
    () => line(`${zero} ${sha} refs/heads/fuzz-${r.int(1000)}\0 report-status\n`) + '0000' + 'PACK' + randomText(r, 30),
    () => line(`${sha} ${zero} refs/heads/master\0 report-status\n`) + '0000',
    () => line(`${zero} ${sha} refs/heads/../../escape\0 report-status\n`) + '0000PACK\0\0\0\u0002\0\0\0\0',
    () => line(`${zero} ${sha} HEAD\0 report-status\n`) + '0000',
    () => line(`${zero} ${'1'.repeat(40)} refs/heads/x\n`) + '0000PACK\0\0\0\u0002\0\0\0\u0001\u0095\u000ax\u009c',
    () => line('command=ls-refs\n') + '0001' + line('ref-prefix refs/\n') + '0000',
    () => randomText(r, 200),
    () => line(`want ${sha}\n`).repeat(500) + '0000',
  ];
  return r.pick(choices)();
}
