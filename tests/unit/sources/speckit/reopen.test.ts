import { describe, expect, it } from 'vitest';
import { uncheckLine } from '../../../../lib/sources/speckit/reopen.ts';

describe('uncheckLine', () => {
  it.each([
    ['- [X] T001 Build it', '- [ ] T001 Build it'],
    ['- [x] T001 Build it', '- [ ] T001 Build it'],
    ['  * [✅] **T002** nested [P]', '  * [ ] **T002** nested [P]'],
    ['1. [x] T003 numbered', '1. [ ] T003 numbered'],
    ['> - [X] T004 quoted', '> - [ ] T004 quoted'],
    ['-[X]T005 squeezed', '-[ ]T005 squeezed'],
  ])('%s', (line, expected) => {
    expect(uncheckLine(`# Tasks\n${line}\n`, 2)).toBe(`# Tasks\n${expected}\n`);
  });

  it('leaves the other lines and their line endings alone', () => {
    expect(uncheckLine('- [X] T001 a\r\n- [X] T002 b\r\n', 2)).toBe('- [X] T001 a\r\n- [ ] T002 b\r\n');
  });

  it('gives undefined for a line that is open or not a checkbox', () => {
    expect(uncheckLine('- [ ] T001 a\n', 1)).toBeUndefined();
    expect(uncheckLine('text\n', 1)).toBeUndefined();
    expect(uncheckLine('- [X] T001 a\n', 7)).toBeUndefined();
  });
});
