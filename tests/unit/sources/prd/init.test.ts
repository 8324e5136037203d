import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { RalphError } from '../../../../lib/errors.ts';
import {
  estimateComplexity,
  initFromRulebook,
  mapRulebookStatus,
  parseProposal,
  parseTasksMd,
  scanRulebookTasks,
  specRequirements,
} from '../../../../lib/sources/prd/init.ts';
import { judgeStatus } from '../../../../lib/sources/prd/rulebook-parse.ts';
import { readPrd } from '../../../../lib/sources/prd/schema.ts';
import { prdSnapshot } from '../../../../lib/sources/prd/selection.ts';
import { decideNext } from '../../../../lib/session/decide.ts';
import { copyFixture, tempDir } from './helpers.ts';

const NOW = Date.parse('2026-11-20T10:00:00.000Z');

describe('rulebook file parsers', () => {
  it('parseTasksMd splits open and done items and skips code blocks', () => {
    const text = '## 1. Implementation\r\n- [ ] 1.1 First\r\n- [x] 1.2 Second\n* [X] 1.3 Third\n  - [ ] 1.4 Nested\n```\n- [ ] 9.9 not a task\n```\n- [2026-01-29] not a checkbox\n';
    expect(parseTasksMd(text)).toEqual({ open: ['1.1 First', '1.4 Nested'], done: ['1.2 Second', '1.3 Third'] });
  });

  it('parseProposal reads the title and the What Changes section', () => {
    const text = '# Proposal: Add JWT authentication\n\n## Why\n\nBecause.\n\n## What Changes\n\n- one\n- two\n\n## Impact\n\nSome.';
    expect(parseProposal(text)).toEqual({ title: 'Add JWT authentication', whatChanges: '- one\n- two' });
    expect(parseProposal('# Remove the XML exporter\n')).toEqual({ title: 'Remove the XML exporter' });
    expect(parseProposal('')).toEqual({});
  });

  it('specRequirements keeps SHALL/MUST lines, cleaned, outside code and headings', () => {
    const text = '### Requirement: MUST be ignored as a heading\nThe system SHALL do `x`.\n- **THEN** it MUST answer\n```\nMUST skip\n```\nshall lower case is prose\n';
    expect(specRequirements(text)).toEqual(['The system SHALL do x.', 'THEN it MUST answer']);
  });

  it('estimateComplexity: 0-3 low, 4-8 medium, 9+ high', () => {
    expect([0, 3, 4, 8, 9, 20].map(estimateComplexity)).toEqual(['low', 'low', 'medium', 'medium', 'high', 'high']);
  });

  it('maps rulebook statuses', () => {
    expect(['pending', 'in-progress', 'completed', 'blocked', 'archived', undefined].map(mapRulebookStatus)).toEqual(['pending', 'pending', 'completed', 'blocked', undefined, undefined]);
  });
});

describe('scanRulebookTasks on a realistic tree', () => {
  it('finds every live task in both layouts, skips archives and duplicates, orders by createdAt', () => {
    const root = copyFixture('rulebook-project');
    const warnings: string[] = [];
    const tasks = scanRulebookTasks(root, (message) => warnings.push(message));
    expect(tasks.map((task) => [task.id, task.status, task.sourcePath])).toEqual([
      ['refactor-db', 'completed', '.rulebook/tasks/refactor-db'],
      ['fix-logging', 'pending', '.rulebook/tasks/fix-logging'],
      ['add-auth', 'pending', '.rulebook/tasks/add-auth'],
      ['migrate-api', 'blocked', '.rulebook/tasks/migrate-api'],
      ['legacy-cleanup', 'pending', 'rulebook/tasks/legacy-cleanup'],
    ]);
    expect(warnings).toEqual([]);
    const auth = tasks[2]!;
    expect(auth.title).toBe('Add JWT authentication');
    expect(auth.openItems).toEqual([
      '1.2 Create `src/auth/token.ts` with sign and verify helpers',
      '1.3 Add `POST /auth/login`',
      '1.4 Add the auth middleware to `/api/*`',
      '2.1 Unit tests for token helpers',
      '2.2 Integration test for login and a protected route',
    ]);
    expect(auth.requirements).toEqual([
      'The system SHALL issue a signed JWT with a 15 minute expiry on successful login.',
      'THEN the response MUST contain an accessToken and a refreshToken',
      'Every request to /api/* MUST carry a valid bearer token.',
      'The system SHALL store refresh tokens hashed in the sessions table.',
    ]);
  });

  it('warns about unreadable metadata and treats the task as pending', () => {
    const root = tempDir();
    mkdirSync(path.join(root, '.rulebook/tasks/broken'), { recursive: true });
    writeFileSync(path.join(root, '.rulebook/tasks/broken/.metadata.json'), '{ status: pending');
    writeFileSync(path.join(root, '.rulebook/tasks/broken/tasks.md'), '- [ ] 1.1 Do it\n');
    const warnings: string[] = [];
    const tasks = scanRulebookTasks(root, (message) => warnings.push(message));
    expect(tasks.map((task) => [task.id, task.status, task.title])).toEqual([['broken', 'pending', 'broken']]);
    expect(warnings[0]).toMatch(/^\.rulebook\/tasks\/broken\/\.metadata\.json: not valid JSON/);
  });
});

