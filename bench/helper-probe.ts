// Run by bench/helper.ts in a fresh process: the per-call cost of a helper command through zx's `$`
// (lib/process/helper.ts) against raw spawn and execFile, and whether helper calls leave `await` slower
// (per-call `$({...})`/within() would switch on promise hooks for the whole process on Node 20).
import { executionAsyncId } from 'node:async_hooks';
import { execFile, spawn } from 'node:child_process';
import { runCommand } from '../lib/process/helper.ts';

const [bin = '/usr/bin/true', roundsText = '200'] = process.argv.slice(2);
const rounds = Number(roundsText);
const cwd = process.cwd();

function rawSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

function rawExecFile(): Promise<void> {
  return new Promise((resolve) => execFile(bin, [], { cwd, encoding: 'utf8' }, () => resolve()));
}

async function viaZx(): Promise<void> {
  const result = await runCommand(bin, [], { cwd });
  if (result.exitCode !== 0) throw new Error(`${bin} exited ${result.exitCode}: ${result.stderr}`);
}

/** CPU milliseconds for 3 million awaits of a resolved promise (the shape of every async step in ralph). */
async function awaitLoop(): Promise<number> {
  const started = process.cpuUsage();
  for (let index = 0; index < 3_000_000; index += 1) await undefined;
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

/** Whether promise hooks are on: only then does an await continuation get an async id. */
async function promiseHooksOn(): Promise<boolean> {
  await null;
  return executionAsyncId() !== 0;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const hooksBefore = await promiseHooksOn();
const awaitsBefore: number[] = [];
for (let index = 0; index < 3; index += 1) awaitsBefore.push(await awaitLoop());

const times = { spawn: [] as number[], execFile: [] as number[], zx: [] as number[] };
// Warm-up (zx's first call loads zx/core), then interleaved rounds so machine load hits all three alike.
await viaZx();
await rawSpawn();
await rawExecFile();
for (let round = 0; round < rounds; round += 1) {
  for (const [name, run] of [['spawn', rawSpawn], ['execFile', rawExecFile], ['zx', viaZx]] as const) {
    const started = performance.now();
    await run();
    times[name].push(performance.now() - started);
  }
}

const hooksAfter = await promiseHooksOn();
const awaitsAfter: number[] = [];
for (let index = 0; index < 3; index += 1) awaitsAfter.push(await awaitLoop());

// What a per-call option would have cost: one within() switches promise hooks on for good.
const { within } = await import('zx/core');
within(() => undefined);
const hooksAfterWithin = await promiseHooksOn();
const awaitsWithin: number[] = [];
for (let index = 0; index < 3; index += 1) awaitsWithin.push(await awaitLoop());

process.stdout.write(
  `${JSON.stringify({
    rounds,
    spawnMs: median(times.spawn),
    execFileMs: median(times.execFile),
    zxMs: median(times.zx),
    hooksBefore,
    hooksAfter,
    hooksAfterWithin,
    awaitsBeforeMs: median(awaitsBefore),
    awaitsAfterMs: median(awaitsAfter),
    awaitsAfterWithinMs: median(awaitsWithin),
  })}\n`,
);
