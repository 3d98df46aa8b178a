/**
 * The keys domain: SSH public keys of users and deploy keys of projects (parse and fingerprint, create, list, find,
 * delete, enable on projects) and the lookup the built-in SSH server authenticates presented keys with.
 */
export * from './parse.js';
export * from './keys.js';
