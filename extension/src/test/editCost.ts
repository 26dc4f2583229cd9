// For `make bench` (runner.ts --edit-cost): what a routed edit costs against the agent's own edit, in
// the real Chat view, measured in one run; and our share of each round of Copilot's tool loop, read
// from the backend's trace of the same run (docs/benchmarks.md, "Rounds of Copilot's tool loop").
//
// Routed: Claude Code (its own editing handed off) edits a file through Copilot's
// replace_string_in_file, one edit per model response: each edit is one round (Copilot runs the tool,
// then sends the result in a new request). Own: the same edits by Claude Code's own Edit tool, in
// `acceptEdits` mode, in Ask mode (no VS Code edit tools offered, so Claude keeps its own editing).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Page } from 'playwright-core';
import { ChatView, runCommand } from './chatView';
import { FakeAgent } from './fakeAgent';

export const EDITS = 10;
const PAIRS = 3;
const ON_DISK_MS = 120_000;
/** The agent entry for the own edits: the fake Claude Code's, in acceptEdits mode. */
export const OWN_EDITS_AGENT = { id: 'claude-own-edits', name: 'Claude (fake API, own edits)', options: { mode: 'acceptEdits' } };

export interface EditCost {
  routedMs: number[]; // Enter -> the last of EDITS edits on disk, per run
  ownMs: number[];
  routedDoneMs: number[]; // Enter -> the answer complete
  ownDoneMs: number[];
  rounds: Round[];
}

/** One round of the routed turns, from the backend's trace (seconds). */
export interface Round {
  ours: number; // request in -> the tool result to the agent, plus the agent's next call in -> response complete
  whole: number; // request in -> the next request in
}

export async function measureEditCost(page: Page, claude: FakeAgent, claudeName: string, workspace: string, traceDir: string): Promise<EditCost> {
  const chat = new ChatView(page);
  const cost: EditCost = { routedMs: [], ownMs: [], routedDoneMs: [], ownDoneMs: [], rounds: [] };
  await chat.enableCopilotAndPick(claudeName, path.join(path.dirname(traceDir), 'edit-cost-window.png'));
  await chat.newChat('Agent');
  claude.script({ answers: 'Warm up', text: ['Warm.'] });
  await chat.send('Warm up'); // the agent runs, and its spare sessions are made
  const asks: string[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    for (const routed of pair % 2 ? [false, true] : [true, false]) {
      const name = `${routed ? 'routed' : 'own'}-${pair}.txt`;
      const file = path.join(workspace, name);
      const lines = Array.from({ length: EDITS }, (_, i) => `line ${i + 1}: old`);
      fs.writeFileSync(file, lines.join('\n') + '\n');
      const ask = `Update ${name}`;
      const edit = (i: number) => routed
        ? { name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file, oldString: `line ${i + 1}: old`, newString: `line ${i + 1}: new` } }
        : { name: 'Edit', input: { file_path: file, old_string: `line ${i + 1}: old`, new_string: `line ${i + 1}: new` } };
      claude.script(
        { answers: ask, calls: [{ name: 'Read', input: { file_path: file } }] }, // Claude Code edits only what it read
        ...Array.from({ length: EDITS }, (_, i) => ({ answers: ask, calls: [edit(i)] })),
        { answers: ask, text: ['Updated.'] },
      );
      // Every turn alike: no file open, so Copilot adds no editor context (a routed turn opens its file).
      await runCommand(page, 'View: Close All Editors');
      await chat.pick(routed ? claudeName : OWN_EDITS_AGENT.name);
      await chat.newChat(routed ? 'Agent' : 'Ask');
      const target = lines.join('\n').replace(/old/g, 'new') + '\n';
      const sent = Date.now();
      const onDisk = untilFile(file, target, ON_DISK_MS);
      const answer = await chat.send(ask);
      if (!/Updated\./.test(answer.text)) {
        throw new Error(`the ${routed ? 'routed' : 'own'} edits' turn ended with ${answer.text.slice(0, 300)}`);
      }
      const done = Date.now() - sent;
      const disk = (await onDisk) - sent;
      (routed ? cost.routedMs : cost.ownMs).push(disk);
      (routed ? cost.routedDoneMs : cost.ownDoneMs).push(done);
      if (routed) {
        asks.push(ask);
      }
    }
  }
  cost.rounds = roundsOf(traceDir, asks);
  return cost;
}

/** Resolves with Date.now() once `file` holds `text` (woken by changes in its folder); rejects after `ms`. */
function untilFile(file: string, text: string, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const watcher = fs.watch(path.dirname(file));
    const check = () => {
      if (fs.readFileSync(file, 'utf8') === text) {
        clearTimeout(timer);
        watcher.close();
        resolve(Date.now());
      }
    };
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`${path.basename(file)} did not reach its edited text within ${ms} ms`));
    }, ms);
    watcher.on('change', check);
    check();
  });
}

interface Traced {
  t: number;
  ch: string;
  dir: string;
  msg?: { id?: unknown; method?: string; params?: { requestId?: unknown }; result?: { content?: unknown } };
  raw: string;
}

/**
 * The routed turns' rounds, from the backend's trace: each request of a routed turn (its messages
 * hold the turn's question) that carried a tool result, to the next request of that turn.
 */
export function roundsOf(traceDir: string, asks: string[]): Round[] {
  const records: Traced[] = [];
  for (const name of fs.readdirSync(traceDir).filter((n) => n.endsWith('.jsonl'))) {
    for (const raw of fs.readFileSync(path.join(traceDir, name), 'utf8').split('\n')) {
      if (raw.trim()) {
        records.push({ ...JSON.parse(raw), raw });
      }
    }
  }
  records.sort((a, b) => a.t - b.t);
  const rounds: Round[] = [];
  for (const ask of asks) {
    const requests = records.filter((r) => r.ch === 'vscode' && r.dir === 'in' && r.msg?.method === 'lm/provideLanguageModelChatResponse' && r.raw.includes(JSON.stringify(ask).slice(1, -1)));
    for (let i = 0; i + 1 < requests.length; i++) {
      const [start, next] = [requests[i].t, requests[i + 1].t];
      const between = records.filter((r) => r.t >= start && r.t < next);
      // Our part going in: the request read, matched, and its tool result handed to the agent.
      const handed = between.find((r) => r.ch.startsWith('mcp ') && r.dir === 'out' && r.msg?.result?.content !== undefined);
      const complete = between.find((r) => r.ch === 'vscode' && r.msg?.method === 'lm/responseComplete' && r.msg.params?.requestId === requests[i].msg?.id);
      if (handed === undefined || complete === undefined) {
        continue; // the turn's first request (nothing to hand back), or its last
      }
      // Our part going out: the agent's next call taken and sent to VS Code as the response.
      const called = between.filter((r) => r.ch.startsWith('mcp ') && r.dir === 'in' && r.msg?.method === 'tools/call' && r.t <= complete.t).pop();
      const out = called !== undefined && called.t > handed.t ? complete.t - called.t : 0;
      rounds.push({ ours: handed.t - start + out, whole: next - start });
    }
  }
  return rounds;
}
