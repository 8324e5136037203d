// Quality gates: the user's own check commands (type-check, lint, tests), run by ralph after each
// iteration. Gate commands are user-authored shell text, so they run through zx's `$` (bash), each in its
// own process group so a timeout or Ctrl+C ends everything they started (lib/process/helper.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config/index.ts';
import { abortError } from './errors.ts';
import { runCommand, runShellText, type HelperOptions, type HelperResult } from './process/helper.ts';
import type { Command } from './process/runner.ts';
import { BASH } from './process/zx.ts';

/** One gate to run: a short name for reports and the shell command. */
export interface GateCommand {
  name: string;
  command: string;
}

/** What one gate run produced: data, never an exception. */
export interface GateResult {
  name: string;
  command: string;
  passed: boolean;
  exitCode: number;
  durationMs: number;
  /** The last ~4 KB of stdout and stderr as they arrived, ANSI colours removed. */
  outputTail: string;
  timedOut?: boolean;
}

export interface RunGatesOptions {
  cwd: string;
  signal: AbortSignal;
  /** Limit for each gate; 0 or undefined means none. */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL for a gate's process group. */
  graceMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Wraps each gate's command (the run's sandbox): gates run where the agent ran, with the same limits. */
  wrap?: (command: Command) => Command;
}

export const OUTPUT_TAIL_BYTES = 4096;

// The placeholder `npm init` writes; running it would fail every iteration for no reason.
const NPM_PLACEHOLDER_TEST = 'Error: no test specified';

const SCRIPT_GATES: ReadonlyArray<{ name: string; scripts: readonly string[] }> = [
  { name: 'typecheck', scripts: ['typecheck', 'type-check', 'tsc'] },
  { name: 'lint', scripts: ['lint'] },
  { name: 'test', scripts: ['test'] },
];

function packageManager(root: string, declared: unknown): string {
  if (typeof declared === 'string') {
    const name = declared.split('@')[0];
    if (name === 'pnpm' || name === 'yarn' || name === 'bun' || name === 'npm') return name;
  }
  if (existsSync(path.join(root, 'pnpm-lock.yaml'))) return 'pnpm';
  if (existsSync(path.join(root, 'yarn.lock'))) return 'yarn';
  if (existsSync(path.join(root, 'bun.lockb')) || existsSync(path.join(root, 'bun.lock'))) return 'bun';
  return 'npm';
}

/** Gates found in package.json scripts: typecheck (or type-check, tsc), lint and test, in that order. */
export function detectGates(root: string): GateCommand[] {
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  } catch {
    return [];
  }
  if (typeof pkg !== 'object' || pkg === null) return [];
  const { scripts, packageManager: declared } = pkg as { scripts?: unknown; packageManager?: unknown };
  if (typeof scripts !== 'object' || scripts === null) return [];
  const table = scripts as Record<string, unknown>;
  const runner = packageManager(root, declared);
  const gates: GateCommand[] = [];
  for (const { name, scripts: candidates } of SCRIPT_GATES) {
    const script = candidates.find((key) => {
      const body = table[key];
      return typeof body === 'string' && body.trim() !== '' && !body.includes(NPM_PLACEHOLDER_TEST);
    });
    if (script) gates.push({ name, command: `${runner} run ${script}` });
  }
  return gates;
}

/** A short report name for a configured command: typecheck, lint or test when recognisable. */
export function gateName(command: string): string {
  if (/\b(typecheck|type-check|tsc|mypy|pyright)\b/i.test(command)) return 'typecheck';
  if (/\b(lint|eslint|biome|ruff|clippy)\b/i.test(command)) return 'lint';
  if (/\b(test|tests|vitest|jest|mocha|pytest)\b/i.test(command)) return 'test';
  const trimmed = command.trim();
  return trimmed.length > 40 ? `${trimmed.slice(0, 39)}…` : trimmed;
}

/** Gives each gate a unique name (`test`, `test-2`, …) so reports and history stay unambiguous. */
function uniqueNames(gates: GateCommand[]): GateCommand[] {
  const seen = new Map<string, number>();
  return gates.map((gate) => {
    const count = (seen.get(gate.name) ?? 0) + 1;
    seen.set(gate.name, count);
    return count === 1 ? gate : { ...gate, name: `${gate.name}-${count}` };
  });
}

/**
 * The gates of a run: `--gate CMD` (repeatable; also `gate` in ralph.config.json or RALPH_GATE), else
 * those detected in package.json. A single `--gate none` turns gates off.
 */
