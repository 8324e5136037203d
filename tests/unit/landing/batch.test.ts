// The landing queue's decisions (lib/landing/batch.ts) and its runs (lib/landing/queue.ts) with candidates
// and a dock that are doubles: tasks ready together are gated once on the top of their stack; on failure the
// stack is bisected so the task that breaks it is found with few gate runs, the ones before it land, and a
// conflict or a lost claim of one task holds up none of the others.
import { describe, expect, it } from 'vitest';
import { needsGates, nextStep, type Step } from '../../../lib/landing/batch.ts';
import { landBatch, landingQueue, type BatchStats, type Candidate, type Turned } from '../../../lib/landing/queue.ts';
import { MergeLock } from '../../../lib/landing/replay.ts';
import type { Dock, Published } from '../../../lib/landing/types.ts';
import type { GateResult } from '../../../lib/gates.ts';
import { RemoteUnreachableError } from '../../../lib/errors.ts';

const results = (entries: [number, boolean][]): Map<number, boolean> => new Map(entries);

describe('nextStep', () => {
  it.each<[string, number, [number, boolean][], Step]>([
    ['nothing to land', 0, [], { land: 0 }],
    ['the whole stack is gated first', 4, [], { gate: 4 }],
    ['one task alone is gated', 1, [], { gate: 1 }],
    ['the whole stack passed: all of it lands', 4, [[4, true]], { land: 4 }],
    ['it failed: the first half alone', 4, [[4, false]], { gate: 2 }],
    ['the first half failed: its first quarter', 4, [[4, false], [2, false]], { gate: 1 }],
    ['the first task alone failed: nothing lands, it is turned down', 4, [[4, false], [2, false], [1, false]], { land: 0, reject: 0 }],
    ['the first passed, the first two failed: the second is the bad one', 4, [[4, false], [2, false], [1, true]], { land: 1, reject: 1 }],
    ['the first half passed: the third alone on it', 4, [[4, false], [2, true]], { gate: 3 }],
    ['the first three passed: the fourth is the bad one', 4, [[4, false], [2, true], [3, true]], { land: 3, reject: 3 }],
    ['three tasks, the stack failed: the first alone', 3, [[3, false]], { gate: 1 }],
    ['two tasks, the first passed alone: the second is the bad one', 2, [[2, false], [1, true]], { land: 1, reject: 1 }],
    ['one task that failed', 1, [[1, false]], { land: 0, reject: 0 }],
    ['a pass above a failing prefix (a flaky gate) proves nothing', 4, [[2, false], [4, true]], { gate: 1 }],
    ['eight tasks: halves, then quarters', 8, [[8, false], [4, true], [6, false]], { gate: 5 }],
  ])('%s', (_name, count, known, step) => {
    expect(nextStep(count, results(known))).toEqual(step);
  });
});

describe('needsGates', () => {
  it.each<[string, { changes: boolean; onItsBase: boolean }[], boolean]>([
    ['a fast-forward of exactly what its own gates passed', [{ changes: true, onItsBase: true }], false],
    ['work replayed onto a head that moved', [{ changes: true, onItsBase: false }], true],
    ['a task that brings nothing', [{ changes: false, onItsBase: false }], false],
    ['a fast-forward with a second task stacked on it', [{ changes: true, onItsBase: true }, { changes: true, onItsBase: false }], true],
  ])('%s', (_name, prefix, needed) => {
    expect(needsGates(prefix)).toBe(needed);
  });
});

/** Bisection until it lands: gate runs and the outcome, for a stack of `count` with `bad` tasks (a prefix fails when it holds one). */
function bisect(count: number, bad: ReadonlySet<number>): { gates: number; landed: number; reject?: number } {
  const known = new Map<number, boolean>();
  let step = nextStep(count, known);
  let gates = 0;
  while ('gate' in step) {
    gates += 1;
    expect(gates, 'bisection ends').toBeLessThanOrEqual(count + 1);
    const length = step.gate;
    known.set(length, ![...bad].some((index) => index < length));
    step = nextStep(count, known);
  }
  return { gates, landed: step.land, ...(step.reject !== undefined ? { reject: step.reject } : {}) };
}

