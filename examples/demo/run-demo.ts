// `npm run demo`: a whole ralph run in under a minute, offline. Copies the bundled example project into a
// temp git repo, seeds its beads epic (fake `bd`), puts a scripted `claude` on PATH, runs the real
// ralph.ts, then says where to look. Exits with ralph's exit code.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Plan {
  branch: string;
  epic: { id: string; title: string };
  clarify: { id: string; title: string };
  tasks: Array<{ id: string; title: string }>;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const project = path.resolve(here, '..', '..');
const tsx = path.join(project, 'node_modules', '.bin', 'tsx');
const plan = JSON.parse(readFileSync(path.join(here, 'tasks.json'), 'utf8')) as Plan;

if (!existsSync(tsx)) {
  process.stderr.write(`demo: ${tsx} is missing: run 'npm ci' in ${project} first\n`);
  process.exit(1);
}

const root = mkdtempSync(path.join(os.tmpdir(), 'ralph-demo-'));
const repo = path.join(root, 'greetings');
const bin = path.join(root, 'bin');
const home = path.join(root, 'home');
for (const dir of [bin, home]) mkdirSync(dir, { recursive: true });
cpSync(path.join(here, 'project'), repo, { recursive: true });
symlinkSync(path.join(here, 'agent.mjs'), path.join(bin, 'claude'));
symlinkSync(path.join(project, 'tests', 'fakes', 'bd'), path.join(bin, 'bd'));

// A private HOME and a fixed identity: the user's git config (signing, hooks) must not change the demo.
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('RALPH_') && !key.startsWith('GIT_'))),
  PATH: [bin, path.dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(path.delimiter),
  HOME: home,
  IS_SANDBOX: '1',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Ralph Demo',
  GIT_AUTHOR_EMAIL: 'demo@ralph.invalid',
  GIT_COMMITTER_NAME: 'Ralph Demo',
  GIT_COMMITTER_EMAIL: 'demo@ralph.invalid',
};
const git = (args: string[]): string => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
git(['init', '-q', '-b', plan.branch]);
git(['add', '-A']);
git(['commit', '-q', '-m', 'greetings: initial project']);

// The beads epic as ralph.sh expects it: a closed clarify phase, then tasks that unblock one another.
const issues = [
  { id: plan.epic.id, title: plan.epic.title, issue_type: 'epic', priority: 1 },
  { id: plan.clarify.id, title: plan.clarify.title, parent: plan.epic.id, status: 'closed', priority: 1 },
  ...plan.tasks.map((task, index) => ({
    id: task.id,
    title: task.title,
    parent: plan.epic.id,
    priority: 2,
    dependencies: index === 0 ? [] : [plan.tasks[index - 1]!.id],
  })),
];
mkdirSync(path.join(repo, '.beads'));
writeFileSync(path.join(repo, '.beads', 'fake-db.json'), `${JSON.stringify({ prefix: 'gr', issues }, null, 2)}\n`);

const args = [path.join(project, 'ralph.ts'), '--retry-delay', '200ms', '--retry-max-delay', '1s', '--max-iterations', '10'];
process.stderr.write(`demo: project copied to ${repo}\ndemo: running ralph ${args.slice(1).join(' ')}\n\n`);
const child = spawn(tsx, args, { cwd: repo, env, stdio: 'inherit' });
// Ctrl+C reaches ralph through the terminal; the demo waits for it to clean up and reports its code.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
const code = await new Promise<number>((resolve) => {
  child.on('error', (error) => {
    process.stderr.write(`demo: cannot start ralph: ${error.message}\n`);
    resolve(1);
  });
  child.on('close', (exitCode, signal) => resolve(exitCode ?? (signal === 'SIGINT' ? 130 : 143)));
});

const reportsDir = path.join(repo, '.ralph', 'reports');
const reports = existsSync(reportsDir) ? readdirSync(reportsDir).filter((name) => /\.(md|html)$/.test(name)).sort() : [];
const logs = path.join(repo, '.ralph', 'logs');
const lines = [
  '',
  `ralph exited with ${code}. Look around:`,
  `  project:  ${repo}`,
  `  logs:     ${existsSync(logs) ? path.join(logs, readdirSync(logs).sort().at(-1) ?? '') : '(none)'}`,
  ...(reports.length > 0 ? reports.map((name) => `  report:   ${path.join(reportsDir, name)}`) : ['  report:   (none written)']),
  `  history:  git -C ${repo} log --oneline`,
  '',
  ...git(['log', '--oneline']).trimEnd().split('\n').map((line) => `  ${line}`),
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exitCode = code;
