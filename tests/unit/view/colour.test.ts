import { describe, expect, it } from 'vitest';
import { paint, useColor } from '../../../lib/view/colour.ts';

describe('useColor', () => {
  it('colours only a TTY, without NO_COLOR, on a terminal that is not dumb', () => {
    expect(useColor({ write: () => true, isTTY: true }, { TERM: 'xterm' })).toBe(true);
    expect(useColor({ write: () => true, isTTY: false }, { TERM: 'xterm' })).toBe(false);
    expect(useColor({ write: () => true }, {})).toBe(false);
    expect(useColor({ write: () => true, isTTY: true }, { NO_COLOR: '' })).toBe(false);
    expect(useColor({ write: () => true, isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ write: () => true, isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});

describe('paint (zx chalk)', () => {
  it('paints with SGR codes when enabled, even though this process’s stdout is no TTY', () => {
    expect(process.stdout.isTTY).toBeFalsy();
    expect(paint(true, 'green', 'ok')).toBe('\u001b[32mok\u001b[39m');
    expect(paint(true, 'red', 'no')).toBe('\u001b[31mno\u001b[39m');
    expect(paint(true, 'dim', 'at')).toBe('\u001b[2mat\u001b[22m');
  });

  it('leaves the text alone when disabled', () => {
    expect(paint(false, 'green', 'ok')).toBe('ok');
  });
});