describe('bisection', () => {
  it.each<[number, number[], number, number, number | undefined]>([
    // count, bad tasks, gate runs at most, landed, turned down
    [4, [], 1, 4, undefined],
    [4, [0], 3, 0, 0],
    [4, [3], 3, 3, 3],
    [8, [5], 4, 5, 5],
    [16, [9], 5, 9, 9],
    [4, [1, 2], 3, 1, 1],
  ])('%i tasks, bad %j: ≤ %i gate runs, %i land first', (count, bad, most, landed, reject) => {
    const outcome = bisect(count, new Set(bad));
    expect(outcome.gates).toBeLessThanOrEqual(most);
    expect(outcome.landed).toBe(landed);
    expect(outcome.reject).toBe(reject);
  });
});

/** A dock double: the branch is a list of task ids (its head their join), published as it is. */
function dockDouble(publishes: Published[] = []) {
  const dock = {
    lock: new MergeLock('base'),
    head: 'base',
    pushes: [] as string[][],
    rewinds: [] as string[],
    lostTasks: new Map<string, string>(),
    target: async () => dock.head,
    lost: (task: string) => dock.lostTasks.get(task),
    publish: async (tasks: string | readonly string[]) => {
      dock.pushes.push(typeof tasks === 'string' ? [tasks] : [...tasks]);
      const next = publishes.shift() ?? { kind: 'landed' };
      if (next.kind === 'landed') dock.lock.published = dock.head;
      return next;
    },
    rewind: async (to: string) => {
      dock.rewinds.push(to);
      dock.head = to;
    },
  };
  return dock;
}
type DockDouble = ReturnType<typeof dockDouble>;

interface Options {
  /** Breaks the build when stacked with any of these tasks (or alone when empty). */
  breaks?: string[];
  /** Conflicts when stacked on a head holding any of these tasks (or on any head when empty). */
  conflicts?: string[];
}

/** A task as its worker offers it: its head is the head it is stacked on plus its id. */
function task(dock: DockDouble, id: string, o: Options = {}, log: string[] = []): Candidate<string> {
  let stacked = '';
  const holds = (head: string, ids: string[]): boolean => ids.length === 0 || ids.some((other) => head.split('+').includes(other));
  return {
    task: id,
    begin: async () => undefined,
    async stack(onto) {
      if (o.conflicts && holds(onto, o.conflicts)) return { conflict: [`${id}.txt`] };
      stacked = `${onto}+${id}`;
      return { head: stacked, changes: true, onItsBase: false };
    },
    async gate(): Promise<GateResult[]> {
      log.push(`gate ${stacked}`);
      const ids = stacked.split('+');
      const broken = ids.some((one) => allOptions.get(one)?.breaks && holds(stacked.replace(`+${one}`, ''), allOptions.get(one)!.breaks!));
      return [{ name: 'test', command: 'npm test', passed: !broken, exitCode: broken ? 1 : 0, timedOut: false, durationMs: 1, outputTail: broken ? 'SyntaxError: Identifier already declared' : '' } as GateResult];
    },
    async commit() {
      dock.head = `${dock.head}+${id}`;
      log.push(`commit ${id}`);
      return { head: dock.head };
    },
    landed: async (head) => `${id} landed at ${head}`,
    turned: async (why: Turned, head) => `${id} turned down (${'lost' in why ? 'lost' : 'conflict' in why ? `conflict ${why.conflict.join(',')}` : `gates, ${why.gates.filter((gate) => !gate.passed).length} failed, on ${why.on}`}) at ${head}`,
    abandon: async (error) => new Error(`${id}: ${error.message}`),
  };
}
const allOptions = new Map<string, Options>();
function tasks(dock: DockDouble, specs: Record<string, Options>, log: string[] = []): Candidate<string>[] {
  return Object.entries(specs).map(([id, o]) => (allOptions.set(id, o), task(dock, id, o, log)));
}

async function land(dock: DockDouble, candidates: Candidate<string>[]): Promise<{ out: Record<string, string>; stats: BatchStats }> {
  const stats = { gateRuns: 0 };
  const settled = await landBatch(dock as unknown as Dock, candidates, { stats });
  const out: Record<string, string> = {};
  for (const [candidate, one] of settled) out[candidate.task] = 'value' in one ? one.value : `error: ${(one.error as Error).message}`;
  return { out, stats };
}

