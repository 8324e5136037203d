import { describe, expect, it } from 'vitest';
import { claimsCompletion } from '../../lib/completion.ts';

const TOKEN = '<promise>COMPLETE</promise>';

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

  // Each sentence ends the answer with the token and holds exactly one of the words that make it a condition
  // or a denial, so leaving any word out of the list turns its sentence into a claim.
  it.each([
    ['once', `Once all tests pass I will output ${TOKEN}`],
    ['when', `When every task is checked off I will output ${TOKEN}`],
    ['until', `I keep working until the suite is green and then output ${TOKEN}`],
    ['unless', `Unless the review finds a problem I will output ${TOKEN}`],
    ['only', `Only a green build lets me output ${TOKEN}`],
    ['before', `Before that T004 has to pass, then I output ${TOKEN}`],
    ['if', `If the gates pass I will output ${TOKEN}`],
    ['after', `After all tests pass I will output ${TOKEN}`],
    ['as soon as', `As soon as the build is green I output ${TOKEN}`],
    ['not', `The work is not finished, so I will output ${TOKEN}`],
    ['never', `I never output ${TOKEN}`],
    ['no', `There is no ${TOKEN}`],
    ["don't", `I don't output ${TOKEN}`],
    ["won't", `I won't output ${TOKEN}`],
    ['cannot', `I cannot output ${TOKEN}`],
    ["can't", `I can't output ${TOKEN}`],
    ["shouldn't", `You shouldn't see ${TOKEN}`],
  ])('refuses a sentence with %j that ends the answer with the token', (_word, text) => {
    expect(claimsCompletion(text)).toBe(false);
    // The same answer over two lines: the last line alone is the sentence judged.
    expect(claimsCompletion(`Progress report follows.\n${text}`)).toBe(false);
  });

  // The token right after an opening quote that is never closed: the agent is quoting (the prompt, a
  // template), not claiming. One case per quote character.
  it.each([
    ['"', `The prompt tells me to print "${TOKEN}`],
    ["'", `Reply with '${TOKEN}`],
    ['`', `The marker is \`${TOKEN}`],
    ['“', `It says “${TOKEN}`],
    ['‘', `It says ‘${TOKEN}`],
    ['" and a space', `The template reads " ${TOKEN}`],
    ['" after a closed pair', `I wrote "done" and now print "${TOKEN}`],
  ])('refuses the token after an unclosed %s', (_quote, text) => expect(claimsCompletion(text)).toBe(false));

  // The counterparts: the same shapes without the condition or the open quote are claims, so the refusals
  // above come from the words and the quote, not from the sentence's form.
  it.each([
    `I will output ${TOKEN}`,
    `All tests pass and I output ${TOKEN}`,
    `Every task is checked off, so I output ${TOKEN}`,
    // A condition in an earlier sentence of the line does not reach the last one.
    `If anything broke I would say so. Every gate passed and I output ${TOKEN}`,
    `Once T003 passed, I fixed T004 too! All done ${TOKEN}`,
    `Anything left if I look again? Nothing at all ${TOKEN}`,
    // Whole words only: "Notified", "iffy", "nowhere", "Oncology", "whenever" hold none of them.
    `Notified the team, iffy tests fixed, nowhere left to go, Oncology module whenever-safe ${TOKEN}`,
    // A quote closed earlier on the line is no open quote.
    `Fixed the "quoted" path handling. ${TOKEN}`,
    // A quote that closes right before the token is no open quote either (nor an apostrophe).
    `Wrote "hello" ${TOKEN}`,
    `Renamed \`foo\` ${TOKEN}`,
    `Fixed the 'greet' helper ${TOKEN}`,
    `Checked every task' ${TOKEN}`,
    `The marker is printed: ${TOKEN}`,
  ])('accepts %j', (text) => expect(claimsCompletion(text)).toBe(true));

  it('refuses the token when a conditional sentence goes on after it', () => {
    expect(claimsCompletion(`I will output ${TOKEN} once all tests pass`)).toBe(false);
    expect(claimsCompletion(`I will output ${TOKEN} when every task is done.`)).toBe(false);
  });
});