describe('rulebook task folders judged by their tasks.md', () => {
  it.each([
    ['no metadata, every item ticked', undefined, { open: [], done: ['1.1', '1.2'] }, 'completed', 'no .metadata.json; tasks.md fully ticked (2 items)', false],
    ['no metadata, an item open', undefined, { open: ['1.3'], done: ['1.1', '1.2'] }, 'pending', 'no .metadata.json; tasks.md has 1 of 3 items open', false],
    ['no metadata, no checkbox', undefined, { open: [], done: [] }, 'pending', 'no .metadata.json; no checkbox in tasks.md', false],
    ['metadata pending, every item ticked', '{"status":"pending"}', { open: [], done: ['1.1'] }, 'pending', '.metadata.json says "pending"', true],
    ['metadata in progress, an item open', '{"status":"in-progress"}', { open: ['1.2'], done: ['1.1'] }, 'pending', '.metadata.json says "in-progress"', false],
    ['metadata without a status, every item ticked', '{"createdAt":"2026-01-01"}', { open: [], done: ['1.1'] }, 'completed', 'no status in .metadata.json; tasks.md fully ticked (1 item)', false],
    ['broken metadata, every item ticked', '{ status', { open: [], done: ['1.1'] }, 'completed', 'unusable .metadata.json; tasks.md fully ticked (1 item)', false],
  ] as const)('%s → %s', (_name, metadata, items, status, judgedBy, tickedButPending) => {
    const judged = judgeStatus(metadata, { open: [...items.open], done: [...items.done] });
    expect(judged).toMatchObject({ status, judgedBy, tickedButPending });
  });

  it('queues only unfinished folders, says how it judged each, and warns about ticked pending ones', () => {
    const root = copyFixture('rulebook-ticked');
    const warnings: string[] = [];
    const result = initFromRulebook(root, { force: false, now: NOW, warn: (message) => warnings.push(message) });
    expect(result.tasks).toEqual([
      { id: 'port-sdk', status: 'pending', judgedBy: '.metadata.json says "in-progress"' },
      { id: 'add-cluster-mode', status: 'pending', judgedBy: '.metadata.json says "pending"' },
      { id: 'build-dashboard', status: 'pending', judgedBy: 'no .metadata.json; tasks.md has 1 of 3 items open' },
      { id: 'phase1_fix-lock-order', status: 'completed', judgedBy: 'no .metadata.json; tasks.md fully ticked (3 items)' },
      { id: 'phase1_trim-allocations', status: 'completed', judgedBy: 'no .metadata.json; tasks.md fully ticked (2 items)' },
    ]);
    expect(warnings).toEqual([
      '1 task is pending in .metadata.json although every item of its tasks.md is ticked: .rulebook/tasks/add-cluster-mode; ralph queues it as the metadata says (set "status": "completed" there if the work is done)',
    ]);
    const doc = readPrd(result.prdPath);
    // The CRLF + BOM tasks.md reads like any other: its one open item is the task's acceptance criterion.
    expect(doc.items.find((item) => item.id === 'port-sdk')?.acceptanceCriteria).toEqual(['1.2 Port the examples']);
    expect(doc.items.find((item) => item.id === 'build-dashboard')?.acceptanceCriteria).toEqual(['1.3 Metrics page']);
    const snapshot = prdSnapshot(doc);
    expect(snapshot.ready[0]?.id).toBe('port-sdk');
    expect(snapshot.remaining.map((task) => task.id)).toEqual(['port-sdk', 'add-cluster-mode', 'build-dashboard']);
    expect(decideNext(snapshot, { iterations: 0, costUsd: 0 }, { maxIterations: 9 }).kind).toBe('run');
  });
});

