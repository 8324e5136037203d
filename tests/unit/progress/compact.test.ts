import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ARCHIVE_FILE, compactAfterAppend, compactProgress, DEFAULT_PROGRESS_MAX_BYTES, POINTER_LINE, progressMaxBytes } from '../../../lib/progress/compact.ts';
import { resolveConfig } from '../../../lib/config/index.ts';
import { loadPrdTemplate } from '../../../lib/sources/prd/prompt.ts';
import { createPrdSource } from '../../../lib/sources/prd/source.ts';
import {
  formatProgressEntry,
  PRD_ENTRY_HEADING,
  progressContext,
  progressHeader as prdHeader,
  PROGRESS_CONTEXT_BYTES,
  PROGRESS_PATTERNS_BYTES,
  PROGRESS_PROMPT_BYTES,
} from '../../../lib/sources/prd/progress.ts';
import { ENTRY_HEADING, iterationEntry, lastIterationNumber, progressHeader, sessionHeader } from '../../../lib/sources/speckit/progress.ts';
import { createSpeckitSource } from '../../../lib/sources/speckit/index.ts';
import type { OptionValue } from '../../../lib/config/values.ts';
import { fakeDeps } from '../sources/prd/helpers.ts';
import { copyFixture, info as speckitInfo, makeContext, result as speckitResult } from '../sources/speckit/helpers.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-compact-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = () => path.join(dir, 'progress.txt');
const archive = () => path.join(dir, ARCHIVE_FILE);
const read = (name: string) => (existsSync(name) ? readFileSync(name, 'utf8') : '');
const size = (text: string) => Buffer.byteLength(text);

/** A Spec Kit entry with `pad` bytes of learnings so sizes are easy to steer. */
function speckitEntry(n: number, pad = 200): string {
  return iterationEntry({
    iteration: n,
    timestamp: `2026-11-20 10:${String(n % 60).padStart(2, '0')}:00`,
    task: { id: `T${String(n).padStart(3, '0')}`, title: `task number ${n}` },
    status: n % 3 === 0 ? 'failed' : 'completed',
    reason: 'no box ticked',
    tasksDone: [`T${String(n).padStart(3, '0')}`],
    filesChanged: [`src/file-${n}.ts`],
    learnings: `- learned ${n}: ${'x'.repeat(pad)}`,
  });
}

const SPECKIT_HEADER = progressHeader({ feature: '001-demo', tasksPath: 'specs/001-demo/tasks.md', started: '2026-11-20 10:00:00' }).replace(
  '<!-- Reusable patterns',
  '- keep handlers thin\n<!-- Reusable patterns',
);

/** A Spec Kit log as index.ts writes it: header, a session header, then entries separated by blank lines. */
function speckitLog(from: number, to: number, pad = 200): string {
  const entries = [];
  for (let n = from; n <= to; n += 1) entries.push(speckitEntry(n, pad));
  return `${SPECKIT_HEADER}\n${sessionHeader({ sessionId: '20261120-100000', started: '2026-11-20 10:00:00', firstIteration: from })}\n${entries.join('\n')}`;
}

/** Every entry block of a log (heading line to the line before the next `## ` heading), verbatim. */
function entryBlocks(text: string, heading: RegExp): string[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const blocks: string[] = [];
  let current: string | undefined;
  for (const line of lines) {
    const bare = line.replace(/\r?\n$/, '');
    if (heading.test(bare)) {
      if (current !== undefined) blocks.push(current);
      current = line;
    } else if (/^##\s/.test(bare)) {
      if (current !== undefined) blocks.push(current);
      current = undefined;
    } else if (current !== undefined) current += line;
  }
  if (current !== undefined) blocks.push(current);
  return blocks;
}

const pointers = (text: string) => text.split(/\r?\n/).filter((line) => POINTER_LINE.test(line));

