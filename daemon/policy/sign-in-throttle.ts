/**
 * The failed sign-in throttle. Every password check (POST /session, git over HTTP basic auth, the OAuth password
 * grant and sign-in page) goes through services/users/users.ts signIn, which asks here before checking a password
 * (`attempt`) and reports the outcome after. Two counters, with GitLab 8.x's numbers (docs/decisions.md):
 *  - per client address, as Rack::Attack's git_basic_auth Allow2Ban: maxFailures failures within findTime ban the
 *    address for banTime; trusted addresses (a proxy on the same machine) are never banned;
 *  - per user, as Devise's lockable: maxFailures failures in a row lock the user for lockTime. Unknown logins have
 *    a counter too, so the answer never tells whether a user exists.
 * Where the counters live depends on the engine (docs/design/postgres.md, "Sign-in throttle"):
 *  - SQLite: in memory (SignInThrottle), exact because a SQLite file has one daemon; no write on the one writer per
 *    wrong password, so a guessing flood costs the database nothing; bounded in size; a restart forgets them;
 *  - PostgreSQL: in the UNLOGGED table sign_in_failures (SharedSignInThrottle), shared by every daemon on the
 *    database, so a ban made through one holds on all: one read per attempt, one upsert per wrong password that also
 *    decides the ban or lock (atomically, whichever daemon counts the last failure), expired rows swept by a worker.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { SignInLimits } from '../config.js';
import type { Database } from '../db/layer/types.js';
import { periodicWorker, type BackgroundWorker } from '../background.js';
import { ApiError } from '../errors.js';
import { countFailedUser, countFailedWithAddress, forgetSignInFailures, signInFailureRows, sweepSignInFailures, type SignInFailureRow } from '../db/sign-in-failures.js';
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

/** One sign-in attempt the throttle let through: report its outcome. */
export interface SignInAttempt {
  /** A wrong password (or unknown login): counts toward the ban and the lock. */
  failed(): Promise<void>;
  /** The right password of an active user: see SignInThrottle.succeeded. */
  succeeded(): Promise<void>;
}

/** The counters of a daemon, in memory (SQLite) or in the database (PostgreSQL). */
export interface SignInCounters {
  /** Milliseconds since the epoch; tests replace it to move time on. */
  clock: () => number;
  /**
   * Throws SignInThrottled when the address is banned (checked first) or the user (the key from userKey) is locked:
   * even the right password is refused, and none is checked. Else the attempt, to report its outcome on.
   */
  attempt(address: string | undefined, user: string): Promise<SignInAttempt>;
}

/** The throttle of one daemon (one database), in memory. */
export class SignInThrottle implements SignInCounters {
  /** Milliseconds since the epoch; tests replace it to move time on. */
  clock: () => number = Date.now;
  private readonly addresses = new Map<string, AddressEntry>();
  private readonly users = new Map<string, UserEntry>();
  private readonly trusted: Set<string>;

  constructor(private readonly limits: SignInLimits) {
    this.trusted = new Set(limits.trustedAddresses.map(normalizeAddress));
  }

  async attempt(address: string | undefined, user: string): Promise<SignInAttempt> {
    this.checkAddress(address);
    this.checkUser(user);
    return {
      failed: async () => this.failed(address, user),
      succeeded: async () => this.succeeded(address, user),
    };
  }

  /** Throws SignInThrottled when this address is banned. */
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

const iso = (ms: number) => new Date(ms).toISOString();

/** The stored key of a counter: SHA-256 hex, so that addresses and logins are not kept as text. */
const keyHash = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The counters of every daemon on one PostgreSQL database (table sign_in_failures), with the rules of the in-memory
 * SignInThrottle. A window here is fixed (it starts with its first failure and lasts findTime, as Rack::Attack's
 * counters), where the in-memory one slides over the last findTime; the limits, answers and metrics are the same.
 */
export class SharedSignInThrottle implements SignInCounters {
  clock: () => number = Date.now;
  private readonly trusted: Set<string>;

  constructor(private readonly data: Database, private readonly limits: SignInLimits) {
    this.trusted = new Set(limits.trustedAddresses.map(normalizeAddress));
  }

  private get enabled(): boolean {
    return this.limits.maxFailures > 0;
  }

  /** The hashed key of a counted address, or null (no address, a trusted one, or the throttle is off). */
  private addressHash(address: string | undefined): string | null {
    if (!this.enabled || !address) return null;
    const key = normalizeAddress(address);
    return this.trusted.has(key) ? null : keyHash(`address:${key}`);
  }

