import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync, symlinkSync, readFileSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommitGuard, decideCommitSet, describeLeftOut, keepLeftOutFiles, listPaths, MAX_SCANNED_BYTES, privateByName, startNotes, withUserWorkNote, type ScanResult } from '../../../lib/repo/commit-set.ts';
import { Git } from '../../../lib/repo/git.ts';
import { Redactor } from '../../../lib/redact/index.ts';
import { tempDir } from '../../support/temp.ts';

describe('privateByName', () => {
  it.each([
    ['.env', 'an environment file'],
    ['app/.env.local', 'an environment file'],
    ['.env.production', 'an environment file'],
    ['config/prod.env', 'an environment file'],
    ['id_rsa', 'a credentials file'],
    ['home/.ssh/id_ed25519', 'a credentials file'],
    ['.git-credentials', 'a credentials file'],
    ['certs/server.pem', 'a key or certificate file'],
    ['tls/private.key', 'a key or certificate file'],
    ['store.p12', 'a key or certificate file'],
  ])('%s is %s', (file, what) => {
    expect(privateByName(file)).toBe(what);
  });

  it.each(['.env.example', '.env.sample', '.env.template', 'docs/env.md', 'src/environment.ts', 'id_rsa.pub', 'keyboard.ts', 'sample.example.env'])('%s is an ordinary file', (file) => {
    expect(privateByName(file)).toBeUndefined();
  });
});

describe('decideCommitSet', () => {
  const clean = (): ScanResult => ({ kind: 'clean' });
  const base = { userPaths: new Set<string>(), bookkeeping: [] as string[], scan: clean };

  it('commits what the run changed and leaves out what the user had changed before it', () => {
    const set = decideCommitSet(['src/new.ts', 'src/app.ts', 'notes.md'], { ...base, userPaths: new Set(['src/app.ts', 'notes.md']) });
    expect(set.paths).toEqual(['src/new.ts']);
    expect(set.leftOut).toEqual([
      { path: 'src/app.ts', why: { kind: 'user' } },
      { path: 'notes.md', why: { kind: 'user' } },
    ]);
  });

  it("commits the source's state files even when the user had changed them (they hold the task state)", () => {
    const set = decideCommitSet(['prd.json', '.rulebook-ralph/history/iteration-1.json'], { ...base, userPaths: new Set(['prd.json']), bookkeeping: ['prd.json', '.rulebook-ralph/history'] });
    expect(set.paths).toEqual(['prd.json', '.rulebook-ralph/history/iteration-1.json']);
    expect(set.leftOut).toEqual([]);
  });

  it("commits a state file of the source even when its name looks private (the source's, not the agent's)", () => {
    const set = decideCommitSet(['state/credentials', 'credentials'], { ...base, bookkeeping: ['state/'] });
    expect(set.paths).toEqual(['state/credentials']);
    expect(set.leftOut.map(describeLeftOut)).toEqual(['credentials (a credentials file: never committed by ralph)']);
  });

  it('leaves out a file holding a secret value, naming the variable, even a state file', () => {
    const scan = (file: string): ScanResult => (file === 'config.local.json' || file === 'progress.txt' ? { kind: 'secret', names: ['ANTHROPIC_API_KEY'] } : { kind: 'clean' });
    const set = decideCommitSet(['config.local.json', 'progress.txt', 'src/a.ts'], { ...base, bookkeeping: ['progress.txt'], scan });
    expect(set.paths).toEqual(['src/a.ts']);
    expect(set.leftOut.map(describeLeftOut)).toEqual(['config.local.json (holds the value of ANTHROPIC_API_KEY)', 'progress.txt (holds the value of ANTHROPIC_API_KEY)']);
  });

  it('leaves out environment files and private keys the agent made, by name or by content', () => {
    const scan = (file: string): ScanResult => (file === 'deploy/key.txt' ? { kind: 'private', what: 'a private key' } : { kind: 'clean' });
    const set = decideCommitSet(['.env', '.env.example', 'deploy/key.txt', 'src/a.ts'], { ...base, scan });
    expect(set.paths).toEqual(['.env.example', 'src/a.ts']);
    expect(set.leftOut.map(describeLeftOut)).toEqual(['.env (an environment file: never committed by ralph)', 'deploy/key.txt (a private key: never committed by ralph)']);
  });

  it('commits a deletion (nothing left to hold a secret), even of an environment file', () => {
    const set = decideCommitSet(['.env', 'old.ts'], { ...base, scan: () => ({ kind: 'gone' }) });
    expect(set.paths).toEqual(['.env', 'old.ts']);
  });

  it('leaves out a file it could not check', () => {
    const set = decideCommitSet(['big.bin'], { ...base, scan: () => ({ kind: 'unchecked', bytes: 100 * 1024 * 1024 }) });
    expect(set.paths).toEqual([]);
    expect(set.leftOut.map(describeLeftOut)).toEqual(['big.bin (100 MB: too big to check for secrets)']);
  });

  it('says why a file was not checked: too big only past the limit, else unreadable', () => {
    const unchecked = (bytes: number) => describeLeftOut({ path: 'f.bin', why: { kind: 'unchecked', bytes } });
    expect(unchecked(MAX_SCANNED_BYTES + 1)).toBe('f.bin (64 MB: too big to check for secrets)');
    expect(unchecked(MAX_SCANNED_BYTES)).toBe('f.bin (could not be read to check for secrets)');
    expect(unchecked(0)).toBe('f.bin (could not be read to check for secrets)');
  });
});