describe('compactProgress', () => {
  it('leaves a log at or under the limit alone', () => {
    const log = speckitLog(1, 5);
    writeFileSync(file(), log);
    const result = compactProgress(file(), { maxBytes: size(log), keepEntries: 20, entryHeading: ENTRY_HEADING });
    expect(result).toMatchObject({ compacted: false, archived: 0, bytesAfter: size(log) });
    expect(read(file())).toBe(log);
    expect(existsSync(archive())).toBe(false);
  });

  it('does nothing for a missing file or a log without entries', () => {
    expect(compactProgress(file(), { maxBytes: 10, keepEntries: 1, entryHeading: ENTRY_HEADING }).compacted).toBe(false);
    writeFileSync(file(), `${SPECKIT_HEADER}${'- pattern\n'.repeat(500)}`);
    expect(compactProgress(file(), { maxBytes: 100, keepEntries: 1, entryHeading: ENTRY_HEADING }).compacted).toBe(false);
    expect(existsSync(archive())).toBe(false);
  });

  it('moves the oldest entries verbatim, keeps header, patterns and the latest entries, under half the limit', () => {
    const log = speckitLog(1, 200);
    writeFileSync(file(), log);
    const maxBytes = 32 * 1024;
    const result = compactProgress(file(), { maxBytes, keepEntries: 20, entryHeading: ENTRY_HEADING });
    const kept = read(file());
    const archived = read(archive());
    expect(result.compacted).toBe(true);
    const keptCount = result.kept ?? -1;
    expect(size(kept)).toBeLessThanOrEqual(maxBytes / 2);
    expect(result.bytesAfter).toBe(size(kept));
    expect(result.archived + keptCount).toBe(200);
    expect(keptCount).toBeGreaterThan(0);
    expect(keptCount).toBeLessThanOrEqual(20);
    // Header and patterns stay as they were, on top.
    expect(kept.startsWith(SPECKIT_HEADER)).toBe(true);
    expect(kept).toContain('- keep handlers thin');
    // The latest entries stay, the oldest went, in order.
    expect(lastIterationNumber(kept)).toBe(200);
    const keptIterations = entryBlocks(kept, ENTRY_HEADING).map((block) => Number(/Iteration (\d+)/.exec(block)![1]));
    expect(keptIterations).toEqual(Array.from({ length: keptCount }, (_, index) => 200 - keptCount + 1 + index));
    expect(entryBlocks(archived, ENTRY_HEADING)).toHaveLength(result.archived);
    // One pointer line with the count.
    expect(pointers(kept)).toEqual([`> Older iterations: ${ARCHIVE_FILE} (${result.archived} entries)`]);
  });

  it('keeps keepEntries entries when they fit in half the limit', () => {
    writeFileSync(file(), speckitLog(1, 100, 10));
    const result = compactProgress(file(), { maxBytes: 16 * 1024, keepEntries: 5, entryHeading: ENTRY_HEADING });
    expect(result).toMatchObject({ compacted: true, kept: 5, archived: 95 });
    expect(entryBlocks(read(file()), ENTRY_HEADING)).toHaveLength(5);
  });

  it('loses nothing: archive and kept file together hold every entry byte for byte, in order', () => {
    const log = speckitLog(1, 300);
    writeFileSync(file(), log);
    compactProgress(file(), { maxBytes: 20 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    const all = entryBlocks(read(archive()), ENTRY_HEADING).concat(entryBlocks(read(file()), ENTRY_HEADING));
    expect(all).toEqual(entryBlocks(log, ENTRY_HEADING));
    expect(all.join('')).toBe(entryBlocks(log, ENTRY_HEADING).join(''));
    // The archive is exactly the moved part of the file, verbatim.
    const firstKept = entryBlocks(read(file()), ENTRY_HEADING)[0]!;
    const start = log.indexOf('## Iteration 1 - ');
    expect(read(archive())).toBe(log.slice(start, log.indexOf(firstKept)));
  });

  it('is idempotent: a second call changes nothing', () => {
    writeFileSync(file(), speckitLog(1, 200));
    compactProgress(file(), { maxBytes: 32 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    const kept = read(file());
    const archived = read(archive());
    const again = compactProgress(file(), { maxBytes: 32 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    expect(again.compacted).toBe(false);
    expect(read(file())).toBe(kept);
    expect(read(archive())).toBe(archived);
  });

  it('updates the one pointer line in place as the log keeps growing, and never loses an entry', () => {
    const options = { maxBytes: 16 * 1024, keepEntries: 10, entryHeading: ENTRY_HEADING };
    const everything: string[] = [];
    let text = `${SPECKIT_HEADER}\n`;
    let n = 0;
    for (let round = 0; round < 6; round += 1) {
      const entries = Array.from({ length: 60 }, () => speckitEntry(++n));
      everything.push(...entries);
      text = read(file()) || text;
      writeFileSync(file(), `${text}${text.endsWith('\n\n') ? '' : '\n'}${entries.join('\n')}`);
      compactProgress(file(), options);
      const kept = read(file());
      expect(pointers(kept)).toHaveLength(1);
      expect(size(kept)).toBeLessThanOrEqual(options.maxBytes / 2);
      const archivedCount = entryBlocks(read(archive()), ENTRY_HEADING).length;
      expect(pointers(kept)[0]).toBe(`> Older iterations: ${ARCHIVE_FILE} (${archivedCount} entries)`);
      // The pointer sits where it was put the first time: right after the header, before the kept entries.
      expect(kept.indexOf(pointers(kept)[0]!)).toBe(SPECKIT_HEADER.length + 1);
    }
    const all = entryBlocks(read(archive()), ENTRY_HEADING).concat(entryBlocks(read(file()), ENTRY_HEADING));
    expect(all.map((block) => block.replace(/\n+$/, '\n'))).toEqual(everything.map((block) => block.replace(/\n+$/, '\n')));
    expect(read(file())).toContain('- keep handlers thin');
  });

  it('keeps a patterns section that sits between old entries, and whatever else is moved stays verbatim', () => {
    const entries = Array.from({ length: 80 }, (_, index) => speckitEntry(index + 1));
    const log = `# Ralph Progress Log\n\n${entries.slice(0, 30).join('\n')}\n## Codebase Patterns\n- moved here by an agent\n\n${entries.slice(30).join('\n')}`;
    writeFileSync(file(), log);
    compactProgress(file(), { maxBytes: 12 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    const kept = read(file());
    expect(kept).toContain('## Codebase Patterns\n- moved here by an agent\n');
    expect(read(archive())).not.toContain('Codebase Patterns');
    expect(entryBlocks(read(archive()), ENTRY_HEADING).concat(entryBlocks(kept, ENTRY_HEADING))).toEqual(entryBlocks(log, ENTRY_HEADING));
  });

  it('is CRLF-safe: entries archived byte for byte, the pointer line ends in CRLF too', () => {
    const log = speckitLog(1, 150).replace(/\n/g, '\r\n');
    writeFileSync(file(), log);
    const result = compactProgress(file(), { maxBytes: 24 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    expect(result.compacted).toBe(true);
    const kept = read(file());
    expect(kept.replace(/\r\n/g, '')).not.toContain('\n');
    expect(read(archive()).replace(/\r\n/g, '')).not.toContain('\n');
    expect(kept).toContain(`> Older iterations: ${ARCHIVE_FILE} (${result.archived} entries)\r\n`);
    expect(entryBlocks(read(archive()), ENTRY_HEADING).concat(entryBlocks(kept, ENTRY_HEADING))).toEqual(entryBlocks(log, ENTRY_HEADING));
    expect(pointers(kept)).toHaveLength(1);
  });

  it('archives even the latest entries when one alone is bigger than half the limit', () => {
    writeFileSync(file(), `${speckitLog(1, 3, 100)}\n${speckitEntry(4, 20_000)}`);
    const result = compactProgress(file(), { maxBytes: 16 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING });
    expect(result).toMatchObject({ compacted: true, kept: 0, archived: 4 });
    expect(size(read(file()))).toBeLessThan(8 * 1024);
    expect(read(archive())).toContain('x'.repeat(20_000));
  });

  it('a crash between the archive append and the rewrite duplicates entries, never loses them', () => {
    const log = speckitLog(1, 200);
    writeFileSync(file(), log);
    const options = { maxBytes: 32 * 1024, keepEntries: 20, entryHeading: ENTRY_HEADING };
    compactProgress(file(), options);
    // As if the atomic rewrite never happened: the old file is back, the archive already has its entries.
    writeFileSync(file(), log);
    compactProgress(file(), options);
    const archived = entryBlocks(read(archive()), ENTRY_HEADING);
    const kept = entryBlocks(read(file()), ENTRY_HEADING);
    for (const block of entryBlocks(log, ENTRY_HEADING)) expect(archived.includes(block) || kept.includes(block)).toBe(true);
    expect(pointers(read(file()))).toHaveLength(1);
  });

  it('works on the PRD log shape with a global-flagged heading regex', () => {
    const entries = Array.from({ length: 300 }, (_, index) =>
      formatProgressEntry({ now: Date.parse('2026-11-20T10:00:00Z'), iteration: index + 1, taskId: `US-${index + 1}`, taskTitle: 'a story', status: 'completed', learnings: ['y'.repeat(150)] }),
    );
    const log = prdHeader({ now: Date.parse('2026-11-20T10:00:00Z'), prd: 'prd.json', taskCount: 300 }) + entries.join('');
    writeFileSync(file(), log);
    const heading = new RegExp(PRD_ENTRY_HEADING.source, 'g');
    const result = compactProgress(file(), { maxBytes: 24 * 1024, keepEntries: 20, entryHeading: heading });
    expect(result).toMatchObject({ compacted: true, kept: 20, archived: 280 });
    const kept = read(file());
    expect(kept).toContain('## Codebase Patterns\n- (reusable patterns');
    expect(kept).toContain('- iteration 300: completed');
    expect(kept).not.toContain('- iteration 280: completed');
    expect(entryBlocks(read(archive()), PRD_ENTRY_HEADING).concat(entryBlocks(kept, PRD_ENTRY_HEADING))).toEqual(entryBlocks(log, PRD_ENTRY_HEADING));
  });

  it('reads its limit from the progress-max-bytes option, 256 KB by default', () => {
    expect(DEFAULT_PROGRESS_MAX_BYTES).toBe(262_144);
    expect(progressMaxBytes(resolveConfig({ flags: new Map(), env: {}, file: {} }).extra)).toBe(262_144);
    expect(progressMaxBytes(resolveConfig({ flags: new Map(), env: { RALPH_PROGRESS_MAX_BYTES: '4096' }, file: {} }).extra)).toBe(4096);
    expect(progressMaxBytes(resolveConfig({ flags: new Map(), env: {}, file: { progressMaxBytes: 8192 } }).extra)).toBe(8192);
    expect(() => resolveConfig({ flags: new Map(), env: { RALPH_PROGRESS_MAX_BYTES: '10' }, file: {} })).toThrow(/at least 1024/);
  });

  it('compactAfterAppend warns instead of failing when the archive cannot be written', () => {
    writeFileSync(file(), speckitLog(1, 200));
    const warnings: string[] = [];
    // A folder where the archive should be makes the append fail.
    mkdirSync(archive());
    const result = compactAfterAppend(file(), ENTRY_HEADING, new Map([['progress-max-bytes', 16 * 1024]]), (message) => warnings.push(message));
    expect(result).toBeUndefined();
    expect(warnings[0]).toMatch(/could not move old entries of .*progress\.txt to progress\.archive\.txt/);
    expect(read(file())).toBe(speckitLog(1, 200));
  });
});

describe('the prompt budget for progress.txt', () => {
  it('is a fixed number of bytes: 4 KB of patterns and 8 KB of recent entries', () => {
    expect(PROGRESS_PATTERNS_BYTES).toBe(4 * 1024);
    expect(PROGRESS_CONTEXT_BYTES).toBe(8 * 1024);
    expect(PROGRESS_PROMPT_BYTES).toBe(PROGRESS_PATTERNS_BYTES + PROGRESS_CONTEXT_BYTES);
  });

  it('stays within it for a 50 MB progress.txt with a huge patterns section, quickly', () => {
    const patterns = Array.from({ length: 20_000 }, (_, index) => `- pattern ${index}: ${'p'.repeat(40)}`).join('\n');
    const entry = (n: number) => `\n## 2026-11-20 10:00 - US-${n} - iteration ${n}: completed\nTask: US-${n} story ü€😀\nLearnings:\n- ${'z'.repeat(300)}\n---\n`;
    const parts = [`# Ralph Progress Log\n\n## Codebase Patterns\n${patterns}\n\n---\n`];
    let total = size(parts[0]!);
    let n = 0;
    while (total < 50 * 1024 * 1024) {
      const text = entry(++n);
      parts.push(text);
      total += size(text);
    }
    const log = parts.join('');
    // CPU time, not wall time: on a loaded machine the wall clock measures the scheduler, not this code.
    const started = process.cpuUsage();
    const context = progressContext(log);
    const used = process.cpuUsage(started);
    const elapsed = (used.user + used.system) / 1000;
    expect(size(context.patterns)).toBeLessThanOrEqual(PROGRESS_PATTERNS_BYTES);
    expect(size(context.recent)).toBeLessThanOrEqual(PROGRESS_CONTEXT_BYTES);
    expect(context.patterns.startsWith('- pattern 0:')).toBe(true);
    expect(context.patterns).toMatch(/the rest of the patterns section is in progress\.txt\]$/);
    expect(context.recent).toContain(`iteration ${n}: completed`);
    expect(context.recent).toMatch(/^\[… earlier entries omitted/);
    expect(context.recent).not.toContain('\uFFFD');
    expect(elapsed).toBeLessThan(2000);
  });

  it('a PRD prompt built over a 50 MB progress.txt is no bigger than over an empty one plus the budget', async () => {
    const root = dir;
    writeFileSync(path.join(root, 'prd.json'), JSON.stringify({ userStories: [{ id: 'US-1', title: 'One', description: 'd', acceptanceCriteria: ['a'], priority: 1, passes: false }] }));
    const config = resolveConfig({ flags: new Map([['gate', ['none']]]), env: {}, file: {} });
    const source = createPrdSource({ root, config, deps: fakeDeps(root), warn: () => {} });
    const [task] = (await source.snapshot()).ready;
    const info = { iteration: 7, maxIterations: 10, sessionId: 's' };
    const small = await source.prompt(task!, info);
    const line = `## 2026-11-20 10:00 - US-1 - iteration 1: failed (blocked)\nReason: ${'r'.repeat(1000)}\n---\n`;
    writeFileSync(path.join(root, 'progress.txt'), `# Ralph Progress Log\n\n## Codebase Patterns\n${'- p\n'.repeat(100_000)}\n---\n${line.repeat(Math.ceil((50 * 1024 * 1024) / line.length))}`);
    const big = await source.prompt(task!, info);
    expect(size(big) - size(small)).toBeLessThanOrEqual(PROGRESS_PROMPT_BYTES);
    // The template itself is untouched by the size of the log.
    expect(size(big)).toBeLessThan(size(loadPrdTemplate()) + PROGRESS_PROMPT_BYTES + 4096);
  });

  it('keeps short logs whole', () => {
    const log = '# Ralph Progress Log\r\n\r\n## Codebase Patterns\r\n- a\r\n\r\n---\r\n\r\n## 2026-11-20 10:00 - US-1 - iteration 1: completed\r\n---\r\n';
    expect(progressContext(log)).toEqual({ patterns: '- a', recent: '# Ralph Progress Log\n\n---\n\n## 2026-11-20 10:00 - US-1 - iteration 1: completed\n---' });
  });
});

describe('the sources compact their progress.txt after each entry', () => {
  it('Spec Kit: settle() keeps progress.txt under the limit and every entry in log + archive', async () => {
    const root = copyFixture('user-auth');
    const ctx = makeContext(root);
    ctx.config.extra.set('progress-max-bytes', 4096);
    const source = createSpeckitSource(ctx);
    const [task] = (await source.snapshot()).ready;
    for (let iteration = 1; iteration <= 60; iteration += 1) {
      await source.claim?.(task!, speckitInfo(iteration));
      await source.settle?.(speckitResult(task!, iteration, { kind: 'fail', agentText: `Learnings:\n- lesson ${iteration} ${'l'.repeat(80)}` }), speckitInfo(iteration));
    }
    const progress = path.join(root, 'specs', '001-user-auth', 'progress.txt');
    const kept = readFileSync(progress, 'utf8');
    const archived = readFileSync(path.join(root, 'specs', '001-user-auth', ARCHIVE_FILE), 'utf8');
    expect(size(kept)).toBeLessThanOrEqual(4096);
    expect(pointers(kept)).toHaveLength(1);
    expect(kept).toContain('## Codebase Patterns');
    const numbers = [...archived.matchAll(/^## Iteration (\d+) - /gm), ...kept.matchAll(/^## Iteration (\d+) - /gm)].map((match) => Number(match[1]));
    expect(numbers).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
    expect(await source.lastIteration?.()).toBe(60);
    expect(ctx.warnings.filter((warning) => /could not move/.test(warning))).toEqual([]);
  });

  it('PRD: settle() keeps progress.txt under the limit and every entry in log + archive', async () => {
    const root = dir;
    writeFileSync(path.join(root, 'prd.json'), JSON.stringify({ userStories: [{ id: 'US-1', title: 'One', description: 'd', acceptanceCriteria: ['a'], priority: 1, passes: false }] }));
    const config = resolveConfig({ flags: new Map<string, OptionValue>([['gate', ['none']], ['progress-max-bytes', 4096]]), env: {}, file: {} });
    const source = createPrdSource({ root, config, deps: fakeDeps(root), warn: () => {} });
    const [task] = (await source.snapshot()).ready;
    for (let iteration = 1; iteration <= 60; iteration += 1) {
      await source.claim?.(task!, { iteration, maxIterations: 100, sessionId: 's' });
      await source.settle?.(
        { iteration, task: task!, kind: 'no_change', reason: `nothing ${'n'.repeat(80)}`, tasksDone: [], filesChanged: [], claimedComplete: false, agentText: '', durationMs: 1 },
        { iteration, maxIterations: 100, sessionId: 's' },
      );
    }
    const kept = read(file());
    expect(size(kept)).toBeLessThanOrEqual(4096);
    expect(pointers(kept)).toHaveLength(1);
    const numbers = [...read(archive()).matchAll(/ - iteration (\d+): /g), ...kept.matchAll(/ - iteration (\d+): /g)].map((match) => Number(match[1]));
    expect(numbers).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
    expect(await source.lastIteration?.()).toBe(60);
  });
});
