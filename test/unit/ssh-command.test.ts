import { describe, expect, it } from 'vitest';
import { parseSshCommand, projectPathOf, splitCommandLine } from '../../daemon/ssh/command.js';
import { advertisedSshAddress, sshCloneUrl } from '../../daemon/ssh/address.js';
import { resolveConfig } from '../../daemon/config.js';

describe('parseSshCommand', () => {
  it('accepts git-upload-pack and git-receive-pack as git and its ports send them', () => {
    const cases: [string, string, string][] = [
      ["git-upload-pack '/root/app.git'", 'git-upload-pack', 'root/app'],
      ["git-upload-pack 'root/app.git'", 'git-upload-pack', 'root/app'],
      ["git-receive-pack '/root/app.git'", 'git-receive-pack', 'root/app'],
      ["git upload-pack '/root/app.git'", 'git-upload-pack', 'root/app'],
      ["git receive-pack 'root/app'", 'git-receive-pack', 'root/app'],
      ['git-upload-pack root/app.git', 'git-upload-pack', 'root/app'],
      ['git-upload-pack "/root/app.git"', 'git-upload-pack', 'root/app'],
      ["git-upload-pack '/root/app.git/'", 'git-upload-pack', 'root/app'],
      ["git-upload-pack '/Group.Name/my_app-2.GIT'", 'git-upload-pack', 'Group.Name/my_app-2'],
      ["  git-upload-pack   '/root/app.git'  ", 'git-upload-pack', 'root/app'],
    ];
    for (const [command, service, path] of cases) expect(parseSshCommand(command), command).toEqual({ ok: true, service, path });
  });

  it('undoes git quoting of quotes and exclamation marks (sq_quote_buf)', () => {
    expect(splitCommandLine("git-upload-pack 'a'\\''b'")).toEqual(['git-upload-pack', "a'b"]);
    expect(splitCommandLine("git-upload-pack 'a'\\!'b'")).toEqual(['git-upload-pack', 'a!b']);
    expect(splitCommandLine('x "a\\"b" c\\ d')).toEqual(['x', 'a"b', 'c d']);
  });

  it('refuses every other command with a line that says what Gantry serves', () => {
    for (const command of ['ls', 'sh -c id', 'git-upload-archive /root/app.git', 'scp -t /tmp', 'git status', 'rm -rf /', 'git', 'git-upload-packx root/app']) {
      const r = parseSshCommand(command);
      expect(r.ok, command).toBe(false);
      if (!r.ok) expect(r.message, command).toMatch(/is not a command Gantry runs\. Gantry only serves git over SSH/);
    }
  });

  it('refuses shell syntax, options, extra or missing arguments, and oversized input', () => {
    for (const command of [
      "git-upload-pack '/root/app.git'; id", 'git-upload-pack $(id)', 'git-upload-pack `id`', 'git-upload-pack root/app.git | cat',
      "git-upload-pack '/root/app.git' > /tmp/x", 'git-upload-pack "$HOME/x"', "git-upload-pack 'unterminated", 'git-upload-pack *',
      'git-upload-pack', "git-upload-pack 'a/b' 'c/d'", "git-upload-pack --strict 'root/app'", "git-upload-pack '--help'",
      `git-upload-pack '${'a'.repeat(5000)}'`, "git-upload-pack 'root/app\0.git'", '',
    ]) {
      expect(parseSshCommand(command).ok, command).toBe(false);
    }
  });
});

describe('projectPathOf', () => {
  it('gives namespace/project for the forms git sends', () => {
    expect(projectPathOf('/root/app.git')).toBe('root/app');
    expect(projectPathOf('root/app')).toBe('root/app');
    expect(projectPathOf('root/app.git/')).toBe('root/app');
  });

  it('refuses traversal, absolute paths elsewhere, other depths, control characters and NUL', () => {
    for (const path of [
      '../root/app.git', '/root/../app.git', 'root/..', '/etc/ssh/sshd_config', '/var/lib/gantry/repositories/1.git', '//root/app.git',
      'root//app.git', 'root/app/extra.git', 'app.git', '7', '/7', '.hidden/app', 'root/.app', 'root/-app', 'root\\app', 'root/app\0',
      'root/app\n', 'root/ app', '~root/app.git', '',
    ]) {
      expect(projectPathOf(path), JSON.stringify(path)).toBeNull();
    }
    // Two names are only ever a key for the project lookup (never a file): /etc/passwd asks for a project etc/passwd.
    expect(projectPathOf('/etc/passwd')).toBe('etc/passwd');
  });
});

describe('ssh_url_to_repo', () => {
  const ssh = (flags: Record<string, string>) => resolveConfig(flags, {}).ssh;

  it('uses the ssh:// form off port 22 and the scp form on 22', () => {
    expect(sshCloneUrl({ host: 'git.example.com', port: 2222 }, 'ns/app.git')).toBe('ssh://git@git.example.com:2222/ns/app.git');
    expect(sshCloneUrl({ host: 'git.example.com', port: 22 }, 'ns/app.git')).toBe('git@git.example.com:ns/app.git');
    expect(sshCloneUrl({ host: '::1', port: 2222 }, 'ns/app.git')).toBe('ssh://git@[::1]:2222/ns/app.git');
  });

  it('advertises the external host and port when given, else --ssh-host (unless a wildcard), else the external URL host', () => {
    expect(advertisedSshAddress(ssh({}), 'http://gantry.test:3080', 2222)).toEqual({ host: 'gantry.test', port: 2222 });
    expect(advertisedSshAddress(ssh({ sshHost: '10.0.0.5' }), 'http://gantry.test', 40000)).toEqual({ host: '10.0.0.5', port: 40000 });
    expect(advertisedSshAddress(ssh({ sshHost: '0.0.0.0' }), 'https://git.example.com', 2222)).toEqual({ host: 'git.example.com', port: 2222 });
    expect(advertisedSshAddress(ssh({ sshExternalHost: 'ssh.example.com', sshExternalPort: '22' }), 'http://x.test', 2222)).toEqual({ host: 'ssh.example.com', port: 22 });
    // SSH off and nothing advertised: the scp form on the external URL's host, as before the SSH server existed
    expect(advertisedSshAddress(ssh({ sshPort: 'off' }), 'http://gantry.test', null)).toEqual({ host: 'gantry.test', port: 22 });
  });
});
