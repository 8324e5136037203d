import { describe, expect, it } from 'vitest';
import { NO_REDACTION, Redactor, isSecretName, redactingOutput, secretLiterals } from '../../../lib/redact/index.ts';

const ANTHROPIC = 'sk-ant-api03-AbCdEf0123456789_xyzXYZ-0123456789abcdef';
const env = {
  ANTHROPIC_API_KEY: ANTHROPIC,
  MY_SERVICE_TOKEN: 'tok-7f3a9c1e55b2',
  db_password: 'hunter2hunter2',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  GOOGLE_APPLICATION_CREDENTIALS: '/home/dev/.config/gcloud/creds.json',
  SHORT_TOKEN: 'abc1234',
  HOME: '/home/dev',
  PATH: '/usr/local/bin:/usr/bin:/bin',
  EDITOR: 'vim-editor-long',
};
const redactor = new Redactor({ env });

describe('secret environment variables', () => {
  it.each([
    ['ANTHROPIC_API_KEY', true],
    ['MY_SERVICE_TOKEN', true],
    ['STRIPE_SECRET', true],
    ['db_password', true],
    ['GOOGLE_APPLICATION_CREDENTIALS', true],
    ['HOME', false],
    ['PATH', false],
    ['EDITOR', false],
    ['PASSWD_FILE', false],
  ])('%s is secret: %s', (name, secret) => {
    expect(isSecretName(name)).toBe(secret);
  });

  it('takes extra names and * globs from the configuration', () => {
    expect(isSecretName('DATABASE_URL', ['DATABASE_URL'])).toBe(true);
    expect(isSecretName('SENTRY_DSN', ['*_DSN'])).toBe(true);
    expect(isSecretName('SENTRY_DSN_HOST', ['*_DSN'])).toBe(false);
    expect(isSecretName('my_conn', ['MY_*'])).toBe(true);
    const custom = new Redactor({ env: { DATABASE_URL: 'postgres://u:pw@db/x', OTHER: 'postgres://u:pw@db/y' }, names: ['DATABASE_URL'] });
    expect(custom.text('url postgres://u:pw@db/x and postgres://u:pw@db/y')).toBe('url [redacted:DATABASE_URL] and postgres://u:pw@db/y');
  });

  it('replaces each value by its name, wherever it appears', () => {
    expect(redactor.text(`key=${ANTHROPIC};`)).toBe('key=[redacted:ANTHROPIC_API_KEY];');
    expect(redactor.text('Bearer tok-7f3a9c1e55b2!')).toBe('Bearer [redacted:MY_SERVICE_TOKEN]!');
    expect(redactor.text('pw:hunter2hunter2hunter2')).toBe('pw:[redacted:db_password]hunter2');
    expect(redactor.text('cat /home/dev/.config/gcloud/creds.json')).toBe('cat [redacted:GOOGLE_APPLICATION_CREDENTIALS]');
  });

  it('ignores values shorter than 8 characters and variables with ordinary names', () => {
    expect(redactor.text('abc1234 /home/dev vim-editor-long')).toBe('abc1234 /home/dev vim-editor-long');
    expect(redactor.secretNames).toEqual(['ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'GOOGLE_APPLICATION_CREDENTIALS', 'MY_SERVICE_TOKEN', 'db_password']);
  });

  it('also finds a value in its JSON-escaped form', () => {
    const tricky = new Redactor({ env: { API_KEY: 'line1\nline2"quoted"\\end' } });
    const json = JSON.stringify({ text: 'the key is line1\nline2"quoted"\\end, done' });
    expect(tricky.text(json)).toBe(JSON.stringify({ text: 'the key is [redacted:API_KEY], done' }));
    expect(JSON.parse(tricky.text(json))).toEqual({ text: 'the key is [redacted:API_KEY], done' });
    expect(secretLiterals({ API_KEY: 'plainvalue1' })).toHaveLength(1);
  });

  it('names an environment value that also has a token shape after its variable', () => {
    expect(redactor.text(`"${ANTHROPIC}"`)).toBe('"[redacted:ANTHROPIC_API_KEY]"');
  });
});

describe('token shapes', () => {
  const none = new Redactor({ env: {} });
  it.each([
    ['sk-ant-api03-Zm9vYmFyYmF6cXV4', 'anthropic-key'],
    ['sk-proj-4f8e2A9b1C7d3E5f6G0h2J4k', 'openai-key'],
    ['sk-4f8e2A9b1C7d3E5f6G0h2J4kLmNoPq', 'openai-key'],
    ['ghp_16C7e42F292c6912E7710c838347Ae178B4a', 'github-token'],
    ['gho_16C7e42F292c6912E7710c838347Ae178B4a', 'github-token'],
    ['github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789', 'github-pat'],
    ['AKIAIOSFODNN7EXAMPLE', 'aws-access-key'],
    ['ASIAY34FZKBOKMUTVV7A', 'aws-access-key'],
    ['xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', 'slack-token'],
    ['xoxp-123456789012-1234567890', 'slack-token'],
  ])('%s → [redacted:%s]', (token, name) => {
    expect(none.text(`before ${token} after`)).toBe(`before [redacted:${name}] after`);
    expect(none.text(`${token}`)).toBe(`[redacted:${name}]`);
    expect(none.text(`{"k":"${token}"}`)).toBe(`{"k":"[redacted:${name}]"}`);
    expect(none.text(`KEY=${token}\n`)).toBe(`KEY=[redacted:${name}]\n`);
  });

  it('finds a token at the start of a line inside JSON text (after a \\n escape)', () => {
    expect(none.text('{"text":"first line\\nsk-ant-api03-Zm9vYmFyYmF6cXV4"}')).toBe('{"text":"first line\\n[redacted:anthropic-key]"}');
    expect(none.text('"a\\tghp_16C7e42F292c6912E7710c838347Ae178B4a"')).toBe('"a\\t[redacted:github-token]"');
  });

  it('leaves ordinary prose, identifiers and git hashes alone', () => {
    const text = [
      'The task-1234567890abcdefghij of the desk-2024-11-23-abcdefgh-ijklmn risk-assessment was done.',
      'commit 1f3e9a0b2c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f (HEAD -> main), parent 9c0d1e2f3a4b5c6d7e8f1f3e9a0b2c4d5e6f7a8b',
      'sk-learn is a library; sk-this-is-a-long-hyphenated-phrase has no digit; ghp_short; xoxo-gossip; AKIA12',
      'XAKIAIOSFODNN7EXAMPLE is part of a longer word, and so is mask-ant-api03-Zm9vYmFyYmF6cXV4.',
      'Keys, tokens, secrets and passwords are words too: KEY TOKEN SECRET PASSWORD CREDENTIAL.',
      'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, uuid 123e4567-e89b-12d3-a456-426614174000',
      'Über naïve café — ünïcödé text stays; emoji 🎉 too.',
    ].join('\n');
    expect(none.text(text)).toBe(text);
    expect(redactor.text(text)).toBe(text);
  });

  it('cuts a run longer than any real token at 256 characters of body', () => {
    const long = `sk-ant-${'a1'.repeat(200)}`;
    expect(none.text(long)).toBe(`[redacted:anthropic-key]${'a1'.repeat(200).slice(256)}`);
  });
});

describe('deep, disabled, outputs', () => {
  it('redacts every string of a JSON-like value and keeps untouched parts as they are', () => {
    const clean = { a: 1, b: ['x', { c: 'plain' }], d: null };
    expect(redactor.deep(clean)).toBe(clean);
    const dirty = { a: 1, b: ['x', { c: `got ${ANTHROPIC}` }], d: 'tok-7f3a9c1e55b2', e: clean };
    const out = redactor.deep(dirty);
    expect(out).toEqual({ a: 1, b: ['x', { c: 'got [redacted:ANTHROPIC_API_KEY]' }], d: '[redacted:MY_SERVICE_TOKEN]', e: clean });
    expect(out.e).toBe(clean);
    expect(dirty.d).toBe('tok-7f3a9c1e55b2');
  });

  it('passes everything through when disabled (--no-redact)', () => {
    const off = new Redactor({ env, enabled: false });
    expect(off.text(`k ${ANTHROPIC} ghp_16C7e42F292c6912E7710c838347Ae178B4a`)).toBe(`k ${ANTHROPIC} ghp_16C7e42F292c6912E7710c838347Ae178B4a`);
    const stream = off.stream();
    const chunk = Buffer.from(ANTHROPIC);
    expect(stream.push(chunk)).toBe(chunk);
    expect(NO_REDACTION.text(ANTHROPIC)).toBe(ANTHROPIC);
  });

  it('redacts what is written to an output, reading the current redactor at each write', () => {
    const written: string[] = [];
    let current = redactor;
    const out = redactingOutput({ write: (text: string) => written.push(text), isTTY: true, columns: 80 }, () => current);
    out.write(`a ${ANTHROPIC}\n`);
    current = NO_REDACTION;
    out.write(`b ${ANTHROPIC}\n`);
    expect(written).toEqual(['a [redacted:ANTHROPIC_API_KEY]\n', `b ${ANTHROPIC}\n`]);
    expect(out.isTTY).toBe(true);
    expect(out.columns).toBe(80);
  });
});
