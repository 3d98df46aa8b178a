// Human durations as GitLab 8.x read them with ChronicDuration (raise_exceptions on):
// artifacts:expire_in in .gitlab-ci.yml and the expire_in parameter of an artifacts upload.

/** Result of parseDuration: seconds (null = never expires), or not a duration. */
export type ParsedDuration = { ok: true; seconds: number | null } | { ok: false };

const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;

const UNITS: Record<string, number> = {};
function unit(seconds: number, ...names: string[]): void {
  for (const n of names) UNITS[n] = seconds;
}
unit(1, 'seconds', 'second', 'secs', 'sec', 's');
unit(MINUTE, 'minutes', 'minute', 'mins', 'min', 'm');
unit(HOUR, 'hours', 'hour', 'hrs', 'hr', 'h');
unit(DAY, 'days', 'day', 'dy', 'd');
unit(7 * DAY, 'weeks', 'week', 'wks', 'wk', 'w');
unit(30 * DAY, 'months', 'month', 'mos', 'mo', 'mths', 'mth');
unit(31557600, 'years', 'year', 'yrs', 'yr', 'y'); // 365.25 days, as ChronicDuration

const NUMBER_WORDS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17,
  eighteen: 18, nineteen: 19, twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, ninety: 90,
};
const JOIN_WORDS = new Set(['and', 'with', 'plus']);
const NUMBER = /^(?:\d+(?:\.\d+)?|\.\d+)$/;
// Clock form h:m:s (or m:s, d:h:m:s): the last part is seconds.
const CLOCK_UNITS = [1, MINUTE, HOUR, DAY, 30 * DAY, 31557600];
const MAX_SECONDS = 1000 * 31557600;

/**
 * Parses a human duration ("30 min", "1 week", "2 days 4 hours", "3 hrs 4 min", "7d", "1:30")
 * into whole seconds; "never" means no expiry (seconds null). Unknown words, an empty text or a
 * zero duration are not durations, as in GitLab 8.x.
 */
export function parseDuration(text: string): ParsedDuration {
  if (typeof text !== 'string' || text.length > 200) return { ok: false };
  const lower = text.trim().toLowerCase();
  if (lower === 'never') return { ok: true, seconds: null };

  const compact = lower.replace(/\s+/g, '');
  if (/^(?:\d*\.?\d+)(?::\d*\.?\d+)+$/.test(compact)) {
    const parts = compact.split(':').reverse();
    if (parts.length > CLOCK_UNITS.length) return { ok: false };
    const total = parts.reduce((sum, p, k) => sum + Number(p) * CLOCK_UNITS[k], 0);
    return finish(total);
  }

  // "3hrs4min" -> "3 hrs 4 min"; commas are separators.
  const spaced = lower.replace(/(\d*\.?\d+)/g, ' $1 ').replace(/,/g, ' ');
  const words: (number | string)[] = [];
  for (const raw of spaced.split(/\s+/)) {
    if (raw === '') continue;
    if (NUMBER.test(raw)) words.push(Number(raw));
    else if (raw in NUMBER_WORDS) words.push(NUMBER_WORDS[raw]);
    else if (raw in UNITS) words.push(raw);
    else if (!JOIN_WORDS.has(raw)) return { ok: false };
  }
  if (words.length === 0) return { ok: false };
  if (typeof words[0] === 'string') words.unshift(1); // "week" = "1 week"

  let total = 0;
  words.forEach((w, k) => {
    if (typeof w !== 'number') return;
    const next = words[k + 1];
    // A bare trailing number is seconds; a number followed by another number counts for nothing.
    const multiplier = next === undefined ? 1 : typeof next === 'string' ? UNITS[next] : 0;
    total += w * multiplier;
  });
  return finish(total);
}

function finish(total: number): ParsedDuration {
  if (!Number.isFinite(total) || total <= 0 || total > MAX_SECONDS) return { ok: false };
  const seconds = Math.round(total);
  return seconds > 0 ? { ok: true, seconds } : { ok: false };
}