describe('initFromRulebook', () => {
  it('writes .rulebook-ralph/prd.json in the rulebook shape and starts progress.txt', () => {
    const root = copyFixture('rulebook-project');
    const result = initFromRulebook(root, { force: false, now: NOW });
    const prdPath = path.join(root, '.rulebook-ralph', 'prd.json');
    expect(result).toEqual({
      success: true,
      taskCount: 5,
      prdPath,
      tasks: [
        { id: 'refactor-db', status: 'completed', judgedBy: '.metadata.json says "completed"' },
        { id: 'fix-logging', status: 'pending', judgedBy: '.metadata.json says "in-progress"' },
        { id: 'add-auth', status: 'pending', judgedBy: '.metadata.json says "pending"' },
        { id: 'migrate-api', status: 'blocked', judgedBy: '.metadata.json says "blocked"' },
        { id: 'legacy-cleanup', status: 'pending', judgedBy: 'no .metadata.json; tasks.md has 1 of 1 item open' },
      ],
    });

    const doc = readPrd(prdPath);
    expect(doc.shape).toBe('rulebook');
    expect(doc.data).toMatchObject({ project: 'acme-api', source: 'rulebook', generatedAt: '2026-11-20T10:00:00.000Z' });
    expect(doc.items.map((item) => [item.id, item.priority, item.status, item.estimatedComplexity, item.acceptanceCriteria.length])).toEqual([
      ['refactor-db', 1, 'completed', 'low', 0],
      ['fix-logging', 2, 'pending', 'low', 2],
      ['add-auth', 3, 'pending', 'medium', 9],
      ['migrate-api', 4, 'blocked', 'high', 11],
      ['legacy-cleanup', 5, 'pending', 'low', 1],
    ]);
    const auth = doc.items[2]!;
    expect(auth.description).toContain('Add a `POST /auth/login` endpoint that issues signed JWTs');
    expect(auth.raw.sourcePath).toBe('.rulebook/tasks/add-auth');

    const progress = readFileSync(path.join(root, '.rulebook-ralph', 'progress.txt'), 'utf8');
    expect(progress.startsWith('# Ralph Progress Log\n')).toBe(true);
    expect(progress).toContain('PRD: .rulebook-ralph/prd.json (5 tasks)');
    expect(progress).toContain('## Codebase Patterns');
    expect(progress).toContain('Iteration 1 starts below.');
  });

  it('regenerates a prd.json that holds no progress, archiving the old one', () => {
    const root = copyFixture('rulebook-project');
    initFromRulebook(root, { force: false, now: NOW });
    const warnings: string[] = [];
    const again = initFromRulebook(root, { force: false, now: NOW, warn: (message) => warnings.push(message) });
    expect(again.taskCount).toBe(5);
    expect(warnings).toEqual(['archived the previous prd.json, progress.txt and history to .rulebook-ralph/archive/2026-11-20']);
  });

  it('refuses to overwrite progress without force, and archives it first with force', () => {
    const root = copyFixture('rulebook-project');
    initFromRulebook(root, { force: false, now: NOW });
    const prdPath = path.join(root, '.rulebook-ralph', 'prd.json');
    const worked = readFileSync(prdPath, 'utf8').replace('"status": "pending"', '"status": "in_iteration",\n      "iterationNumber": 1');
    writeFileSync(prdPath, worked);
    const history = path.join(root, '.rulebook-ralph', 'history');
    mkdirSync(history, { recursive: true });
    writeFileSync(path.join(history, 'iteration-1.json'), '{"iterationNumber":1}\n');

    let error: unknown;
    try {
      initFromRulebook(root, { force: false, now: NOW });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RalphError);
    expect((error as RalphError).message).toBe(`${prdPath} already holds progress: task fix-logging was worked on in iteration 1; not overwriting it`);
    expect((error as RalphError).hint).toMatch(/--force/);
    expect(readFileSync(prdPath, 'utf8')).toBe(worked);

    // A same-day archive folder already exists: the new one gets a suffix.
    mkdirSync(path.join(root, '.rulebook-ralph', 'archive', '2026-11-20'), { recursive: true });
    const result = initFromRulebook(root, { force: true, now: NOW });
    expect(result.success).toBe(true);
    const archive = path.join(root, '.rulebook-ralph', 'archive', '2026-11-20-2');
    expect(readFileSync(path.join(archive, 'prd.json'), 'utf8')).toBe(worked);
    expect(existsSync(path.join(archive, 'progress.txt'))).toBe(true);
    expect(existsSync(path.join(archive, 'history', 'iteration-1.json'))).toBe(true);
    expect(existsSync(history)).toBe(false);
    expect(readPrd(prdPath).items.every((item) => item.iterationNumber === undefined)).toBe(true);
  });

  it('treats an unreadable prd.json as progress', () => {
    const root = copyFixture('rulebook-project');
    mkdirSync(path.join(root, '.rulebook-ralph'));
    writeFileSync(path.join(root, '.rulebook-ralph', 'prd.json'), '{ broken');
    expect(() => initFromRulebook(root, { force: false, now: NOW })).toThrow(/cannot be read, so ralph cannot tell/);
    expect(readFileSync(path.join(root, '.rulebook-ralph', 'prd.json'), 'utf8')).toBe('{ broken');
  });

  it('fails clearly when there are no rulebook tasks', () => {
    const root = tempDir();
    expect(() => initFromRulebook(root, { force: false, now: NOW })).toThrow(/^no rulebook tasks found: looked in .*\.rulebook\/tasks and .*rulebook\/tasks$/);
  });
});