describe('landBatch', () => {
  it('four good tasks: gated once on the top of the stack, landed one commit each, published in one push', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    const { out, stats } = await land(dock, tasks(dock, { A: {}, B: {}, C: {}, D: {} }, log));
    expect(stats.gateRuns).toBe(1);
    expect(log).toEqual(['gate base+A+B+C+D', 'commit A', 'commit B', 'commit C', 'commit D']);
    expect(dock.pushes).toEqual([['A', 'B', 'C', 'D']]);
    expect(out).toEqual({ A: 'A landed at base+A+B+C+D', B: 'B landed at base+A+B+C+D', C: 'C landed at base+A+B+C+D', D: 'D landed at base+A+B+C+D' });
  });

  it('green alone, red together: the bad task is found by bisection, the others land, it goes back with the gate output', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    // C declares what B declares: the stack breaks from C on.
    const { out, stats } = await land(dock, tasks(dock, { A: {}, B: {}, C: { breaks: ['B'] }, D: {} }, log));
    expect(out.C).toBe('C turned down (gates, 1 failed, on base+A+B) at base+A+B+D');
    expect(out.A).toMatch(/^A landed/);
    expect(out.B).toMatch(/^B landed/);
    expect(out.D).toBe('D landed at base+A+B+D');
    // The branch never holds C; every head it moved to was gated first.
    expect(dock.head).toBe('base+A+B+D');
    expect(log.filter((line) => line.startsWith('gate'))).toEqual(['gate base+A+B+C+D', 'gate base+A+B', 'gate base+A+B+C', 'gate base+A+B+D']);
    expect(stats.gateRuns).toBe(4);
    expect(dock.pushes).toEqual([['A', 'B'], ['D']]);
  });

  it('no commit lands before the gates passed on a stack that holds it', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    await land(dock, tasks(dock, { A: { breaks: [] }, B: {}, C: {} }, log));
    // A breaks alone: nothing may be committed until a stack without A passed.
    expect(log).toEqual(['gate base+A+B+C', 'gate base+A', 'gate base+B+C', 'commit B', 'commit C']);
    expect(dock.head).toBe('base+B+C');
  });

  it('a conflict of one task holds up none of the others: it is turned down after they land', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    const { out, stats } = await land(dock, tasks(dock, { A: {}, B: { conflicts: ['A'] }, C: {} }, log));
    expect(out.B).toBe('B turned down (conflict B.txt) at base+A+C');
    expect(out.C).toMatch(/^C landed/);
    expect(stats.gateRuns).toBe(1);
    expect(dock.pushes).toEqual([['A', 'C']]);
  });

  it('a task whose claim was lost is turned down, the others land', async () => {
    const dock = dockDouble();
    dock.lostTasks.set('B', 'another host holds it');
    const { out } = await land(dock, tasks(dock, { A: {}, B: {} }));
    expect(out.B).toBe('B turned down (lost) at base+A');
    expect(dock.pushes).toEqual([['A']]);
  });

  it('another host landed first: the clone goes back, the batch is stacked again and pushed once more', async () => {
    const dock = dockDouble([{ kind: 'moved' }]);
    const log: string[] = [];
    const { out, stats } = await land(dock, tasks(dock, { A: {}, B: {} }, log));
    expect(dock.rewinds).toEqual(['base']);
    expect(dock.pushes).toEqual([['A', 'B'], ['A', 'B']]);
    expect(stats.gateRuns).toBe(2);
    expect(out.B).toBe('B landed at base+A+B');
  });

  it('a claim lost at the push: that task is turned down, the rest pushed again', async () => {
    const dock = dockDouble([{ kind: 'lost', why: 'taken over', task: 'A' }]);
    const { out } = await land(dock, tasks(dock, { A: {}, B: {} }));
    expect(out.A).toBe('A turned down (lost) at base+B');
    expect(dock.pushes).toEqual([['A', 'B'], ['B']]);
  });

  it('the remote stays silent: what had landed stays landed, the rest is abandoned each its own way', async () => {
    const dock = dockDouble();
    let pushes = 0;
    const publish = dock.publish;
    dock.publish = async (tasks) => {
      pushes += 1;
      if (pushes === 2) throw new RemoteUnreachableError('origin did not answer');
      return publish(tasks);
    };
    const { out } = await land(dock, tasks(dock, { A: {}, B: { breaks: ['A'] }, C: {} }));
    expect(out.A).toMatch(/^A landed/);
    expect(out.C).toBe('error: C: origin did not answer');
    expect(out.B).toBe('error: B: origin did not answer');
  });
});

