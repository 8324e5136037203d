// --isolate end to end: the flags reach the agent's command line (with the project's own MCP file handed
// back), and an agent whose CLI has no way to isolate runs as usual after one warning.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCalls, closeStep, FAST, makeSandbox, runRalph, scenario, seedBeads, standardEpic, type Sandbox } from './helpers.ts';
import { commitAll } from './projects.ts';

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

describe('--isolate', () => {
  it("claude starts with project and local settings only, strict MCP config and the project's .mcp.json", async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    writeFileSync(path.join(sandbox.repo, '.mcp.json'), '{"mcpServers":{}}\n');
    commitAll(sandbox, 'project MCP servers');
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--isolate', ...FAST]);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox)[0]!.argv).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--setting-sources', 'project,local', '--strict-mcp-config', '--mcp-config', path.join(sandbox.repo, '.mcp.json')]);
  });

  it('without it, none of those flags', async () => {
    sandbox = makeSandbox();
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, FAST);
    expect(result.code, result.stderr).toBe(0);
    expect(agentCalls(sandbox)[0]!.argv).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
  });

  it('the dry run names the empty settings file a run hands amp, and writes nothing; the run writes it', async () => {
    sandbox = makeSandbox({ agents: ['amp'] });
    seedBeads(sandbox, standardEpic(1));
    const settings = path.join(sandbox.repo, '.ralph', 'isolation', 'amp-settings.json');
    const dry = await runRalph(sandbox, ['--agent', 'amp', '--isolate', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(`${dry.stdout}${dry.stderr}`).toContain(`--settings-file ${settings}`);
    expect(existsSync(settings)).toBe(false);
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const run = await runRalph(sandbox, ['--agent', 'amp', '--isolate', ...FAST]);
    expect(run.code, run.stderr).toBe(0);
    expect(agentCalls(sandbox)[0]!.argv).toContain(settings);
    expect(readFileSync(settings, 'utf8')).toBe('{}\n');
  });

  it('warns once for a CLI that has no isolation (cursor) and runs it as usual', async () => {
    sandbox = makeSandbox({ agents: ['agent'] });
    seedBeads(sandbox, standardEpic(1));
    scenario(sandbox, [closeStep('ws-9w6.2')]);
    const result = await runRalph(sandbox, ['--agent', 'cursor', ...FAST], { RALPH_ISOLATE: '1' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.match(/--isolate: the cursor CLI has no way to start without the user's own configuration/g)).toHaveLength(1);
    expect(agentCalls(sandbox)[0]!.argv).toEqual(['-p', '--force', '--trust', '--output-format', 'stream-json', '/sp:next']);
  });
});
