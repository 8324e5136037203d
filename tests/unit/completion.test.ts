import { describe, expect, it } from 'vitest';
import { claimsCompletion } from '../../lib/completion.ts';

describe('claimsCompletion', () => {
  it.each([
    'Work done. <promise>COMPLETE</promise>',
    '<promise>COMPLETE</promise>',
    'All tasks are finished.\n\n<promise>COMPLETE</promise>\n',
    'Summary:\n- did things\n  <promise>COMPLETE</promise>  ',
  ])('accepts %j', (text) => expect(claimsCompletion(text)).toBe(true));

  it.each([
    'I will not output <promise>COMPLETE</promise> yet because T004 is open.',
    'I will not output <promise>COMPLETE</promise>',
    'Only print <promise>COMPLETE</promise> when every task is done',
    'The prompt says to print `<promise>COMPLETE</promise>`',
    'Printing "<promise>COMPLETE</promise>"',
    '```\n<promise>COMPLETE</promise>\n```\nstill working',
    '<promise>COMPLETE</promise> is what I will print once done. More work remains.',
    'no token here',
    '<promise>INCOMPLETE</promise>',
  ])('refuses %j', (text) => expect(claimsCompletion(text)).toBe(false));
});
