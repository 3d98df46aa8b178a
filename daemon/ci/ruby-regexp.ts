// Ruby regular expressions as GitLab 8.x used them (only/except `/re/` entries, coverage regexes),
// translated to JavaScript and run with a time limit so that a user's pattern cannot hang the daemon.
import vm from 'node:vm';

/** A Ruby regexp literal split into its pattern source and flags (`/src/flags`). */
export interface RegexpLiteral {
  source: string;
  flags: string;
}

const LITERAL = /^\/([\s\S]*)\/([imx]*)$/;
const MAX_PATTERN_LENGTH = 4096;

/** Splits a `/pattern/flags` literal (flags among i, m, x); null when the text is not in that form. */
export function parseRegexpLiteral(text: string): RegexpLiteral | null {
  if (text.length < 2) return null;
  const m = LITERAL.exec(text);
  return m ? { source: m[1], flags: m[2] } : null;
}

// POSIX bracket classes Ruby allows inside a character class ([[:digit:]]).
const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\r\\n\\v\\f',
  blank: ' \\t',
  xdigit: '0-9a-fA-F',
  word: '\\w',
  punct: '!-\\/:-@\\[-`{-~',
  cntrl: '\\x00-\\x1f\\x7f',
  print: '\\x20-\\x7e',
  graph: '\\x21-\\x7e',
};

// Escapes with no faithful JavaScript equivalent (without the u flag): reject rather than mis-match.
const UNSUPPORTED_ESCAPES = new Set(['G', 'K', 'g', 'p', 'P', 'R', 'X']);

/**
 * Translates Ruby (Onigmo) pattern source to JavaScript source, or null when it uses syntax
 * that cannot be expressed faithfully. `extended` strips whitespace and comments (Ruby /x).
 */
export function rubySourceToJs(src: string, extended = false): string | null {
  if (src.length > MAX_PATTERN_LENGTH) return null;
  let out = '';
  let inClass = false;
  let classStart = false; // just after '[' or '[^'
  let afterQuantifier = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined) return null;
      i++;
      classStart = false;
      if (UNSUPPORTED_ESCAPES.has(n)) return null;
      if (inClass) {
        out += n === 'h' ? '0-9a-fA-F' : `\\${n}`;
        continue;
      }
      afterQuantifier = false;
      if (n === 'A') out += '(?<![\\s\\S])';
      else if (n === 'z') out += '(?![\\s\\S])';
      else if (n === 'Z') out += '(?=\\n?(?![\\s\\S]))';
      else if (n === 'h') out += '[0-9a-fA-F]';
      else if (n === 'H') out += '[^0-9a-fA-F]';
      else out += `\\${n}`;
      continue;
    }
    if (inClass) {
      if (c === '[') {
        const posix = /^\[:(\w+):\]/.exec(src.slice(i));
        const chars = posix ? POSIX_CLASSES[posix[1]] : undefined;
        if (!posix || chars === undefined) return null; // nested classes are Ruby-only
        out += chars;
        i += posix[0].length - 1;
        classStart = false;
        continue;
      }
      if (c === '&' && src[i + 1] === '&') return null; // class intersection
      if (c === ']') {
        if (classStart) {
          out += '\\]'; // Ruby reads a leading ']' as a literal
          classStart = false;
          continue;
        }
        inClass = false;
        afterQuantifier = false;
      } else if (c === '^' && classStart && out.endsWith('[')) {
        out += c;
        continue;
      }
      classStart = false;
      out += c;
      continue;
    }
    if (extended) {
      if (/\s/.test(c)) continue;
      if (c === '#') {
        while (i < src.length && src[i] !== '\n') i++;
        continue;
      }
    }
    if (c === '[') {
      inClass = true;
      classStart = true;
      out += c;
      continue;
    }
    if (c === '(' && src.startsWith('(?#', i)) {
      const end = src.indexOf(')', i);
      if (end < 0) return null;
      i = end;
      continue;
    }
    if (c === '(' && src.startsWith('(?>', i)) {
      out += '(?:'; // atomic group: nearest JavaScript equivalent
      i += 2;
      afterQuantifier = false;
      continue;
    }
    if (c === '+' && afterQuantifier) {
      afterQuantifier = false; // possessive quantifier (a*+): read as greedy
      continue;
    }
    afterQuantifier = c === '*' || c === '+' || c === '?' || c === '}';
    out += c;
  }
  if (inClass) return null;
  return out;
}

/**
 * Builds a JavaScript RegExp behaving like Ruby's for the given source and Ruby flags
 * (i: ignore case, m: dot matches newline, x: extended). `^`/`$` match at line boundaries as in
 * Ruby. Returns null for invalid or unsupported patterns.
 */
export function rubyRegExp(source: string, rubyFlags = ''): RegExp | null {
  const js = rubySourceToJs(source, rubyFlags.includes('x'));
  if (js === null) return null;
  let flags = 'm';
  if (rubyFlags.includes('i')) flags += 'i';
  if (rubyFlags.includes('m')) flags += 's';
  try {
    return new RegExp(js, flags);
  } catch {
    return null;
  }
}

/** Compiles a `/pattern/flags` Ruby literal; null when it is not a literal or does not compile. */
export function regExpFromLiteral(text: string): RegExp | null {
  const lit = parseRegexpLiteral(text);
  return lit ? rubyRegExp(lit.source, lit.flags) : null;
}

// Regexps run inside a separate V8 context with a timeout: the timeout interrupts backtracking,
// which a plain RegExp call on the main thread cannot do.
interface Sandbox {
  source: string;
  flags: string;
  input: string;
}

let sandbox: (vm.Context & Sandbox) | null = null;
const TEST_SCRIPT = new vm.Script('new RegExp(source, flags).test(input)');
const LAST_MATCH_SCRIPT = new vm.Script(`(function () {
  var g = new RegExp(source, flags.indexOf('g') >= 0 ? flags : flags + 'g');
  var last = null, m;
  while ((m = g.exec(input)) !== null) {
    last = m;
    if (m[0].length === 0) g.lastIndex++;
  }
  return last;
})()`);

function run(script: vm.Script, re: RegExp, input: string, timeoutMs: number): unknown {
  if (sandbox === null) sandbox = vm.createContext({ source: '', flags: '', input: '' }) as vm.Context & Sandbox;
  sandbox.source = re.source;
  sandbox.flags = re.flags;
  sandbox.input = input;
  try {
    return script.runInContext(sandbox, { timeout: timeoutMs });
  } finally {
    sandbox.input = '';
  }
}

/** Tests `re` against `input` with a time limit; null when the limit was hit. */
export function safeTest(re: RegExp, input: string, timeoutMs = 100): boolean | null {
  try {
    return run(TEST_SCRIPT, re, input, timeoutMs) === true;
  } catch {
    return null;
  }
}

/**
 * The last match of `re` in `input` as [whole match, ...groups] (unmatched groups undefined),
 * or null when there is no match or the time limit was hit.
 */
export function safeLastMatch(re: RegExp, input: string, timeoutMs = 1000): (string | undefined)[] | null {
  try {
    const m = run(LAST_MATCH_SCRIPT, re, input, timeoutMs);
    if (m === null || typeof m !== 'object') return null;
    return Array.from(m as ArrayLike<unknown>, (x) => (typeof x === 'string' ? x : undefined));
  } catch {
    return null;
  }
}
