import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess, type RunOptions } from '../../../lib/process/runner.ts';
import { tempDir } from '../../support/temp.ts';

const node = process.execPath;
const temp = () => tempDir('ralph-runner-');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};
const options = (extra: Partial<RunOptions> = {}): RunOptions => ({
  cwd: os.tmpdir(),
  baseEnv: process.env,
  timeoutMs: 20_000,
  idleTimeoutMs: 20_000,
  graceMs: 300,
  signal: new AbortController().signal,
  ...extra,
});

// A parent that starts a grandchild ignoring SIGTERM, prints both pids, then ignores SIGTERM itself and hangs.
const STUBBORN_TREE = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['-e', "process.on('SIGTERM',()=>{}); setInterval(()=>{},1000)"], { stdio: 'ignore' });
process.on('SIGTERM', () => {});
console.log(JSON.stringify({ parent: process.pid, child: child.pid }));
setInterval(() => {}, 1000);
`;

describe('runProcess', () => {
  it('streams lines, copies raw stdout to the log, and reports the exit code as data', async () => {
    const dir = temp();
    const lines: string[] = [];
    const result = await runProcess(
      { bin: node, args: ['-e', 'console.log("one"); console.error("oops"); process.stdout.write("two"); process.exit(3)'] },
      options({ onLine: (line, stream) => lines.push(`${stream}:${line}`), stdoutLog: path.join(dir, 'out.jsonl') }),
    );
    expect(result).toMatchObject({ exitCode: 3, reason: 'exit' });
    expect(lines).toEqual(expect.arrayContaining(['stdout:one', 'stdout:two', 'stderr:oops']));
    expect(readFileSync(path.join(dir, 'out.jsonl'), 'utf8')).toBe('one\ntwo');
    expect(result.stderrTail).toContain('oops');
  });

  it('caps the logs: the head, the note, the line ralph acted on, the tail; nothing else left in the folder', async () => {
    const dir = temp();
    // 2 MB of numbered lines with one line ralph acts on in the middle, and a last line.
    const script = `for (let i = 0; i < 20000; i++) { if (i === 10000) console.log('ACTED'); console.log(String(i).padStart(99, '.')); } console.error('e'.repeat(200000)); console.log('LAST');`;
    const stdoutLog = path.join(dir, 'iteration-1.jsonl');
    const stderrLog = path.join(dir, 'iteration-1.stderr.log');
    const result = await runProcess({ bin: node, args: ['-e', script] }, options({ onLine: (line) => line === 'ACTED' || line === 'LAST', stdoutLog, stderrLog, logMaxBytes: 128 * 1024 }));
    expect(result).toMatchObject({ exitCode: 0, reason: 'exit' });
    const all = [...Array.from({ length: 20000 }, (_, i) => [...(i === 10000 ? ['ACTED'] : []), String(i).padStart(99, '.')]).flat(), 'LAST'].join('\n') + '\n';
    const log = readFileSync(stdoutLog, 'utf8');
    expect(log).toBe(`${all.slice(0, 65_536)}\n[ralph: ${all.length - 131_072} bytes of output left out here (--log-max-bytes); 1 line(s) ralph acted on follow, then the last 65536 bytes]\nACTED\n[ralph: the last 65536 bytes]\n${all.slice(-65_536)}`);
    // stderr is capped the same way, on its own.
    expect(readFileSync(stderrLog, 'utf8')).toBe(`${'e'.repeat(65_536)}\n[ralph: ${200_001 - 131_072} bytes of output left out here (--log-max-bytes); 0 line(s) ralph acted on follow, then the last 65536 bytes]\n[ralph: the last 65536 bytes]\n${'e'.repeat(65_535)}\n`);
    expect(readdirSync(dir).sort()).toEqual(['iteration-1.jsonl', 'iteration-1.stderr.log']);
  });

  it('writes a large prompt to stdin and closes it', async () => {
    const prompt = 'p'.repeat(3 * 1024 * 1024);
    let echoed = '';
    const result = await runProcess(
      { bin: node, args: ['-e', 'let n=0; process.stdin.on("data", c => n += c.length); process.stdin.on("end", () => console.log(n))'], stdin: prompt },
      options({ onLine: (line) => (echoed = line) }),
    );
    expect(result.exitCode).toBe(0);
    expect(echoed).toBe(String(prompt.length));
  });

  it('reports a missing binary as a spawn error', async () => {
    const result = await runProcess({ bin: 'definitely-not-a-real-agent', args: [] }, options());
    expect(result.reason).toBe('spawn_error');
    expect(result.spawnError).toMatch(/ENOENT/);
  });

  it('ends a silent agent on the idle timeout', async () => {
    const result = await runProcess({ bin: node, args: ['-e', 'setInterval(() => {}, 1000)'] }, options({ idleTimeoutMs: 200 }));
    expect(result.reason).toBe('idle');
    expect(result.signal).toBe('SIGTERM');
  });

  it('ends a chatty agent on the wall-clock timeout', async () => {
    const result = await runProcess({ bin: node, args: ['-e', 'setInterval(() => console.log("tick"), 20)'] }, options({ timeoutMs: 800, idleTimeoutMs: 10_000 }));
    expect(result.reason).toBe('timeout');
  });

  it('kills the whole tree, SIGKILL after the grace period, when aborted', async () => {
    const controller = new AbortController();
    let pids: { parent: number; child: number } | undefined;
    const started = Date.now();
    const result = await runProcess(
      { bin: node, args: ['-e', STUBBORN_TREE] },
      options({
        signal: controller.signal,
        onLine: (line) => {
          pids = JSON.parse(line) as { parent: number; child: number };
          controller.abort('SIGINT');
        },
      }),
    );
    expect(result.reason).toBe('aborted');
    expect(result.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(pids).toBeDefined();
    expect(alive(pids!.parent)).toBe(false);
    expect(alive(pids!.child)).toBe(false);
  });

  it('leaves nothing of the group behind when the agent exits normally', async () => {
    let child = 0;
    const script = `const c = require('node:child_process').spawn(process.execPath, ['-e', "process.on('SIGTERM',()=>{}); setInterval(()=>{},1000)"], { stdio: 'ignore' }); c.unref(); console.log(c.pid);`;
    const result = await runProcess({ bin: node, args: ['-e', script] }, options({ onLine: (line) => (child = Number(line)) }));
    expect(result.exitCode).toBe(0);
    expect(child).toBeGreaterThan(0);
    expect(alive(child)).toBe(false);
  });

  it('records the end of the agent when its last process is gone, its own exit code, signal and spawn error untouched', async () => {
    const dir = temp();
    const endFile = path.join(dir, 'end');
    let during: boolean | undefined;
    const result = await runProcess({ bin: 'sh', args: ['-c', 'echo started; sleep 0.1; exit 7'] }, options({ endFile, onLine: () => (during = existsSync(endFile)) }));
    expect(result).toMatchObject({ exitCode: 7, signal: null, reason: 'exit' });
    expect(during).toBe(false);
    expect(existsSync(endFile)).toBe(true);
    const killed = await runProcess({ bin: 'sh', args: ['-c', 'kill -9 $$'] }, options({ endFile: path.join(dir, 'end2') }));
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    const missing = await runProcess({ bin: 'definitely-not-a-real-agent', args: [] }, options({ endFile: path.join(dir, 'end3') }));
    expect(missing.reason).toBe('spawn_error');
  });
});
