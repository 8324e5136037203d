// `ralph answer [TASK "text"]`: answers a question an agent asked (the task waits for it), with or without
// a run in progress; with no words, lists the questions waiting.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../deps.ts';
import { formatDuration } from '../duration.ts';
import { Git } from '../repo/git.ts';
import { answerQuestion } from '../questions/answer.ts';
import { readQuestions } from '../questions/store.ts';
import { questionLines } from '../questions/text.ts';
import type { ParsedArgv } from './argv.ts';

/** 0 when the answer was recorded (or the list printed), 1 when no such question waits. */
export async function answerCommand(parsed: ParsedArgv, deps: Deps): Promise<number> {
  const root = (await new Git(deps.cwd).root()) ?? deps.cwd;
  const [id, text] = parsed.positionals;
  if (id === undefined) {
    const questions = readQuestions(root);
    if (questions.length === 0) {
      deps.stdout.write(`no question waits for an answer in ${root}\n`);
      return 0;
    }
    const now = deps.now();
    deps.stdout.write(`${questionLines(questions, (iso) => `${formatDuration(Math.max(0, now - Date.parse(iso)))} ago`).join('\n')}\n`);
    return 0;
  }
  const result = answerQuestion(root, id, text ?? '', { by: `ralph answer (PID ${process.pid})`, now: deps.now() });
  if (result.exitCode !== 0) {
    deps.stderr.write(`ralph: ${result.message}\n`);
    if (!existsSync(path.join(root, '.ralph'))) deps.stderr.write(`  hint: run it in the repository ralph works on\n`);
    else if (text === undefined && result.question) deps.stderr.write(`  ${result.question.taskId} asked: ${result.question.question}\n`);
    return result.exitCode;
  }
  deps.stdout.write(`${result.message}\n`);
  return 0;
}
