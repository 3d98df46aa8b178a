import { describe, expect, it } from 'vitest';
import { mentionedUsernames, stripCode } from '../../daemon/services/collaboration/mentions.js';

describe('mentionedUsernames', () => {
  it('finds @names in order, deduplicated and lower-cased', () => {
    expect(mentionedUsernames('@alice and @Bob, then @alice again')).toEqual(['alice', 'bob']);
  });
  it('ends a name before a sentence full stop and keeps dots and dashes inside', () => {
    expect(mentionedUsernames('ping @john.doe. and @a-b-c!')).toEqual(['john.doe', 'a-b-c']);
  });
  it('ignores email addresses and URL paths', () => {
    expect(mentionedUsernames('mail bob@example.com or see https://x.test/@carol, cc (@dave)')).toEqual(['dave']);
  });
  it('ignores code spans, fenced and indented code blocks', () => {
    const text = 'real @eve\n`@span`\n```\n@fenced\n```\n~~~ts\n@tilde\n~~~\n\n    @indented\n\nafter @frank';
    expect(mentionedUsernames(text)).toEqual(['eve', 'frank']);
  });
  it('an unclosed fence hides the rest', () => {
    expect(mentionedUsernames('@gina\n```\n@hidden')).toEqual(['gina']);
  });
  it('nothing for empty or null text', () => {
    expect(mentionedUsernames(null)).toEqual([]);
    expect(mentionedUsernames('')).toEqual([]);
    expect(mentionedUsernames('a lone @ sign')).toEqual([]);
  });
  it('stops at 100 names and stays fast on a 1 MB text', () => {
    const names = Array.from({ length: 500 }, (_, i) => `@u${i}`).join(' ');
    expect(mentionedUsernames(names)).toHaveLength(100);
    expect(mentionedUsernames('`'.repeat(1) + 'x'.repeat(1024 * 1024))).toEqual([]);
  });
  it('stripCode keeps prose', () => {
    expect(stripCode('a `b` c')).toBe('a   c');
  });
});
