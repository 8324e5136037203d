import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { byPriority, parsePrd, PrdFormatError, readPrd, serializePrd, updateItem, validatePrd } from '../../../../lib/sources/prd/schema.ts';
import { FIXTURES, tempDir } from './helpers.ts';

const fixture = (name: string): string => path.join(FIXTURES, name);

describe('prd.json shapes', () => {
  it('reads the snarktank shape: passes decides completion, priority decides order', () => {
    const doc = readPrd(fixture('snarktank.json'));
    expect(doc.shape).toBe('snarktank');
    expect(doc.items.map((item) => [item.id, item.status])).toEqual([
      ['US-002', 'pending'],
      ['US-001', 'completed'],
      ['US-003', 'pending'],
    ]);
    expect(byPriority(doc.items).map((item) => item.id)).toEqual(['US-001', 'US-002', 'US-003']);
    expect(doc.items[0]!.acceptanceCriteria).toHaveLength(2);
  });

  it('reads the rulebook shape with its statuses and extra fields', () => {
    const doc = readPrd(fixture('rulebook.json'));
    expect(doc.shape).toBe('rulebook');
    expect(doc.items.map((item) => [item.id, item.status, item.estimatedComplexity])).toEqual([
      ['fix-logging', 'completed', 'low'],
      ['add-auth', 'pending', 'medium'],
      ['migrate-api', 'blocked', 'high'],
    ]);
    expect(doc.items[0]!.iterationNumber).toBe(1);
    expect(doc.indent).toBe('\t');
  });

  it('keeps in-between snarktank states in `status`, but passes: true always wins', () => {
    const result = validatePrd({
      userStories: [
        { id: 'a', title: 'A', passes: false, status: 'in_iteration' },
        { id: 'b', title: 'B', passes: true, status: 'blocked' },
        { id: 'c', title: 'C', passes: false, status: 'completed' },
      ],
    });
    expect(result.ok && result.items.map((item) => item.status)).toEqual(['in_iteration', 'completed', 'pending']);
  });

  it('orders items without a priority after those with one, in file order', () => {
    const result = validatePrd({ tasks: [{ id: 'x', title: 'X' }, { id: 'y', title: 'Y', priority: 5 }, { id: 'z', title: 'Z' }] });
    expect(result.ok && byPriority(result.items).map((item) => item.id)).toEqual(['y', 'x', 'z']);
  });
});

describe('malformed prd.json', () => {
  const cases: Array<[string, string]> = [
    ['priority-string.json', '$.userStories[1].priority: expected a number, found "high"'],
    ['missing-title.json', '$.tasks[0].title: expected a non-empty string, found nothing'],
    ['bad-status.json', '$.tasks[0].status: expected one of pending, in_iteration, completed, blocked, found "done"'],
    ['duplicate-id.json', '$.tasks[2].id: expected a unique id ("t1" is also used by $.tasks[0]), found "t1"'],
    ['no-list.json', '$: expected an object with a "userStories" or "tasks" array, found an object'],
    ['criteria-not-strings.json', '$.userStories[0].acceptanceCriteria[1]: expected a string, found 42'],
    ['passes-string.json', '$.userStories[0].passes: expected true or false, found "yes"'],
    ['both-lists.json', '$: expected either "userStories" (snarktank) or "tasks" (rulebook), not both'],
    ['top-array.json', '$: expected an object with a "userStories" or "tasks" array, found an array'],
  ];
  for (const [name, detail] of cases) {
    it(`${name}: names the file and the first problem`, () => {
      const file = path.join(FIXTURES, 'schema-errors', name);
      expect(() => readPrd(file)).toThrow(PrdFormatError);
      expect(() => readPrd(file)).toThrow(`${file}: ${detail}`);
    });
  }

  it('reports a JSON syntax error with its line and column', () => {
    const file = fixture('malformed.json');
    let message = '';
    try {
      readPrd(file);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.startsWith(`${file}: not valid JSON at line 5, column 5:`)).toBe(true);
  });

  it('says so for an empty file and a missing one', () => {
    expect(() => parsePrd('  \n', 'empty.json')).toThrow('empty.json: the file is empty');
    expect(() => readPrd('/nonexistent/prd.json')).toThrow('/nonexistent/prd.json: file not found');
  });

  it('carries a hint that the file is left untouched', () => {
    expect.assertions(2);
    try {
      readPrd(path.join(FIXTURES, 'schema-errors', 'bad-status.json'));
    } catch (error) {
      expect((error as PrdFormatError).hint).toMatch(/never rewrites a malformed prd.json/);
      expect((error as PrdFormatError).exitCode).toBe(1);
    }
  });
});

describe('writing prd.json back', () => {
  it('keeps unknown fields and the original indentation', () => {
    const dir = tempDir();
    const file = path.join(dir, 'prd.json');
    copyFileSync(fixture('rulebook.json'), file);
    const doc = readPrd(file);
    updateItem(doc, doc.items[1]!, { status: 'in_iteration', iterationNumber: 2, startedAt: '2026-11-20T10:00:00.000Z' });
    const text = serializePrd(doc);
    expect(text).toContain('\n\t"owner": {');
    const data = JSON.parse(text);
    expect(data.owner).toEqual({ team: 'platform' });
    expect(data.tasks[1]).toMatchObject({ id: 'add-auth', status: 'in_iteration', iterationNumber: 2, labels: ['security'] });
  });

  it('snarktank: passes follows the status and undefined removes a field', () => {
    const doc = parsePrd(readFileSync(fixture('snarktank.json'), 'utf8'), 'prd.json');
    const story = doc.items[2]!;
    updateItem(doc, story, { status: 'blocked', lastError: 'tests failed' });
    expect(story.raw).toMatchObject({ passes: false, status: 'blocked', lastError: 'tests failed', estimate: 'S' });
    updateItem(doc, story, { status: 'completed', lastError: undefined });
    expect(story.raw.passes).toBe(true);
    expect('lastError' in story.raw).toBe(false);
    expect(serializePrd(doc).startsWith('{\n  "project"')).toBe(true);
  });
});
