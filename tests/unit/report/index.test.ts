import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import type { Deps } from '../../../lib/deps.ts';
import { RalphError } from '../../../lib/errors.ts';
import { listSessions, writeReports } from '../../../lib/report/index.ts';
import { reportCommand } from '../../../lib/cli/report.ts';
import { sampleSummary } from './fixture.ts';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function fakeDeps(cwd: string, env: NodeJS.ProcessEnv = {}): Deps & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    cwd,
    env,
    now: () => 0,
    sleep: async () => undefined,
    random: () => 0,
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: () => true },
    exec: async () => ({ exitCode: 1, stdout: '', stderr: '' }),
  };
}

describe('writeReports', () => {
  it('saves the summary and writes both reports atomically', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-report-'));
    const summary = sampleSummary();
    const paths = writeReports(root, summary);
    expect(paths).toEqual({
      markdown: path.join(root, '.ralph', 'reports', '20260102-030000.md'),
      html: path.join(root, '.ralph', 'reports', '20260102-030000.html'),
    });
    expect(readFileSync(paths.markdown, 'utf8')).toContain('# ralph session 20260102-030000');
    expect(readFileSync(paths.html, 'utf8')).toContain('<svg');
    expect(JSON.parse(readFileSync(path.join(root, '.ralph', 'sessions', '20260102-030000.json'), 'utf8'))).toEqual(summary);
    // no temp files left behind
    expect(readdirSync(path.join(root, '.ralph', 'reports')).sort()).toEqual(['20260102-030000.html', '20260102-030000.md']);
  });
});

describe('ralph report', () => {
  const seed = (): void => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-report-'));
    writeReports(root, sampleSummary({ sessionId: '20260101-090000' }));
    writeReports(root, sampleSummary({ sessionId: '20260102-030000' }));
    rmSync(path.join(root, '.ralph', 'reports'), { recursive: true });
  };

  it('regenerates the latest session by default and prints the paths', async () => {
    seed();
    const deps = fakeDeps(root);
    expect(await reportCommand(parseArgv(['report']), deps)).toBe(0);
    const md = path.join(root, '.ralph', 'reports', '20260102-030000.md');
    const html = path.join(root, '.ralph', 'reports', '20260102-030000.html');
    expect(deps.out.join('')).toBe(`${md}\n${html}\n`);
    expect(existsSync(md) && existsSync(html)).toBe(true);
    expect(existsSync(path.join(root, '.ralph', 'reports', '20260101-090000.md'))).toBe(false);
    expect(listSessions(root)).toEqual(['20260101-090000', '20260102-030000']);
  });

  it('takes a session id (or a file name) and prints JSON with --json or RALPH_JSON', async () => {
    seed();
    const deps = fakeDeps(root);
    expect(await reportCommand(parseArgv(['report', '20260101-090000', '--json']), deps)).toBe(0);
    expect(JSON.parse(deps.out.join(''))).toEqual({
      markdown: path.join(root, '.ralph', 'reports', '20260101-090000.md'),
      html: path.join(root, '.ralph', 'reports', '20260101-090000.html'),
      sessionId: '20260101-090000',
    });
    const byEnv = fakeDeps(root, { RALPH_JSON: '1' });
    await reportCommand(parseArgv(['report', '.ralph/sessions/20260102-030000.json']), byEnv);
    expect(JSON.parse(byEnv.out.join('')).sessionId).toBe('20260102-030000');
  });

  it('names an unknown session and lists the known ones', async () => {
    seed();
    const error = await reportCommand(parseArgv(['report', '20250101-000000']), fakeDeps(root)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RalphError);
    expect((error as RalphError).exitCode).toBe(1);
    expect((error as RalphError).message).toBe('unknown session "20250101-000000": known sessions (newest first): 20260102-030000, 20260101-090000');
  });

  it('explains when no session was recorded yet, and rejects a broken summary', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-report-'));
    await expect(reportCommand(parseArgv(['report']), fakeDeps(root))).rejects.toThrow(/no sessions recorded in .*\.ralph\/sessions/);
    writeReports(root, sampleSummary());
    const file = path.join(root, '.ralph', 'sessions', '20260102-030000.json');
    writeFileSync(file, '{"hello":1}');
    await expect(reportCommand(parseArgv(['report']), fakeDeps(root))).rejects.toThrow(/not a ralph session summary/);
  });
});
