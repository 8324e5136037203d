import { describe, it, expect } from 'vitest';
import { buildPrdPrompt, loadPrdTemplate, renderTemplate } from '../../../../lib/sources/prd/prompt.ts';
import { extractPatterns, lastLoggedIteration, progressContext } from '../../../../lib/sources/prd/progress.ts';

describe('renderTemplate', () => {
  it('fills placeholders once and leaves unknown ones', () => {
    expect(renderTemplate('{{a}} {{b}} {{c}}', { a: '{{b}}', b: '$& x' })).toBe('{{b}} $& x {{c}}');
  });
});

describe('buildPrdPrompt', () => {
  const base = {
    template: loadPrdTemplate(),
    iteration: 7,
    maxIterations: 16,
    prdPath: 'prd.json',
    progressPath: 'progress.txt',
    item: { id: 'US-003', title: 'Add priority selector', acceptanceCriteria: [], attempts: 0 },
    patterns: '',
    progress: '',
    commits: [],
    gates: [],
  };

  it('fills every placeholder of the shipped template, with defaults for empty parts', () => {
    const prompt = buildPrdPrompt(base);
    expect(prompt).not.toMatch(/\{\{\w+\}\}/);
    expect(prompt).toContain('# Ralph iteration 7 of 16');
    expect(prompt).toContain('- Priority: unset; estimated complexity: unknown');
    expect(prompt).toContain('(no description)');
    expect(prompt).toContain('- (none listed: the title and description are the whole requirement)');
    expect(prompt).toContain('(none configured: run the checks this project uses)');
    expect(prompt).toContain('(none recorded yet)');
    expect(prompt).toContain('(no progress recorded yet)');
    expect(prompt).toContain('(no commits yet)');
    expect(prompt).toContain('## Ralph Report');
  });
});

describe('progress.txt helpers', () => {
  const log = '# Ralph Progress Log\n\n## Codebase Patterns\n- a\n### Sub\n- b\n\n---\n\n## 2026-11-20 10:00 - US-1 - iteration 2: completed\n---\n## 2026-11-20 11:00 - US-2 - iteration 12: partial\n---\n';

  it('extracts the patterns section and the last logged iteration', () => {
    expect(extractPatterns(log)).toBe('## Codebase Patterns\n- a\n### Sub\n- b');
    expect(lastLoggedIteration(log)).toBe(12);
    expect(lastLoggedIteration('')).toBe(0);
  });

  it('splits patterns from the recent entries', () => {
    const { patterns, recent } = progressContext(log);
    expect(patterns).toBe('- a\n### Sub\n- b');
    expect(recent).not.toContain('Codebase Patterns');
    expect(recent).toContain('iteration 12: partial');
  });
});
