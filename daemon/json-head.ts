/**
 * Reading the head of a long JSON array of objects without parsing all of it: a merge request's stored commit list is
 * over a megabyte for 5,000 commits, and a hook or a merge wants only its first few entries (SQL reads the text's head
 * with substr, this finds the complete objects in it).
 */

/**
 * Up to `n` leading objects of a JSON array of objects given as text (possibly cut anywhere after them). Each object's
 * end is found by counting braces outside strings, and only the objects are parsed; an object cut by the end of the
 * text, or text that is no array of objects, ends the list.
 */
export function leadingArrayObjects(text: string, n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let i = text.indexOf('[');
  if (i < 0 || text.slice(0, i).trim() !== '') return out;
  i++;
  while (out.length < n) {
    while (i < text.length && /[\s,]/.test(text[i]!)) i++;
    if (text[i] !== '{') return out;
    const start = i;
    let depth = 0;
    let inString = false;
    let end = -1;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (c === 0x5c) i++; // backslash: the next character is escaped
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b) depth++;
      else if (c === 0x7d && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) return out;
    try {
      out.push(JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>);
    } catch {
      return out;
    }
    i = end + 1;
  }
  return out;
}
