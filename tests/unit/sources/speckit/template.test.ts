import { readFileSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import { DEFAULT_TEMPLATE } from '../../../../lib/sources/speckit/index.ts';
import { missingPlaceholders, PLACEHOLDERS, renderTemplate } from '../../../../lib/sources/speckit/template.ts';

describe('renderTemplate', () => {
  it('substitutes every known placeholder, as often as it appears', () => {
    expect(renderTemplate('{A} and {B}, {A} again', { A: '1', B: '2' })).toBe('1 and 2, 1 again');
  });

  it('substitutes in one pass: a value that looks like a placeholder is not expanded again', () => {
    const values = { SPEC_PATH: 'specs/001/spec.md', CURRENT_TASK: 'T001 Document {SPEC_PATH} and {CURRENT_TASK} in README' };
    expect(renderTemplate('Spec: {SPEC_PATH}\nTask: {CURRENT_TASK}', values)).toBe('Spec: specs/001/spec.md\nTask: T001 Document {SPEC_PATH} and {CURRENT_TASK} in README');
  });

  it('leaves unknown names, lower-case braces and code braces alone', () => {
    expect(renderTemplate('{UNKNOWN} {spec_path} {} { SPEC_PATH } fn() { return 1 }', { SPEC_PATH: 'x' })).toBe('{UNKNOWN} {spec_path} {} { SPEC_PATH } fn() { return 1 }');
  });

  it('does not treat $ patterns in values specially', () => {
    expect(renderTemplate('{A}', { A: "cost $& and $1 and $$" })).toBe('cost $& and $1 and $$');
  });

  it('ignores inherited object keys', () => {
    expect(renderTemplate('{constructor} {TO_STRING}', {})).toBe('{constructor} {TO_STRING}');
  });
});

describe('the default template', () => {
  const template = readFileSync(DEFAULT_TEMPLATE, 'utf8');

  it('uses every placeholder of the contract', () => {
    expect(missingPlaceholders(template)).toEqual([]);
    expect(PLACEHOLDERS).toHaveLength(8);
  });

  it('states the iteration contract', () => {
    for (const phrase of [
      '## Codebase Patterns',
      'at most one user story',
      'depends on',
      'quality checks',
      '`- [X]`',
      '`feat({FEATURE_NAME}): <story id> <story title>`',
      '.specify/memory/constitution.md',
      '<promise>COMPLETE</promise>',
      'Learnings',
    ]) {
      expect(template).toContain(phrase);
    }
  });

  it('reports missing placeholders of a custom template', () => {
    expect(missingPlaceholders('Do {CURRENT_TASK} for {FEATURE_NAME}')).toEqual(['SPEC_PATH', 'PLAN_PATH', 'TASKS_PATH', 'PROGRESS_PATH', 'ITERATION_NUMBER', 'MAX_ITERATIONS']);
  });
});
