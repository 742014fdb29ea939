import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./fake-agent.ts', import.meta.url));

/** The fake agent as a child process (see fake-agent.ts), with its output lines. */
export interface AgentProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves once a line matching `pattern` was printed. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startAgentProcess(origin: string, nodeId: string, token: string, mode: 'answer' | 'hangup' = 'answer'): Promise<AgentProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, origin, nodeId], {
    env: { ...process.env, AGENT_TOKEN: token, FAKE_AGENT_MODE: mode },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let buffered = '';
  const take = (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const agent: AgentProcess = {
    child,
    lines,
    printed(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        // The bound of the wait.
        const timer = setTimeout(
          () => reject(new Error(`fake agent did not print ${pattern} within ${timeoutMs} ms; printed ${JSON.stringify(lines)}`)),
          timeoutMs,
        );
        const check = () => {
          const line = lines.find((l) => pattern.test(l));
          if (line !== undefined) {
            clearTimeout(timer);
            resolve(line);
          } else waiters.push(check);
        };
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  await agent.printed(/^ready$/);
  return agent;
}
