/**
 * The failed sign-in throttle. Every password check (POST /session, git over HTTP basic auth, the OAuth password
 * grant and sign-in page) goes through services/users.ts signIn, which asks here before checking a password and
 * reports the outcome after. Two counters, with GitLab 8.x's numbers (docs/decisions.md):
 *  - per client address, as Rack::Attack's git_basic_auth Allow2Ban: maxFailures failures within findTime ban the
 *    address for banTime; trusted addresses (a proxy on the same machine) are never banned;
 *  - per user, as Devise's lockable: maxFailures failures in a row lock the user for lockTime. Unknown logins have
 *    a counter too, so the answer never tells whether a user exists.
 * State is in memory: exact on one process only (DESIGN.md principle 5), so it stays behind this module.
 */
import type { AppContext } from '../context.js';
import type { SignInLimits } from '../config.js';
import { ApiError } from '../errors.js';
import { counter } from '../metrics.js';

const failures = counter('gantry_signin_failures_total', 'Wrong passwords (every sign-in: API session, git over HTTP, OAuth)')();
const throttled = counter('gantry_signin_throttled_total', 'Sign-ins refused by the throttle, by what was throttled');
const throttledAddress = throttled({ scope: 'address' });
const throttledUser = throttled({ scope: 'user' });

/** 429 for a sign-in the throttle refused: `Retry-After` and the message say when to try again. */
export class SignInThrottled extends ApiError {
  constructor(
    /** Seconds until a sign-in may be tried again. */
    public readonly retryAfter: number,
    /** What is throttled: the client address, or the user (login). */
    public readonly scope: 'address' | 'user',
  ) {
    const what = scope === 'address' ? 'from this address' : 'for this user';
    super(429, { message: `429 Too Many Requests: too many failed sign-ins ${what}; retry later (in ${retryAfter} seconds)` }, { 'Retry-After': String(retryAfter) });
  }
}

interface AddressEntry {
  /** Recent failures (at most maxFailures), with a hash of the user key each was for. */
  failures: { at: number; user: number }[];
  bannedUntil: number;
}

interface UserEntry {
  /** Failures in a row since the last success or lock. */
  failures: number;
  lastAt: number;
  lockedUntil: number;
}

/** At this many remembered addresses (or users), the map is swept (see remember()): memory stays bounded. */
const MAX_ENTRIES = 50_000;

/** The throttle of one daemon (one database). */
export class SignInThrottle {
  /** Milliseconds since the epoch; tests replace it to move time on. */
  clock: () => number = Date.now;
  private readonly addresses = new Map<string, AddressEntry>();
  private readonly users = new Map<string, UserEntry>();
  private readonly trusted: Set<string>;

  constructor(private readonly limits: SignInLimits) {
    this.trusted = new Set(limits.trustedAddresses.map(normalizeAddress));
  }

  /** Throws SignInThrottled when this address is banned (before any user lookup or password check). */
  checkAddress(address: string | undefined): void {
    const entry = this.addressEntry(address);
    const now = this.clock();
    if (entry && entry.bannedUntil > now) {
      throttledAddress.inc();
      throw new SignInThrottled(seconds(entry.bannedUntil - now), 'address');
    }
  }

  /** Throws SignInThrottled when this user (the key from userKey) is locked: even the right password is refused. */
  checkUser(user: string): void {
    if (!this.enabled) return;
    const entry = this.users.get(user);
    const now = this.clock();
    if (entry && entry.lockedUntil > now) {
      throttledUser.inc();
      throw new SignInThrottled(seconds(entry.lockedUntil - now), 'user');
    }
  }

  /** Record a failed password check; the failure that reaches the limit bans the address or locks the user. */
  failed(address: string | undefined, user: string): void {
    failures.inc();
    if (!this.enabled) return;
    const now = this.clock();
    const { maxFailures, findTimeSeconds, banTimeSeconds, lockTimeSeconds } = this.limits;
    let u = this.users.get(user);
    if (u && u.lockedUntil <= now && now - u.lastAt > lockTimeSeconds * 1000) u = undefined;
    if (!u) u = remember(this.users, user, { failures: 0, lastAt: now, lockedUntil: 0 }, (e) => this.userExpired(e, now), (e) => e.lockedUntil > now);
    u.failures += 1;
    u.lastAt = now;
    if (u.failures >= maxFailures) {
      u.lockedUntil = now + lockTimeSeconds * 1000;
      u.failures = 0;
    }
    const key = this.addressKey(address);
    if (key === null) return;
    const a = this.addresses.get(key)
      ?? remember(this.addresses, key, { failures: [], bannedUntil: 0 }, (e) => this.addressExpired(e, now), (e) => e.bannedUntil > now);
    a.failures = a.failures.filter((f) => now - f.at < findTimeSeconds * 1000);
    a.failures.push({ at: now, user: hash(user) });
    if (a.failures.length >= maxFailures) {
      a.bannedUntil = now + banTimeSeconds * 1000;
      a.failures = [];
    }
  }

