import { describe, expect, it } from 'vitest';
import { closingReferences } from '../../daemon/services/merge-requests/closes-issues.js';

const BASE = 'http://gantry.test';
const refs = (t: string) => closingReferences(t, BASE).map((r) => `${r.projectPath ?? ''}#${r.iid}`);

describe('closing pattern (8.x default issue_closing_pattern)', () => {
  it('finds the keywords in every form and case', () => {
    expect(refs('Closes #1')).toEqual(['#1']);
    expect(refs('fixes #2')).toEqual(['#2']);
    expect(refs('FIXED #3')).toEqual(['#3']);
    expect(refs('Resolves: #4')).toEqual(['#4']);
    expect(refs('resolving issue #5')).toEqual(['#5']);
    expect(refs('Closing issues #6')).toEqual(['#6']);
    expect(refs('fix #7')).toEqual(['#7']);
  });
  it('lists several: commas and "and"', () => {
    expect(refs('Closes #1, #2 and #3')).toEqual(['#1', '#2', '#3']);
    expect(refs('Fixes #1,#2')).toEqual(['#1', '#2']);
  });
  it('takes full references and issue URLs of this instance', () => {
    expect(refs('Closes group/project#9')).toEqual(['group/project#9']);
    expect(refs('Fixes #1 and other/proj#2')).toEqual(['#1', 'other/proj#2']);
    expect(refs(`Closes ${BASE}/g/p/issues/12`)).toEqual(['g/p#12']);
  });
  it('ignores mentions without a keyword, and repeats', () => {
    expect(refs('See #1; related to #2')).toEqual([]);
    expect(refs('Closes #1\n\nAlso closes #1')).toEqual(['#1']);
    expect(refs('closes#1')).toEqual([]);
    expect(refs('encloses #1')).toEqual(['#1']); // 8.x's pattern has no word boundary either
  });
});