describe('LandingQueue', () => {
  it('the tasks offered while a batch holds the lock land together in the next batch', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    const queue = landingQueue<string>(dock as unknown as Dock);
    const [a, b, c] = tasks(dock, { A: {}, B: {}, C: {} }, log);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = dock.lock.run(() => gate);
    const landed = [queue.offer(a!), queue.offer(b!), queue.offer(c!)];
    release();
    await held;
    expect(await Promise.all(landed)).toEqual(['A landed at base+A+B+C', 'B landed at base+A+B+C', 'C landed at base+A+B+C']);
    expect(log.filter((line) => line.startsWith('gate'))).toEqual(['gate base+A+B+C']);
    expect(landingQueue(dock as unknown as Dock)).toBe(queue);
  });

  it('a batch about to run the gates waits for a worker whose agent just ended, and gates both in one run', async () => {
    const dock = dockDouble();
    const log: string[] = [];
    const queue = landingQueue<string>(dock as unknown as Dock);
    const [a, b] = tasks(dock, { A: {}, B: {} }, log).map((candidate) => ({ ...candidate, gateMs: 5_000 }));
    queue.expect('w2');
    const first = queue.offer(a!, 'w1');
    // B is offered while A's batch waits (well within A's own gate time): one gate run for both.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = queue.offer(b!, 'w2');
    expect(await Promise.all([first, second])).toEqual(['A landed at base+A+B', 'B landed at base+A+B']);
    expect(log.filter((line) => line.startsWith('gate'))).toEqual(['gate base+A+B']);
  });

  it('several hosts: a batch waits for a worker whose agent just ended even with no gates, and pushes both at once; one host does not wait', async () => {
    const remote = Object.assign(dockDouble(), { remote: { name: 'origin', branch: 'b', host: 'h', hostId: 'h-0000', claims: 'refs' } });
    const queue = landingQueue<string>(remote as unknown as Dock);
    const [a, b] = tasks(remote, { A: {}, B: {} });
    queue.expect('w2');
    const first = queue.offer(a!, 'w1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = queue.offer(b!, 'w2');
    expect(await Promise.all([first, second])).toEqual(['A landed at base+A+B', 'B landed at base+A+B']);
    expect(remote.pushes).toEqual([['A', 'B']]);
    // A worker expected that never offers holds a batch up for one batch's time (300 ms before any landed), no more.
    const other = Object.assign(dockDouble(), { remote: remote.remote });
    const next = landingQueue<string>(other as unknown as Dock);
    next.expect('w3');
    const started = Date.now();
    const [c] = tasks(other, { C: {} });
    expect(await next.offer(c!, 'w1')).toBe('C landed at base+C');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(1_500);
    next.withdraw('w3');

    const local = dockDouble();
    const alone = landingQueue<string>(local as unknown as Dock);
    const [d, e] = tasks(local, { D: {}, E: {} });
    alone.expect('w2');
    const landedD = alone.offer(d!, 'w1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const landedE = alone.offer(e!, 'w2');
    expect(await Promise.all([landedD, landedE])).toEqual(['D landed at base+D', 'E landed at base+D+E']);
    expect(local.pushes).toEqual([['D'], ['E']]);
  });

  it('a worker expected that offers nothing holds a batch up for one gate run\'s time at most; one that withdraws, not at all', async () => {
    const dock = dockDouble();
    const queue = landingQueue<string>(dock as unknown as Dock);
    const [a, b] = tasks(dock, { A: {}, B: {} }).map((candidate) => ({ ...candidate, gateMs: 150 }));
    queue.expect('w2');
    let started = Date.now();
    expect(await queue.offer(a!, 'w1')).toBe('A landed at base+A');
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(2_000);
    queue.withdraw('w2');
    queue.expect('w3');
    started = Date.now();
    const landed = queue.offer({ ...b!, gateMs: 60_000 }, 'w1');
    queue.withdraw('w3');
    expect(await landed).toBe('B landed at base+A+B');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
