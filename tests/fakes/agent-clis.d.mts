// Types of agent-clis.mjs, for the tests that import it.
export interface Refusal {
  stderr: string;
  exit: number;
}

export interface CliContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  uid: number | undefined;
}

export interface CliSpec {
  subcommand?: string;
  flags: Record<string, boolean>;
  unknown(flag: string): Refusal;
  check?(context: CliContext & { seen: Map<string, string | true | undefined> }): Refusal | undefined;
}

export const CLIS: Record<string, CliSpec>;

export function refusal(name: string, args: readonly string[], context: CliContext): Refusal | undefined;
