import { describe, expect, it } from 'vitest';
import { COVERAGE_TRACE_LIMIT, extractCoverage } from '../../daemon/ci/coverage.js';

describe('extractCoverage', () => {
  it('reads SimpleCov output with the usual project regex, with or without slashes', () => {
    const trace = 'Finished in 1.2 seconds\nCoverage report generated for RSpec to coverage. 123 / 130 LOC (94.61%) covered.\n';
    expect(extractCoverage(trace, '\\(\\d+.\\d+\\%\\) covered')).toBe(94.61);
    expect(extractCoverage(trace, '/\\(\\d+.\\d+\\%\\) covered/')).toBe(94.61);
  });

  it('reads "Code coverage:" lines', () => {
    expect(extractCoverage('Code coverage: 78.5\n', '/Code coverage: \\d+\\.\\d+/')).toBe(78.5);
  });

  it('takes the last match in the trace', () => {
    const trace = 'Code coverage: 10.0\nmore\nCode coverage: 55.25\ndone\n';
    expect(extractCoverage(trace, '/Code coverage: \\d+\\.\\d+/')).toBe(55.25);
  });

  it('takes the last capture group when the regex has groups, like Ruby String#scan', () => {
    expect(extractCoverage('Lines: 80.1% of 3.5k (12 files)', '/Lines: (\\d+\\.\\d+)%/')).toBe(80.1);
    expect(extractCoverage('covered 12 of 50 => 24%', '/covered (\\d+) of (\\d+)/')).toBe(50);
    expect(extractCoverage('total 5', '/total (x)?\\s*\\d/')).toBeNull(); // unmatched last group
  });

  it('reads integers and the first number of the matched text', () => {
    expect(extractCoverage('All files | 87 | 90 |', '/All files\\s*\\|\\s*\\d+/')).toBe(87);
    expect(extractCoverage('TOTAL 1234 56 95%', '^TOTAL.+?(\\d+\\%)$')).toBe(95);
  });

  it('treats ^ and $ as line anchors, as Ruby does', () => {
    const trace = 'x\nTOTAL    120     6    95%\ny';
    expect(extractCoverage(trace, '^TOTAL\\s+\\d+\\s+\\d+\\s+(\\d+)%$')).toBe(95);
  });

  it('returns null without a match, a number, a regex or a valid regex', () => {
    expect(extractCoverage('no coverage here', '/Code coverage: \\d+/')).toBeNull();
    expect(extractCoverage('Coverage: none', '/Coverage: \\w+/')).toBeNull();
    expect(extractCoverage('Coverage: 5', '')).toBeNull();
    expect(extractCoverage('Coverage: 5', null)).toBeNull();
    expect(extractCoverage('Coverage: 5', '/(/')).toBeNull();
    expect(extractCoverage('', '/x/')).toBeNull();
  });

  it('gives up on a catastrophic regex instead of hanging', () => {
    const started = Date.now();
    expect(extractCoverage(`${'a'.repeat(5000)}b`, '/(a+)+$/')).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('only searches the end of a very long trace', () => {
    const head = 'Code coverage: 11.0\n';
    const filler = 'x'.repeat(COVERAGE_TRACE_LIMIT);
    expect(extractCoverage(head + filler, '/Code coverage: \\d+\\.\\d+/')).toBeNull();
    expect(extractCoverage(head + filler + 'Code coverage: 99.9\n', '/Code coverage: \\d+\\.\\d+/')).toBe(99.9);
  });
});
