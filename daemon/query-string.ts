/**
 * The query-string parser of every route: qs (nested keys `a[b]=1`, arrays `a[]=1`, as Rails/Grape parse them), with a
 * fast path for the plain strings almost every request sends (`per_page=20&page=3`), which qs parses several times
 * slower. The fast path answers exactly what qs would, or gives the string to qs.
 */
import qs from 'qs';

export const QS_OPTIONS = { arrayLimit: 1000, parameterLimit: 5000, depth: 5 };

/** Only unreserved characters, `=` and `&`: nothing to decode, no brackets, no `+` for a space. */
const PLAIN = /^[A-Za-z0-9_.~=&-]{0,512}$/;

/** Parse a query string (or a form body) as qs does with QS_OPTIONS. */
export function parseQuery(s: string): Record<string, unknown> {
  if (PLAIN.test(s)) {
    const out: Record<string, unknown> = {};
    let ok = true;
    for (const part of s.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const key = eq < 0 ? part : part.slice(0, eq);
      // qs skips empty keys, drops keys named like Object.prototype members, and combines repeated keys into arrays.
      if (key === '' || key in out || key in Object.prototype) {
        ok = false;
        break;
      }
      out[key] = eq < 0 ? '' : part.slice(eq + 1);
    }
    if (ok) return out;
  }
  return qs.parse(s, QS_OPTIONS) as Record<string, unknown>;
}
