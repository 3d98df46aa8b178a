import { describe, expect, it } from 'vitest';
import { leadingArrayObjects } from '../../daemon/json-head.js';

describe('leadingArrayObjects', () => {
  const list = [
    { id: 'a', message: 'braces } { and "quotes" and \\ backslashes\n' },
    { id: 'b', message: 'second', nested: { x: [1, { y: '}' }] } },
    { id: 'c', message: 'third' },
  ];
  const text = JSON.stringify(list);

  it('parses only the leading objects asked for, strings with braces and escapes included', () => {
    expect(leadingArrayObjects(text, 1)).toEqual([list[0]]);
    expect(leadingArrayObjects(text, 2)).toEqual(list.slice(0, 2));
    expect(leadingArrayObjects(text, 10)).toEqual(list);
    expect(leadingArrayObjects(JSON.stringify(list, null, 2), 3)).toEqual(list);
  });

  it('stops at an object cut by the end of the text (the head SQL read)', () => {
    const cut = text.slice(0, text.indexOf('"c"') + 2);
    expect(leadingArrayObjects(cut, 3)).toEqual(list.slice(0, 2));
    expect(leadingArrayObjects(text.slice(0, 5), 1)).toEqual([]);
  });

  it('gives nothing for an empty array or text that is no array of objects', () => {
    expect(leadingArrayObjects('[]', 1)).toEqual([]);
    expect(leadingArrayObjects('', 1)).toEqual([]);
    expect(leadingArrayObjects('{"id":"a"}', 1)).toEqual([]);
    expect(leadingArrayObjects('[1, 2]', 1)).toEqual([]);
  });
});