  /** One read: the address's ban, the user's lock and whether a success has anything to forget. */
  async attempt(address: string | undefined, user: string): Promise<SignInAttempt> {
    const addressKey = this.addressHash(address);
    const userKey = keyHash(`user:${user}`);
    const pairKey = addressKey === null ? null : keyHash(`pair:${addressKey}:${userKey}`);
    let rows: SignInFailureRow[] = [];
    if (this.enabled) {
      rows = await signInFailureRows(this.data, addressKey, userKey, pairKey);
      const now = this.clock();
      for (const scope of ['address', 'user'] as const) {
        const ends = rows.find((r) => r.scope === scope)?.ends_at;
        const until = ends ? Date.parse(ends) : 0;
        if (until > now) {
          (scope === 'address' ? throttledAddress : throttledUser).inc();
          throw new SignInThrottled(seconds(until - now), scope);
        }
      }
    }
    const userRow = rows.find((r) => r.scope === 'user');
    const pairRow = rows.find((r) => r.scope === 'pair');
    return {
      failed: () => this.failed(addressKey, pairKey, userKey),
      // Nothing to forget (the common case): no write.
      succeeded: async () => {
        if ((userRow && userRow.failures > 0) || pairRow) await this.succeeded(addressKey, pairKey, userKey);
      },
    };
  }

  private async failed(addressKey: string | null, pairKey: string | null, userKey: string): Promise<void> {
    failures.inc();
    if (!this.enabled) return;
    const now = this.clock();
    const { maxFailures, findTimeSeconds, banTimeSeconds, lockTimeSeconds } = this.limits;
    const stale = iso(now - lockTimeSeconds * 1000);
    const lockEnd = iso(now + lockTimeSeconds * 1000);
    if (addressKey === null || pairKey === null) {
      await countFailedUser(this.data, { user: userKey, now: iso(now), limit: maxFailures, stale, lockEnd });
      return;
    }
    await countFailedWithAddress(this.data, {
      address: addressKey, pair: pairKey, user: userKey, now: iso(now), windowStart: iso(now - findTimeSeconds * 1000), limit: maxFailures,
      banEnd: iso(now + banTimeSeconds * 1000), stale, lockEnd,
    });
  }

  /** The user's count starts again; the address forgets this login's failures in its current window (not others'). */
  private async succeeded(addressKey: string | null, pairKey: string | null, userKey: string): Promise<void> {
    await forgetSignInFailures(this.data, userKey, pairKey, addressKey);
  }

  /**
   * Delete the rows that no longer hold anything: bans and locks over, windows past, users whose last failure is
   * older than lockTime. One daemon at a time (an advisory lock; the others skip this round). Returns the count.
   */
  async sweep(): Promise<number> {
    const now = this.clock();
    return sweepSignInFailures(this.data, iso(now), iso(now - this.limits.lockTimeSeconds * 1000), iso(now - this.limits.findTimeSeconds * 1000));
  }
}

const throttles = new WeakMap<Database, SignInCounters>();

/**
 * The throttle of a daemon (one per database handle, so that test apps in one process do not share counters): in
 * memory on SQLite, the shared table on PostgreSQL.
 */
export function signInThrottle(ctx: Pick<AppContext, 'data' | 'config'>): SignInCounters {
  let t = throttles.get(ctx.data);
  if (!t) {
    const limits = ctx.config.limits.signIn;
    t = ctx.data.dialect.name === 'postgres' ? new SharedSignInThrottle(ctx.data, limits) : new SignInThrottle(limits);
    throttles.set(ctx.data, t);
  }
  return t;
}

/** How often a daemon on PostgreSQL sweeps expired counters (any daemon may; one at a time). */
const SWEEP_EVERY_MS = 60_000;

// The sweep of the shared counters (the in-memory ones bound themselves): started with the daemon on PostgreSQL.
export const signInThrottlePruneWorker: BackgroundWorker = periodicWorker('sign-in throttle sweep', {
  everyMs: () => SWEEP_EVERY_MS,
  what: 'sign-in throttle sweep',
  when: (ctx) => ctx.data.dialect.name === 'postgres' && signInThrottle(ctx) instanceof SharedSignInThrottle,
  job: (ctx) => (signInThrottle(ctx) as SharedSignInThrottle).sweep(),
});
