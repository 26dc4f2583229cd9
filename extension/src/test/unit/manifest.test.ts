// The settings that name programs to run (or what they run, or where installs come from) must come
// from the user, never from a workspace: a cloned repository's .vscode/settings.json could otherwise
// name the commands VS Code runs. Read from the manifest and from the code that writes settings.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const EXTENSION = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION, 'package.json'), 'utf8'));
const properties: Record<string, { scope?: string }> = manifest.contributes.configuration.properties;

/** Programs to run: agents' commands, the backend's, the Python for venvs; where agents are installed from. */
const MACHINE = ['symposium.agents', 'symposium.backend.command', 'symposium.python', 'symposium.catalogue.url'];
/** A folder the backend writes every message to: a trusted workspace may choose it. */
const MACHINE_OVERRIDABLE = ['symposium.traceDir'];

describe('settings a workspace cannot set', () => {
  it('are machine-scoped in the manifest', () => {
    for (const key of MACHINE) {
      assert.equal(properties[key]?.scope, 'machine', key);
    }
    for (const key of MACHINE_OVERRIDABLE) {
      assert.equal(properties[key]?.scope, 'machine-overridable', key);
    }
  });

  it('are never read from an untrusted workspace: the extension is off there', () => {
    // Agents act on what the folder holds (their own settings, hooks, instructions): off until the
    // user trusts it. Not declaring it does the same, silently; declared, nobody flips it unawares
    // (to run there at all, it would be 'limited' with these settings in restrictedConfigurations).
    const trust = manifest.capabilities?.untrustedWorkspaces;
    assert.equal(trust?.supported, false);
    assert.match(trust.description, /until you trust the workspace/);
  });

  it('are written to the user settings only (VS Code refuses a machine setting in a workspace)', () => {
    // Every source file, in the folders too (agents/ holds Add Agent and Manage Agents); not the tests.
    const sources = (fs.readdirSync(path.join(EXTENSION, 'src'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.startsWith(`test${path.sep}`));
    let writes = 0;
    for (const file of sources) {
      const text = fs.readFileSync(path.join(EXTENSION, 'src', file), 'utf8');
      for (const call of text.matchAll(/\.update\(\s*'([\w.]+)'[^;]*;/g)) {
        const key = `symposium.${call[1]}`;
        if (MACHINE.includes(key)) {
          writes += 1;
          assert.match(call[0], /ConfigurationTarget\.Global\b/, `${file} writes ${key} elsewhere than the user settings: ${call[0]}`);
        }
      }
    }
    assert.ok(writes >= 2, 'Add Agent and Manage Agents both write symposium.agents');
  });
});

describe('the walkthrough', () => {
  const [walkthrough] = manifest.contributes.walkthroughs ?? [];
  const commands = new Set((manifest.contributes.commands as { command: string }[]).map((c) => c.command));
  const registered = new Set(
    (fs.readdirSync(path.join(EXTENSION, 'src'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.startsWith(`test${path.sep}`))
      .flatMap((f) => [...fs.readFileSync(path.join(EXTENSION, 'src', f), 'utf8').matchAll(/registerCommand\('([\w.]+)'/g)].map((m) => m[1])),
  );

  it('guides through picking an agent, signing in and opening the Chat view with it', () => {
    assert.ok(walkthrough, 'contributes.walkthroughs');
    assert.deepEqual(walkthrough.steps.map((s: { id: string }) => s.id), ['pickAgent', 'signIn', 'openChat']);
    const linked = walkthrough.steps.map((s: { description: string }) => s.description.match(/\(command:([\w.]+)\)/)?.[1]);
    assert.deepEqual(linked, ['symposium.addAgent', 'symposium.signIn', 'symposium.openChat']);
    for (const step of walkthrough.steps) {
      assert.ok(fs.existsSync(path.join(EXTENSION, step.media.markdown)), step.media.markdown);
      for (const event of step.completionEvents) {
        const command = /^onCommand:(.+)$/.exec(event)?.[1];
        assert.ok(!command || commands.has(command), event);
      }
    }
    for (const command of linked) {
      assert.ok(commands.has(command) && registered.has(command), `${command} is contributed and registered`);
    }
  });

  it('opens on install (VS Code opens a new extension\'s walkthrough itself) and ships in the vsix', () => {
    // Not opened from activate: a command that activates the extension (Add Agent) would lose its
    // quick pick to the walkthrough's editor.
    const source = fs.readFileSync(path.join(EXTENSION, 'src', 'extension.ts'), 'utf8');
    assert.doesNotMatch(source, /openWalkthrough/);
    assert.equal(walkthrough.id, 'start');
    const ignored = fs.readFileSync(path.join(EXTENSION, '.vscodeignore'), 'utf8');
    assert.ok(!/^media/m.test(ignored), 'media/ is packaged');
  });
});