export function resolveGates(root: string, config: Pick<Config, 'extra'>): GateCommand[] {
  const configured = config.extra.get('gate');
  const list = (Array.isArray(configured) ? configured : typeof configured === 'string' ? [configured] : [])
    .map((command) => command.trim())
    .filter((command) => command !== '');
  if (list.length === 1 && list[0] === 'none') return [];
  if (list.length > 0) return uniqueNames(list.map((command) => ({ name: gateName(command), command })));
  return detectGates(root);
}

// CSI and OSC sequences; gate output lands in prompts, progress.txt and JSON.
const ANSI = /\u001b\[[0-9;?]*[ -\/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** Keeps the last `limit` bytes of a stream of chunks. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.limit * 2) this.compact();
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const kept = all.subarray(Math.max(0, all.length - this.limit));
    if (kept.length < all.length) this.truncated = true;
    this.chunks = [kept];
    this.size = kept.length;
  }

  text(): string {
    this.compact();
    // A cut through a multi-byte character decodes as U+FFFD: drop it.
    const text = Buffer.concat(this.chunks).toString('utf8').replace(/^\uFFFD+/, '').replace(ANSI, '');
    return this.truncated ? `…${text}` : text;
  }
}

/** Runs one gate to its end; resolves with `aborted` instead of throwing so the caller can clean up first. */
async function runGate(gate: GateCommand, options: RunGatesOptions): Promise<GateResult & { aborted: boolean }> {
  const tail = new Tail(OUTPUT_TAIL_BYTES);
  const run: HelperOptions = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs ?? 5_000,
    onOutput: (chunk: Buffer) => tail.push(chunk),
    // Whatever the gate left running in its group (watchers, servers) goes with it.
    reapLeftovers: true,
    // The user's own text: their exported shell functions stay available to it.
    keepFunctions: true,
  };
  let result: HelperResult;
  if (options.wrap) {
    // Under a sandbox the gate is a command line (bash -c TEXT inside bwrap), each part one interpolated
    // argument; the wrap's variables are added to (or removed from) the gate's environment.
    const command = options.wrap({ bin: BASH, args: ['-c', gate.command] });
    const env: NodeJS.ProcessEnv = { ...run.env };
    for (const [key, value] of Object.entries(command.env ?? {})) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    result = await runCommand(command.bin, command.args, { ...run, env });
  } else {
    result = await runShellText(gate.command, run);
  }
  const note = result.end === 'timeout' ? `timed out after ${options.timeoutMs} ms` : result.end === 'aborted' ? 'stopped: ralph was interrupted' : result.spawnError ? `could not start: ${result.spawnError}` : undefined;
  let outputTail = tail.text();
  if (note) outputTail = `${outputTail}${outputTail && !outputTail.endsWith('\n') ? '\n' : ''}[ralph] ${note}\n`;
  return {
    name: gate.name,
    command: gate.command,
    passed: result.exitCode === 0 && result.end === 'exit',
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    outputTail,
    ...(result.end === 'timeout' ? { timedOut: true } : {}),
    aborted: result.end === 'aborted',
  };
}

/**
 * Runs the gates one after another (all of them, so the agent learns about every failure) and returns
 * each result. On abort the running gate's group is ended and the abort error is thrown.
 */
export async function runGates(commands: ReadonlyArray<GateCommand | string>, options: RunGatesOptions): Promise<GateResult[]> {
  const gates = uniqueNames(commands.map((item) => (typeof item === 'string' ? { name: gateName(item), command: item } : item)));
  const results: GateResult[] = [];
  for (const gate of gates) {
    if (options.signal.aborted) throw abortError(options.signal);
    const { aborted, ...result } = await runGate(gate, options);
    if (aborted) throw abortError(options.signal);
    results.push(result);
  }
  return results;
}

/** One line per run, e.g. `typecheck pass 1.2s, test FAIL exit 1 0.4s`. */
export function formatGateResults(results: readonly GateResult[]): string {
  if (results.length === 0) return 'no gates';
  return results
    .map((gate) => {
      const seconds = `${(gate.durationMs / 1000).toFixed(1)}s`;
      if (gate.passed) return `${gate.name} pass ${seconds}`;
      return `${gate.name} FAIL ${gate.timedOut ? 'timed out' : `exit ${gate.exitCode}`} ${seconds}`;
    })
    .join(', ');
}

/**
 * The most telling line of a failed gate's output: the first one naming an error or assertion (tsc,
 * eslint and test runners print the cause before their summary), else the last mentioning a failure,
 * else the last line.
 */
export function failureLine(outputTail: string): string {
  const lines = outputTail
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('[ralph]') && line !== '…');
  const cause = lines.find((line) => /error|assert|exception|expected|✗|✖|×/i.test(line));
  const line = cause ?? [...lines].reverse().find((line) => /fail/i.test(line)) ?? lines.at(-1) ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