describe('CommitGuard.scan', () => {
  const secret = 'sk-live-0123456789abcdef';
  const guard = new CommitGuard(new Set(), () => [], new Redactor({ env: { MY_API_KEY: secret, HOME: '/home/someone' } }));

  it('finds the value of a secret variable (as written or JSON-escaped) and names only the variable', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ key: secret }));
    writeFileSync(path.join(dir, 'b.txt'), 'nothing here\n');
    expect(guard.scan(path.join(dir, 'a.json'))).toEqual({ kind: 'secret', names: ['MY_API_KEY'] });
    expect(guard.scan(path.join(dir, 'b.txt'))).toEqual({ kind: 'clean' });
  });

  it('finds a private key block, not the words alone', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'k'), '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
    writeFileSync(path.join(dir, 'doc.md'), 'Never commit a PRIVATE KEY.\n');
    expect(guard.scan(path.join(dir, 'k'))).toEqual({ kind: 'private', what: 'a private key' });
    expect(guard.scan(path.join(dir, 'doc.md'))).toEqual({ kind: 'clean' });
  });

  it('calls a path under what is now a file gone (a folder replaced by a file): its deletion is committed', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'lib'), 'now a file\n');
    expect(guard.scan(path.join(dir, 'lib', 'old.ts'))).toEqual({ kind: 'gone' });
  });

  it('finds a PKCS#8 key block, which names no algorithm', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'k8'), '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');
    writeFileSync(path.join(dir, 'enc'), '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n');
    expect(guard.scan(path.join(dir, 'k8'))).toEqual({ kind: 'private', what: 'a private key' });
    expect(guard.scan(path.join(dir, 'enc'))).toEqual({ kind: 'private', what: 'a private key' });
  });

  it('reads no folder and no symlink, and calls a missing file gone', () => {
    const dir = tempDir('ralph-scan-');
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'target'), secret);
    symlinkSync(path.join(dir, 'target'), path.join(dir, 'link'));
    expect(guard.scan(path.join(dir, 'sub'))).toEqual({ kind: 'clean' });
    expect(guard.scan(path.join(dir, 'link'))).toEqual({ kind: 'clean' });
    expect(guard.scan(path.join(dir, 'missing'))).toEqual({ kind: 'gone' });
  });

  it('reads files up to 64 MB: a secret at the end of a 1 MB file is found', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'big.log'), `${'x'.repeat(1024 * 1024)}\n${secret}\n`);
    expect(guard.scan(path.join(dir, 'big.log'))).toEqual({ kind: 'secret', names: ['MY_API_KEY'] });
  });

  it('a file of exactly 64 MB is still read; one byte more is too big to check', () => {
    const dir = tempDir('ralph-scan-');
    // Sparse files: only the key block at the end is written. No redactor, so only the key check reads them.
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n';
    const sized = (name: string, size: number): string => {
      const file = path.join(dir, name);
      writeFileSync(file, '');
      truncateSync(file, size - key.length);
      appendFileSync(file, key);
      expect(statSync(file).size).toBe(size);
      return file;
    };
    const keysOnly = new CommitGuard(new Set(), () => [], undefined);
    expect(MAX_SCANNED_BYTES).toBe(64 * 1024 * 1024);
    expect(keysOnly.scan(sized('at-limit.bin', MAX_SCANNED_BYTES))).toEqual({ kind: 'private', what: 'a private key' });
    expect(keysOnly.scan(sized('over-limit.bin', MAX_SCANNED_BYTES + 1))).toEqual({ kind: 'unchecked', bytes: MAX_SCANNED_BYTES + 1 });
  });

  it('finds nothing with redaction off (--no-redact)', () => {
    const dir = tempDir('ralph-scan-');
    writeFileSync(path.join(dir, 'a'), secret);
    const off = new CommitGuard(new Set(), () => [], new Redactor({ env: { MY_API_KEY: secret }, enabled: false }));
    expect(off.scan(path.join(dir, 'a'))).toEqual({ kind: 'clean' });
  });

  it('names a left-out path once per run, whichever guard of the run saw it', () => {
    const item = { path: '.env', why: { kind: 'private' as const, what: 'an environment file' } };
    expect(guard.firstMention(item)).toBe(true);
    expect(guard.forWorktree().firstMention(item)).toBe(false);
  });
});

