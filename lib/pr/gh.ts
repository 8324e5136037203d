// The gh commands --pr runs, through Deps.exec (zx's `$`, each value one word; a timeout; no prompt): find
// the branch's open pull request, create one, rewrite its body, mark it ready for review. A failure is an
// error naming the command and gh's own first line.
import type { Deps } from '../deps.ts';
import { quietEnv } from '../repo/git.ts';
import { firstLine } from './target.ts';

export interface OpenPullRequest {
  number: number;
  url: string;
  isDraft: boolean;
  body: string;
}

const GH_TIMEOUT_MS = 60_000;

export class Gh {
  constructor(
    private readonly bin: string,
    private readonly cwd: string,
    private readonly deps: Deps,
    private readonly signal?: AbortSignal,
  ) {}

  private async run(args: string[]): Promise<string> {
    const result = await this.deps.exec(this.bin, args, { cwd: this.cwd, env: quietEnv(this.deps.env), timeoutMs: GH_TIMEOUT_MS, signal: this.signal });
    if (result.exitCode !== 0) throw new Error(`gh ${args.slice(0, 2).join(' ')} failed: ${firstLine(`${result.stderr}\n${result.stdout}`, `exit ${result.exitCode}`)}`);
    return result.stdout;
  }

  /** The open pull request from `branch` of this repository (not a fork's branch of the same name). */
  async find(branch: string): Promise<OpenPullRequest | undefined> {
    const out = await this.run(['pr', 'list', '--head', branch, '--state', 'open', '--json', 'number,url,isDraft,body,isCrossRepository']);
    let listed: Array<OpenPullRequest & { isCrossRepository?: boolean }>;
    try {
      listed = JSON.parse(out) as typeof listed;
    } catch {
      throw new Error(`gh pr list answered something other than JSON: ${firstLine(out, '(nothing)')}`);
    }
    const own = listed.find((pr) => pr.isCrossRepository !== true);
    return own ? { number: own.number, url: own.url, isDraft: own.isDraft, body: own.body ?? '' } : undefined;
  }

  /** Opens a draft pull request; its URL and number (gh prints the URL). */
  async create(request: { base: string; head: string; title: string; bodyFile: string }): Promise<{ url: string; number: number }> {
    const out = await this.run(['pr', 'create', '--draft', '--base', request.base, '--head', request.head, '--title', request.title, '--body-file', request.bodyFile]);
    const url = out.split('\n').map((line) => line.trim()).find((line) => /^https?:\/\/\S+\/pull\/\d+$/.test(line));
    if (!url) throw new Error(`gh pr create printed no pull request URL: ${firstLine(out, '(nothing)')}`);
    return { url, number: Number(/\/pull\/(\d+)$/.exec(url)![1]) };
  }

  async editBody(number: number, bodyFile: string): Promise<void> {
    await this.run(['pr', 'edit', String(number), '--body-file', bodyFile]);
  }

  async ready(number: number): Promise<void> {
    await this.run(['pr', 'ready', String(number)]);
  }
}
