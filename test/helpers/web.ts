/** Reading the web pages in tests: sign a user in through /users/sign_in, then GET pages with its session cookie. */
import type { TestServer, TestUser } from './app.js';
import { browse, CookieJar, csrfOf } from './oauth.js';

/** Sign `user` in through /users/sign_in; returns its cookie jar. */
export async function signIn(s: TestServer, user: TestUser | { username: string }, password = 'password123'): Promise<CookieJar> {
  const jar = new CookieJar();
  const form = await browse(s, jar, 'GET', '/users/sign_in');
  const r = await browse(s, jar, 'POST', '/users/sign_in', { login: user.username, password, authenticity_token: csrfOf(form.body), redirect_to: '/' });
  if (r.statusCode !== 303) throw new Error(`sign-in failed: ${r.statusCode} ${r.body.slice(0, 300)}`);
  return jar;
}

/**
 * A page reader: `read(url, who)` GETs a page (a web_url or a path) as the named user, signed in once and remembered,
 * or anonymously (null). `users` names the users and their passwords.
 */
export function pageReader<K extends string>(s: TestServer, users: Record<K, TestUser>, passwordOf: (who: K) => string = () => 'password123') {
  const jars = new Map<K, CookieJar>();
  return async (url: string, who: K | null) => {
    let jar = new CookieJar();
    if (who) {
      jar = jars.get(who) ?? (await signIn(s, users[who], passwordOf(who)));
      jars.set(who, jar);
    }
    return s.app.inject({ method: 'GET', url: url.replace(/^https?:\/\/[^/]+/, ''), headers: { cookie: jar.header() } });
  };
}