describe('CommitGuard.inCommits', () => {
  const secret = 'sk-live-0123456789abcdef';
  const guard = new CommitGuard(new Set(), () => [], new Redactor({ env: { MY_API_KEY: secret } }));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test' };
  const git = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' }).trim();

  it("finds what the agent's own commits add that ralph would never commit, and only what they add", async () => {
    const dir = tempDir('ralph-incommits-');
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(dir, 'old.env'), `KEY=${secret}\n`);
    writeFileSync(path.join(dir, 'a.ts'), `const a = 1;\n`);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'base');
    const base = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'a.ts'), `const a = 1;\nconst key = '${secret}';\n`);
    writeFileSync(path.join(dir, '.env.local'), 'DEBUG=1\n');
    mkdirSync(path.join(dir, 'deploy'));
    writeFileSync(path.join(dir, 'deploy', 'access'), '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n');
    writeFileSync(path.join(dir, 'clean.ts'), 'export {};\n');
    git(dir, 'rm', '-q', 'old.env');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'agent');
    const found = await guard.inCommits(new Git(dir), base, git(dir, 'rev-parse', 'HEAD'));
    // The removed file held the secret too: a deletion adds nothing.
    expect(found.map(describeLeftOut).sort()).toEqual(['.env.local (an environment file: never committed by ralph)', 'a.ts (holds the value of MY_API_KEY)', 'deploy/access (a private key: never committed by ralph)']);
  });
});

describe('CommitGuard.inPatch', () => {
  it('an environment file the commits only take lines out of adds nothing: not flagged', () => {
    const guard = new CommitGuard(new Set(), () => [], undefined);
    const patch = ['diff --git a/.env b/.env', 'index 1..2 100644', '--- a/.env', '+++ b/.env', '@@ -1,2 +1 @@', '-OLD=1', 'diff --git a/app.env b/app.env', '--- a/app.env', '+++ b/app.env', '@@ -1 +1,2 @@', '+NEW=1', ''].join('\n');
    expect(guard.inPatch(patch).map(describeLeftOut)).toEqual(['app.env (an environment file: never committed by ralph)']);
  });
});

