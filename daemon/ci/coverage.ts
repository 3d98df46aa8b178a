// Test coverage from a build trace (GitLab 8.x Ci::Build#extract_coverage).
import { parseRegexpLiteral, rubyRegExp, safeLastMatch } from './ruby-regexp.js';

/** Only this much of the end of a trace is searched (the coverage summary comes last). */
export const COVERAGE_TRACE_LIMIT = 1024 * 1024;
/** Time allowed for the coverage regexp, in milliseconds. */
export const COVERAGE_TIMEOUT_MS = 1000;

const NUMBER = /\d+(?:\.\d+)?/;

/**
 * Coverage percentage from a trace: the regexp (a project setting like `\(\d+.\d+\%\) covered`
 * or a `/.../` literal) is applied to the trace; of its LAST match, the last capture group (or
 * the whole match when there are no groups) is taken, and the first number in it is the result.
 * Null when the regexp is empty, invalid, too slow, or nothing matches.
 */
export function extractCoverage(trace: string, regex: string | null | undefined): number | null {
  if (!regex || !trace) return null;
  const lit = parseRegexpLiteral(regex);
  const re = lit ? rubyRegExp(lit.source, lit.flags) : rubyRegExp(regex);
  if (re === null) return null;
  const text = trace.length > COVERAGE_TRACE_LIMIT ? trace.slice(trace.length - COVERAGE_TRACE_LIMIT) : trace;
  const match = safeLastMatch(re, text, COVERAGE_TIMEOUT_MS);
  if (match === null) return null;
  // Ruby's String#scan yields the captures when the regexp has groups, and the match otherwise.
  const hit = match.length > 1 ? match[match.length - 1] : match[0];
  if (hit === undefined) return null;
  const number = NUMBER.exec(hit);
  if (number === null) return null;
  const value = Number.parseFloat(number[0]);
  return Number.isFinite(value) ? value : null;
}