  /**
   * Record a successful sign-in: the user's own count starts again, and the address forgets its failures for this
   * user (typos), but not those for other users, so one valid account cannot reset the count of a guessing client.
   */
  succeeded(address: string | undefined, user: string): void {
    this.users.delete(user);
    const key = this.addressKey(address);
    const a = key === null ? undefined : this.addresses.get(key);
    if (!a) return;
    const h = hash(user);
    a.failures = a.failures.filter((f) => f.user !== h);
  }

  private get enabled(): boolean {
    return this.limits.maxFailures > 0;
  }

  private addressKey(address: string | undefined): string | null {
    if (!this.enabled || !address) return null;
    const key = normalizeAddress(address);
    return this.trusted.has(key) ? null : key;
  }

  private addressEntry(address: string | undefined): AddressEntry | undefined {
    const key = this.addressKey(address);
    return key === null ? undefined : this.addresses.get(key);
  }

  private addressExpired(e: AddressEntry, now: number): boolean {
    return e.bannedUntil <= now && e.failures.every((f) => now - f.at >= this.limits.findTimeSeconds * 1000);
  }

  private userExpired(e: UserEntry, now: number): boolean {
    return e.lockedUntil <= now && now - e.lastAt > this.limits.lockTimeSeconds * 1000;
  }
}

/**
 * Add an entry to a bounded map. When full, it is swept down to 90 % (so sweeps are rare): expired entries first,
 * then the oldest that hold no ban or lock, and only then the oldest of all. A flood of new addresses or logins
 * cannot push an active ban out while other entries remain.
 */
function remember<T>(map: Map<string, T>, key: string, entry: T, expired: (e: T) => boolean, active: (e: T) => boolean): T {
  if (map.size >= MAX_ENTRIES) {
    const target = Math.floor(MAX_ENTRIES * 0.9);
    for (const [k, e] of map) if (expired(e)) map.delete(k);
    for (const [k, e] of map) {
      if (map.size <= target) break;
      if (!active(e)) map.delete(k);
    }
    for (const k of map.keys()) {
      if (map.size <= target) break;
      map.delete(k);
    }
  }
  map.set(key, entry);
  return entry;
}

/** 32-bit FNV-1a of a string (a short stand-in for a user key in an address's failure list). */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The counter key of an address: an IPv4 address as it is (also when mapped into IPv6, `::ffff:10.0.0.1`); an IPv6
 * address by its /64 network, the block one host usually holds whole, so that stepping through it gains nothing.
 */
export function normalizeAddress(address: string): string {
  const a = address.trim().toLowerCase().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(':')) return a;
  const [head = '', tail] = a.split('::', 2);
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  // Only the exact loopback is one host, not a network: it stays as it is (the trusted default is `::1`).
  if (groups.every((g, i) => (i < 7 ? /^0*$/.test(g) : /^0*1$/.test(g)))) return '::1';
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}

/** Logins longer than any username or email are cut to this many characters in a counter key (memory stays bounded). */
const MAX_LOGIN_KEY = 256;

/** The counter key of a sign-in: the user's id when the login names one, else the login itself. */
export const userKey = (login: string, userId: number | undefined) =>
  userId !== undefined ? `id:${userId}` : `login:${login.slice(0, MAX_LOGIN_KEY).toLowerCase()}`;

const throttles = new WeakMap<AppContext['db'], SignInThrottle>();

/** The throttle of a daemon (one per database, so that test apps in one process do not share counters). */
export function signInThrottle(ctx: AppContext): SignInThrottle {
  let t = throttles.get(ctx.db);
  if (!t) {
    t = new SignInThrottle(ctx.config.limits.signIn);
    throttles.set(ctx.db, t);
  }
  return t;
}