describe('keepLeftOutFiles', () => {
  it('copies the files a worktree would lose into .ralph/left-out/, private', () => {
    const root = tempDir('ralph-keep-');
    const tree = tempDir('ralph-tree-');
    mkdirSync(path.join(tree, 'cfg'));
    writeFileSync(path.join(tree, 'cfg', '.env'), 'KEY=1\n');
    const saved = keepLeftOutFiles(root, tree, [{ path: 'cfg/.env', why: { kind: 'private', what: 'an environment file' } }, { path: 'mine.txt', why: { kind: 'user' } }], 's1/w2-i3');
    expect(saved).toBe(path.join('.ralph', 'left-out', 's1', 'w2-i3'));
    const copy = path.join(root, saved!, 'cfg', '.env');
    expect(readFileSync(copy, 'utf8')).toBe('KEY=1\n');
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    expect(keepLeftOutFiles(root, tree, [{ path: 'mine.txt', why: { kind: 'user' } }], 'x')).toBeUndefined();
  });
});

describe('listPaths', () => {
  it('names up to `most` paths, then how many more', () => {
    const five = ['a', 'b', 'c', 'd', 'e'];
    expect(listPaths(five)).toBe('a, b, c, d, e');
    expect(listPaths([...five, 'f'])).toBe('a, b, c, d, e and 1 more');
    expect(listPaths(five, 4)).toBe('a, b, c, d and 1 more');
  });
});

describe('withUserWorkNote', () => {
  it("tells the agent which paths are the user's own, the task state aside", () => {
    const prompt = withUserWorkNote('Do T003.\n', ['.env', 'src/app.ts', 'specs/001-x/tasks.md'], ['specs/001-x/tasks.md']);
    expect(prompt).toBe("Do T003.\n\n## Not yours to commit\n\nThese paths held the user's own uncommitted changes before this run: .env, src/app.ts. Leave them as they are: do not stage, commit, move or delete them. When you commit, add the files you changed by name (never `git add -A`, `git add .` or `git commit -a`).\n");
  });

  it('leaves the prompt alone without such paths, and a bare slash command always', () => {
    expect(withUserWorkNote('Do T003.', ['specs/001-x/tasks.md'], ['specs/001-x/tasks.md'])).toBe('Do T003.');
    expect(withUserWorkNote('/sp:next', ['.env'], [])).toBe('/sp:next');
  });
});

describe('startNotes', () => {
  const changed = ['src/app.ts', '.env', 'specs/001-x/tasks.md', '.ralph/status.json'];
  const state = ['specs/001-x/tasks.md', 'specs/001-x/progress.txt'];

  it('tells the user their changes stay theirs when ralph commits, and that the task state goes in', () => {
    expect(startNotes(changed, state, 'ralph')).toEqual([
      "uncommitted changes from before the run (2 paths: .env, src/app.ts) stay yours: ralph's commits leave them out, whatever the agent does to them",
      'the task state specs/001-x/tasks.md had uncommitted changes: ralph commits them with the task state',
    ]);
  });

  it('warns that an agent that commits itself may take them', () => {
    expect(startNotes(changed, state, 'agent')[0]).toMatch(/^uncommitted changes from before the run \(2 paths: .env, src\/app.ts\): ralph's own commits leave them out, but the agent commits its work itself and may include them$/);
  });

  it("says nothing about ralph's own files or its state files alone (no false alarm on a later run)", () => {
    expect(startNotes(['specs/001-x/progress.txt', '.ralph/logs/x', '.ralph.lock'], state, 'agent')).toEqual(['the task state specs/001-x/progress.txt had uncommitted changes: ralph commits them with the task state']);
    expect(startNotes(['specs/001-x/progress.txt'], state, 'off')).toEqual([]);
    expect(startNotes([], state, 'ralph')).toEqual([]);
  });
});
